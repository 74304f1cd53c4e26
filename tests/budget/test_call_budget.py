"""CallBudget on Redis and PostgreSQL: both bounds, the draw before sending, seeding, errors."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sports_posts import (
    AsyncSportsPosts,
    BudgetDraw,
    BudgetExhaustedError,
    CallBudget,
    CoordinationError,
    ParameterError,
    SportsPosts,
)
from sports_posts._budget import LUA_MONTH_OF, Draw
from sports_posts.sandbox import Sandbox
from support.servers import free_port


@pytest.fixture(scope="module")
def sandbox() -> Any:
    with Sandbox(seed=5, posts=50) as sb:
        yield sb


def served(sb: Any) -> int:
    return int(sb.accounts.get(sb.api_key).calls)


def test_the_minute_bound_refuses_the_call_past_it(store_url: str, key: str) -> None:
    budget = CallBudget(store_url, per_minute=3, key=key)
    draws = [budget.try_acquire() for _ in range(7)]
    # The draws may straddle a minute boundary; within one minute never more than 3 are
    # granted, and one of the two minutes saw at least 4 draws: one was refused.
    by_minute: dict[int, int] = {}
    for d in draws:
        by_minute[d.now_ms // 60000] = by_minute.get(d.now_ms // 60000, 0) + d.granted
    assert all(n <= 3 for n in by_minute.values())
    refused = [d for d in draws if not d.granted]
    assert refused
    with pytest.raises(BudgetExhaustedError) as info:
        raise refused[0].refusal(3, None)
    assert info.value.bound == "per_minute" and info.value.limit == 3
    assert 0 < info.value.retry_after <= 60
    assert info.value.refills_at.second == 0 and "per_minute=3" in str(info.value)
    budget.close()


def test_the_monthly_cap_is_shared_by_two_budget_objects(store_url: str, key: str) -> None:
    first, second = CallBudget(store_url, per_month=2, key=key), CallBudget(store_url, per_month=2, key=key)
    first.acquire()
    second.acquire()
    with pytest.raises(BudgetExhaustedError) as info:
        first.acquire()
    assert info.value.bound == "per_month"
    refills = info.value.refills_at
    assert refills.day == 1 and refills.hour == 0 and refills > datetime.now(timezone.utc)
    first.close()
    second.close()


def test_seed_sets_the_month_to_what_the_account_already_used(store_url: str, key: str, sandbox: Any) -> None:
    budget = CallBudget(store_url, per_month=served(sandbox) + 2, key=key)
    with SportsPosts(api_key=sandbox.api_key, base_url=sandbox.base_url, budget=budget) as client:
        before = served(sandbox)
        draw = budget.seed(client.account.information())  # free: no draw, not counted
        assert served(sandbox) == before and draw.month_used == before
        client.posts.list(limit=1)
        client.posts.list(limit=1)
        with pytest.raises(BudgetExhaustedError):
            client.posts.list(limit=1)
        assert served(sandbox) == before + 2
        assert client.calls == 3  # two sent, plus the free information call; the refusal is not counted
        assert budget.seed(0).month_used == before + 2  # a seed never lowers the count
    budget.close()


def test_a_refused_draw_sends_nothing(store_url: str, key: str, sandbox: Any) -> None:
    budget = CallBudget(store_url, per_minute=1, per_month=1, key=key)
    with SportsPosts(api_key=sandbox.api_key, base_url=sandbox.base_url, budget=budget) as client:
        client.posts.list(limit=1)
        before = served(sandbox)
        with pytest.raises(BudgetExhaustedError):
            client.with_options(max_retries=3).posts.list(limit=1)  # with_options keeps the budget
        assert served(sandbox) == before and client.calls == 1
    budget.close()


@pytest.mark.anyio
async def test_the_async_client_draws_before_sending(store_url: str, key: str, sandbox: Any) -> None:
    budget = CallBudget(store_url, per_month=1, key=key)
    async with AsyncSportsPosts(api_key=sandbox.api_key, base_url=sandbox.base_url, budget=budget) as client:
        await client.posts.list(limit=1)
        before = served(sandbox)
        with pytest.raises(BudgetExhaustedError):
            await client.posts.list(limit=1)
        assert served(sandbox) == before
        assert (await budget.seed_async(0)).month_used == 1
    await budget.aclose()


def _waits_until_refused(redis_url: str, key: str) -> Optional[list[float]]:
    """Spend the minute, then ask again: the waits the budget made before it refused, or None
    when the store's minute turned after the other worker's last draw (the budget then rightly
    took the new minute's call)."""
    slept: list[float] = []
    draws: list[BudgetDraw] = []
    other = CallBudget(redis_url, per_minute=1, key=key)

    def sleep(seconds: float) -> None:
        # The fake sleep does not move the store's clock, and another worker of the fleet
        # takes a minute that refills meanwhile: the budget stays spent, and it waits again
        # only while the waits add up to no more than max_wait.
        slept.append(seconds)
        draws.append(other.try_acquire())

    budget = CallBudget(redis_url, per_minute=1, key=key, max_wait=60, sleep=sleep)
    try:
        budget.acquire()
        try:
            budget.acquire()
        except BudgetExhaustedError:
            return slept
        after = other.try_acquire()
        assert draws and after.now_ms // 60_000 > draws[-1].now_ms // 60_000, "a second call in a spent minute"
        return None
    finally:
        budget.close()
        other.close()


def test_max_wait_waits_out_the_minute_with_the_injected_sleep(redis_url: str, key: str) -> None:
    # A try that met the minute's turn is made again: the next starts a minute from that turn.
    for attempt in range(2):
        slept = _waits_until_refused(redis_url, f"{key}:{attempt}")
        if slept is not None:
            assert slept and all(0 < s <= 60 for s in slept) and sum(slept) <= 60
            return
    pytest.fail("a minute turned during each of two tries made a minute apart")


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"per_minute": 0}, {"per_month": -1}, {"per_minute": True}, {"per_minute": 1, "key": ""},
     {"per_minute": 1, "max_wait": -1}],
)
def test_bad_arguments_are_parameter_errors(redis_url: str, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ParameterError):
        CallBudget(redis_url, **kwargs)


