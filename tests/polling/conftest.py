"""Fixtures of the polling tests: the fake service, clients over it, and a fake-time harness."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta
from typing import Any, Callable, Optional, Union

import pytest

from sports_posts import AsyncPoller, AsyncSportsPosts, Poller, Post, SportsPosts
from support.fake_service import BASE_URL, T0, FakeClock, FakePostsService
from tests.stacks import STACKS, mock_client


class TimeHarness:
    """The poller's clock and sleep: sleeping advances the fake clock; past ``until``
    (seconds after T0) the poller is stopped. Nothing ever sleeps for real."""

    def __init__(
        self, clock: FakeClock, *, until: float = 3600.0, max_sleeps: int = 20_000
    ) -> None:
        self.clock = clock
        self.until = T0 + timedelta(seconds=until)
        self.sleeps: list[float] = []
        self.max_sleeps = max_sleeps
        self.poller: Optional[Union[Poller, AsyncPoller]] = None

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        assert len(self.sleeps) <= self.max_sleeps, "the poller does not stop"
        self.clock.advance(seconds)
        if self.clock.now >= self.until and self.poller is not None:
            self.poller.stop()

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)

    def rand(self) -> float:
        return 0.5

    def attach(self, poller: Any) -> Any:
        self.poller = poller
        return poller


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(clock: FakeClock) -> FakePostsService:
    return FakePostsService(clock)


@pytest.fixture(params=STACKS)
def stack(request: pytest.FixtureRequest) -> str:
    """The HTTP stack the poller's client runs on: every poller test runs on both."""
    return str(request.param)


@pytest.fixture
def client(service: FakePostsService, stack: str) -> Iterator[SportsPosts]:
    http = mock_client(service.handler, stack)
    with SportsPosts(api_key="sk_test_secret", base_url=BASE_URL, http_client=http) as c:
        yield c
    http.close()


@pytest.fixture
async def aclient(service: FakePostsService, stack: str) -> AsyncIterator[AsyncSportsPosts]:
    http = mock_client(service.handler, stack, asynchronous=True)
    async with AsyncSportsPosts(api_key="sk_test_secret", base_url=BASE_URL, http_client=http) as c:
        yield c
    await http.aclose()


@pytest.fixture
def harness(clock: FakeClock) -> TimeHarness:
    return TimeHarness(clock)


def make_poller(
    client: SportsPosts, harness: TimeHarness, *, clock: Optional[Callable[[], datetime]] = None, **kwargs: Any
) -> Poller:
    """``client.posts.poll`` semantics with the harness's clock (or ``clock``, a skewed
    reading of it), sleep and jitter."""
    options = {
        k: kwargs.pop(k)
        for k in ("since", "interval", "checkpoint", "lookback", "max_calls_per_day")
        if k in kwargs
    }
    poller = Poller(
        client,
        filters=kwargs,  # type: ignore[arg-type]  # the tests pass what they test, typos included
        clock=clock or harness.clock,
        sleep=harness.sleep,
        rand=harness.rand,
        **options,
    )
    return harness.attach(poller)  # type: ignore[no-any-return]


def make_async_poller(
    client: AsyncSportsPosts, harness: TimeHarness, *, clock: Optional[Callable[[], datetime]] = None, **kwargs: Any
) -> AsyncPoller:
    options = {
        k: kwargs.pop(k)
        for k in ("since", "interval", "checkpoint", "lookback", "max_calls_per_day")
        if k in kwargs
    }
    poller = AsyncPoller(
        client,
        filters=kwargs,  # type: ignore[arg-type]  # as above
        clock=clock or harness.clock,
        sleep=harness.asleep,
        rand=harness.rand,
        **options,
    )
    return harness.attach(poller)  # type: ignore[no-any-return]


def ids(batches: list[list[Post]]) -> list[str]:
    return [p.id for batch in batches for p in batch]


def assert_oldest_first(batches: list[list[Post]]) -> None:
    for batch in batches:
        assert batch, "an empty batch was yielded"
        keys = [(p.created_at, p.id) for p in batch]
        assert keys == sorted(keys)
