"""The retry policy: what is retried, how many times, and how long each wait is."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest
import respx

import sports_posts as sp
from sports_posts._transport import MAX_RETRY_AFTER, backoff, parse_retry_after
from tests.runner import Runner

from .bodies import INFO
from .conftest import API_KEY, BASE_URL, page, post

OK = httpx.Response(200, json=page([post()]))


def test_transient_failures_are_retried_until_success(
    runner: Runner, api: respx.MockRouter, retry_sleeps: list[float]
) -> None:
    route = api.get("/posts").mock(side_effect=[httpx.Response(500), httpx.Response(503), OK])
    items = runner.run(lambda c: c.posts.list())
    assert [p.id for p in items] == ["1"]
    assert route.call_count == 3
    assert len(retry_sleeps) == 2


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_retryable_statuses_give_up_after_max_retries(
    runner: Runner, api: respx.MockRouter, retry_sleeps: list[float], status: int
) -> None:
    route = api.get("/posts").respond(status)
    with pytest.raises(sp.APIStatusError) as info:
        runner.run(lambda c: c.posts.list(), max_retries=3)
    assert info.value.status_code == status
    assert route.call_count == 4
    assert len(retry_sleeps) == 3


@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 410, 418, 501])
def test_other_statuses_are_never_retried(
    runner: Runner, api: respx.MockRouter, retry_sleeps: list[float], status: int
) -> None:
    route = api.get("/posts").respond(status, json={"ok": False, "error_code": "X", "error_message": "no"})
    with pytest.raises(sp.APIStatusError):
        runner.run(lambda c: c.posts.list(), max_retries=5)
    assert route.call_count == 1
    assert retry_sleeps == []


@pytest.mark.parametrize(
    "error", [httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), httpx.RemoteProtocolError("reset")]
)
def test_connection_errors_and_timeouts_are_retried(
    runner: Runner, api: respx.MockRouter, error: Exception
) -> None:
    route = api.get("/account/information").mock(
        side_effect=[error, httpx.Response(200, json=INFO)]
    )
    info = runner.run(lambda c: c.account.information())
    assert info.company.name == INFO["company"]["name"]
    assert route.call_count == 2


def test_max_retries_zero_sends_once(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/posts").respond(503)
    with pytest.raises(sp.InternalServerError):
        runner.run(lambda c: c.posts.list(), max_retries=0)
    assert route.call_count == 1


def test_backoff_grows_exponentially_with_capped_jitter(
    runner: Runner, api: respx.MockRouter, retry_sleeps: list[float]
) -> None:
    api.get("/posts").respond(500)
    with pytest.raises(sp.InternalServerError):
        runner.run(lambda c: c.posts.list(), max_retries=6)
    bases = [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert len(retry_sleeps) == 6
    for wait, base in zip(retry_sleeps, bases):
        assert base <= wait <= min(8.0, base + 0.5)


def test_backoff_jitter_varies() -> None:
    assert len({backoff(2) for _ in range(50)}) > 1


def test_retry_after_seconds_is_honoured(runner: Runner, api: respx.MockRouter, retry_sleeps: list[float]) -> None:
    api.get("/posts").mock(
        side_effect=[httpx.Response(429, headers={"Retry-After": "7"}, json={"ok": False, "error_code": "RATE_LIMITED"}), OK]
    )
    runner.run(lambda c: c.posts.list())
    assert retry_sleeps == [7.0]


def test_retry_after_http_date_is_honoured(runner: Runner, api: respx.MockRouter, retry_sleeps: list[float]) -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    api.get("/posts").mock(side_effect=[httpx.Response(503, headers={"Retry-After": when}), OK])
    runner.run(lambda c: c.posts.list())
    assert len(retry_sleeps) == 1
    assert 25 <= retry_sleeps[0] <= 30


def test_long_retry_after_is_not_slept_but_raised(
    runner: Runner, api: respx.MockRouter, retry_sleeps: list[float]
) -> None:
    route = api.get("/posts").respond(
        429, headers={"Retry-After": "86400"}, json={"ok": False, "error_code": "RATE_LIMITED", "error_message": "quota"}
    )
    with pytest.raises(sp.RateLimitError) as info:
        runner.run(lambda c: c.posts.list(), max_retries=5)
    assert info.value.retry_after == 86400
    assert route.call_count == 1
    assert retry_sleeps == []


def test_with_options_changes_retries_and_shares_the_counter(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/posts").respond(503)

    def call(c: object) -> object:
        fast = c.with_options(max_retries=0)  # type: ignore[attr-defined]
        return fast.posts.list()

    with pytest.raises(sp.InternalServerError):
        runner.run(call, max_retries=4)
    assert route.call_count == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        ("1.5", 1.5),
        ("-3", 0.0),
        ("Thu, 01 Jan 1970 00:01:40 GMT", 40.0),
        ("Thu, 01 Jan 1970 00:00:10 GMT", 0.0),
        ("soon", None),
        ("", None),
        (None, None),
        ("nan", None),
        ("Mon, 01 Jan 99999999999999999999 00:00:00 GMT", None),  # past the calendar: no hint
    ],
)
def test_parse_retry_after_both_forms(value: object, expected: object) -> None:
    assert parse_retry_after(value, now=60.0) == expected  # type: ignore[arg-type]


def test_retry_after_cap_is_about_a_minute() -> None:
    assert 30 <= MAX_RETRY_AFTER <= 120


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_an_async_retry_waits_on_the_loop_that_runs_the_call(api: respx.MockRouter, backend: str) -> None:
    # Failed on trio (through anyio) when the wait was asyncio.sleep: trio refuses it. The
    # client's own wait (no sleep= given), for Retry-After: 0 seconds.
    import anyio

    route = api.get("/account/information").mock(
        side_effect=[httpx.Response(503, headers={"Retry-After": "0"}), httpx.Response(200, json=INFO)]
    )

    async def main() -> None:
        async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
            await client.account.information()

    anyio.run(main, backend=backend)
    assert route.call_count == 2