def test_a_store_that_is_neither_redis_nor_postgres_is_refused() -> None:
    with pytest.raises(ParameterError, match="redis:// or postgresql://"):
        CallBudget("mysql://u:hunter22secret@h/db", per_minute=1)
    with pytest.raises(ParameterError):
        CallBudget(object(), per_minute=1)  # type: ignore[arg-type]


def test_an_unreachable_store_is_a_typed_error_without_the_password(redis_url: str) -> None:
    port = free_port()
    for url in (f"redis://:s3cret-pass-word@127.0.0.1:{port}/0", f"postgresql://test:s3cret-pass-word@127.0.0.1:{port}/x"):
        budget = CallBudget(url, per_minute=1)
        assert "s3cret-pass-word" not in repr(budget)
        with pytest.raises(CoordinationError) as info:
            budget.acquire()
        assert "s3cret-pass-word" not in str(info.value)


def test_the_refusal_names_the_monthly_cap_before_the_minute() -> None:
    # Both spent: the month is what matters (waiting a minute would not help).
    draw = Draw(granted=False, now_ms=1_795_000_000_000, month=202612, minute_used=5, month_used=9)
    error = draw.refusal(5, 9)
    assert error.bound == "per_month" and error.refills_at == datetime(2027, 1, 1, tzinfo=timezone.utc)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(moment=st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2200, 12, 31, 23, 59, 59)))
def test_the_lua_month_is_the_calendar_month_in_utc(redis_client: Any, moment: datetime) -> None:
    # The Redis budget computes its month in Lua from the server's TIME: it must agree with
    # the calendar everywhere, leap years and month ends included.
    secs = int(moment.replace(tzinfo=timezone.utc).timestamp())
    month = redis_client.eval(LUA_MONTH_OF + "return month_of(tonumber(ARGV[1]))", 0, secs)
    assert month == moment.year * 100 + moment.month


def test_a_client_whose_budget_store_is_down_sends_nothing(sandbox: Any) -> None:
    budget = CallBudget(f"redis://127.0.0.1:{free_port()}/0", per_minute=5)
    with SportsPosts(api_key=sandbox.api_key, base_url=sandbox.base_url, budget=budget) as client:
        before = served(sandbox)
        with pytest.raises(CoordinationError):
            client.posts.list(limit=1)  # fails closed: an uncounted call is not sent
        assert served(sandbox) == before and client.calls == 0
        client.account.information()  # free: never draws, so the store is not needed
