"""The pollers under a lease and a budget: standby, a lost lease stops before delivering or
saving, the budget's refusals waited out with the poller's own (fake) sleep."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from sports_posts import (
    AsyncPoller,
    AsyncSportsPosts,
    CallBudget,
    MemoryCheckpoint,
    ParameterError,
    Poller,
    RedisCheckpoint,
    SportsPosts,
)
from sports_posts._stores import runner_for
from sports_posts.polling import Lease, LeaseLostError, PostgresCheckpoint
from support.fake_service import BASE_URL, FakeClock, FakePostsService
from tests.polling.conftest import TimeHarness


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(clock: FakeClock) -> FakePostsService:
    service = FakePostsService(clock)
    for i in range(3):
        service.publish(f"p{i}", created=-30 + i)
    return service


@pytest.fixture
def client(service: FakePostsService) -> Iterator[SportsPosts]:
    http = httpx.Client(transport=httpx.MockTransport(service.handler))
    with SportsPosts(api_key="sk_test_secret", base_url=BASE_URL, http_client=http) as c:
        yield c


@pytest.fixture
async def aclient(service: FakePostsService) -> AsyncIterator[AsyncSportsPosts]:
    http = httpx.AsyncClient(transport=httpx.MockTransport(service.handler))
    async with AsyncSportsPosts(api_key="sk_test_secret", base_url=BASE_URL, http_client=http) as c:
        yield c


def fenced(store_url: str, key: str) -> Any:
    return RedisCheckpoint(store_url, key=key) if store_url.startswith("redis") else PostgresCheckpoint(store_url, key=key)


def test_a_lease_needs_a_fenced_checkpoint(client: SportsPosts, redis_url: str, key: str) -> None:
    with pytest.raises(ParameterError, match="fencing tokens"):
        Poller(client, lease=Lease(redis_url, key=key), checkpoint=MemoryCheckpoint())
    with pytest.raises(ParameterError, match="must be a Lease"):
        Poller(client, lease="redis://x", checkpoint=RedisCheckpoint(redis_url, key=key))  # type: ignore[arg-type]


def test_a_standby_waits_then_takes_over_when_the_holder_releases(
    client: SportsPosts, clock: FakeClock, store_url: str, key: str
) -> None:
    holder = Lease(store_url, key=key, ttl=30)
    assert holder.acquire() is not None
    harness = TimeHarness(clock)
    lease = Lease(store_url, key=key, ttl=30)
    standby = Poller(client, lease=lease, checkpoint=fenced(store_url, key), clock=clock,
                     sleep=harness.sleep, rand=harness.rand, interval=60)
    harness.attach(standby)
    real_sleep = harness.sleep

    def sleep(seconds: float) -> None:  # the holder leaves during the standby's third wait
        real_sleep(seconds)
        if len(harness.sleeps) == 3:
            holder.release()

    standby._sleep = sleep
    batch = next(standby)
    assert [p.id for p in batch] == ["p0", "p1", "p2"]
    assert harness.sleeps[:3] == [10.0, 10.0, 10.0]  # standby retries every ttl / 3
    assert lease.token is not None and client.calls == 1  # no call was spent while standing by
    standby.close()
    assert lease.token is None  # released on close: the next standby need not wait the TTL


def test_a_poller_that_lost_its_lease_stops_before_saving(
    client: SportsPosts, clock: FakeClock, store_url: str, key: str
) -> None:
    harness = TimeHarness(clock)
    lease = Lease(store_url, key=key, ttl=30)
    checkpoint = fenced(store_url, key)
    p = harness.attach(Poller(client, lease=lease, checkpoint=checkpoint, clock=clock, sleep=harness.sleep,
                              rand=harness.rand, interval=60))
    first = next(p)
    start = fenced(store_url, key).load()
    # The lease expires while the consumer holds the batch, and another poller takes it.
    old = lease.token or 0
    lease.release()
    assert (Lease(store_url, key=key, ttl=30).acquire() or 0) > old
    with pytest.raises(LeaseLostError, match="stopped before delivering or saving") as lost:
        next(p)
    assert lost.value.store_failed is False  # another poller took it: not a store failure
    assert first and fenced(store_url, key).load() == start  # the batch in hand was not saved
    p.close()  # nothing left to commit: close does not try
    assert fenced(store_url, key).load() == start


def test_a_store_failure_on_renewal_is_a_lost_lease(client: SportsPosts, clock: FakeClock, redis_url: str, key: str) -> None:
    harness = TimeHarness(clock)
    lease = Lease(redis_url, key=key, ttl=30)
    p = harness.attach(Poller(client, lease=lease, checkpoint=RedisCheckpoint(redis_url, key=key), clock=clock,
                              sleep=harness.sleep, rand=harness.rand))
    next(p)
    lease._runner = runner_for("redis://127.0.0.1:1/0", owner="Lease")  # a partition from redis
    with pytest.raises(LeaseLostError, match="the store failed") as lost:
        next(p)
    assert lost.value.store_failed is True  # a worker says "the store is down", not "taken over"
    import pickle

    assert pickle.loads(pickle.dumps(lost.value)).store_failed is True  # across a process boundary


def test_the_poller_waits_out_a_spent_budget_with_its_own_sleep(
    service: FakePostsService, clock: FakeClock, redis_url: str, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    budget = CallBudget(redis_url, per_minute=1, key=key)
    other = CallBudget(redis_url, per_minute=1, key=key)
    http = httpx.Client(transport=httpx.MockTransport(service.handler))
    harness = TimeHarness(clock, max_sleeps=3)
    with SportsPosts(api_key="sk_test_secret", base_url=BASE_URL, http_client=http, budget=budget) as client:
        p = harness.attach(Poller(client, clock=clock, sleep=harness.sleep, rand=harness.rand, interval=1))
        next(p)
        sent = len(service.requests)

        def sleep(seconds: float) -> None:
            harness.sleeps.append(seconds)
            other.try_acquire()  # another worker takes the minute if it turned meanwhile
            if len(harness.sleeps) >= 2:
                p.stop()

        p._sleep = sleep
        with caplog.at_level(logging.WARNING, logger="sports_posts.polling"):
            assert list(p) == []
    # The interval, then the budget's refill wait; the refused fetch was never sent.
    assert 0 < harness.sleeps[1] <= 60 and len(service.requests) == sent
    assert p.calls == 1 and "call budget spent (per_minute)" in caplog.text
    other.close()


@pytest.mark.anyio
async def test_the_async_poller_holds_and_loses_a_lease(
    aclient: AsyncSportsPosts, clock: FakeClock, store_url: str, key: str
) -> None:
    harness = TimeHarness(clock)
    lease = Lease(store_url, key=key, ttl=30)
    p = AsyncPoller(aclient, lease=lease, checkpoint=fenced(store_url, key), clock=clock, sleep=harness.asleep,
                    rand=harness.rand)
    harness.attach(p)
    assert [x.id for x in await p.__anext__()] == ["p0", "p1", "p2"]
    assert Lease(store_url, key=key).acquire() is None  # held
    await lease.release_async()
    assert Lease(store_url, key=key, ttl=30).acquire() is not None
    with pytest.raises(LeaseLostError):
        await p.__anext__()
    await p.aclose()
