"""Generated scenarios: arrivals, indexing delays up to 100 s, posts arriving while a
cycle pages, 429s, 500s and deleted ``since_id`` posts. Every post exactly once, each
batch oldest first, sync and async."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sports_posts import AsyncSportsPosts, Post, SportsPosts
from support.fake_service import BASE_URL, T0, FakeClock, FakePostsService

from .conftest import TimeHarness, assert_oldest_first, make_async_poller, make_poller


@dataclass
class Scenario:
    posts: list[tuple[float, float, str]]  # created (s after T0), indexing delay, league
    interval: float
    limit: int
    seconds_per_request: float
    failures: dict[int, tuple[int, str, str]]  # request number -> scripted answer
    deletions: list[int]  # at the n-th wait, delete the k-th delivered post (k modulo)


posts_strategy = st.lists(
    st.tuples(
        st.integers(1, 1200).map(lambda x: x / 2),  # created, half-second grid: ties happen
        st.sampled_from([0.0, 0.0, 1.0, 5.0, 30.0, 60.0, 100.0]),  # indexing delay
        st.sampled_from(["NFL", "NFL", "NBA"]),
    ),
    min_size=1,
    max_size=30,
)
failure_strategy = st.dictionaries(
    st.integers(1, 40),
    st.sampled_from(
        [
            (429, "RATE_LIMITED", "4"),
            (429, "RATE_LIMITED", ""),
            (500, "INTERNAL_ERROR", ""),
            (503, "UNAVAILABLE", ""),
        ]
    ),
    max_size=5,
)
scenarios = st.builds(
    Scenario,
    posts=posts_strategy,
    interval=st.sampled_from([20.0, 45.0, 60.0, 90.0]),
    limit=st.integers(2, 8),
    seconds_per_request=st.sampled_from([0.0, 0.5, 1.0]),
    failures=failure_strategy,
    deletions=st.lists(st.integers(0, 29), max_size=6),
)


def build_world(scenario: Scenario) -> tuple[FakeClock, FakePostsService, TimeHarness, set[str]]:
    clock = FakeClock()
    service = FakePostsService(clock, seconds_per_request=scenario.seconds_per_request)
    expected = set()
    for n, (created, delay, league) in enumerate(scenario.posts):
        service.publish(f"p{n:02d}", created, delay=delay, league=league)
        if league == "NFL":
            expected.add(f"p{n:02d}")

    def script(svc: FakePostsService, query: dict[str, str]) -> None:
        failure = scenario.failures.get(len(svc.requests))
        if failure is not None:
            status, code, retry_after = failure
            svc.fail_next(status, code, retry_after=retry_after or None)

    service.before_answer = script
    harness = TimeHarness(clock, until=1300.0)
    return clock, service, harness, expected


def delete_some(
    scenario: Scenario, service: FakePostsService, harness: TimeHarness, delivered: list[Post]
) -> None:
    """Delete already-delivered posts between cycles: some are the since_id hint."""
    step = len(harness.sleeps)
    if step < len(scenario.deletions) and delivered:
        service.delete(delivered[scenario.deletions[step] % len(delivered)].id)


def check(batches: list[list[Post]], expected: set[str]) -> None:
    delivered = [p.id for b in batches for p in b]
    assert len(delivered) == len(set(delivered)), "a post was delivered twice"
    assert set(delivered) == expected, "a post was lost (or one of another league delivered)"
    assert_oldest_first(batches)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios)
def test_every_post_exactly_once_oldest_first(scenario: Scenario) -> None:
    clock, service, harness, expected = build_world(scenario)
    delivered: list[Post] = []
    sleep = harness.sleep

    def sleep_and_delete(seconds: float) -> None:
        delete_some(scenario, service, harness, delivered)
        sleep(seconds)

    harness.sleep = sleep_and_delete  # type: ignore[method-assign]
    http = httpx.Client(transport=httpx.MockTransport(service.handler))
    with SportsPosts(api_key="sk_test_poller", base_url=BASE_URL, http_client=http) as client:
        poller = make_poller(
            client,
            harness,
            since=T0,
            interval=scenario.interval,
            limit=scenario.limit,
            leagues="NFL",
        )
        batches = []
        for batch in poller:
            batches.append(batch)
            delivered.extend(batch)
    http.close()
    check(batches, expected)
    assert clock.now >= T0 + timedelta(seconds=1300)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios)
def test_async_every_post_exactly_once_oldest_first(scenario: Scenario) -> None:
    import anyio

    async def run() -> list[list[Post]]:
        _, service, harness, expected = build_world(scenario)
        delivered: list[Post] = []
        sleep = harness.sleep

        def sleep_and_delete(seconds: float) -> None:
            delete_some(scenario, service, harness, delivered)
            sleep(seconds)

        harness.sleep = sleep_and_delete  # type: ignore[method-assign]
        http = httpx.AsyncClient(transport=httpx.MockTransport(service.handler))
        async with AsyncSportsPosts(api_key="sk_test_poller", base_url=BASE_URL, http_client=http) as client:
            poller = make_async_poller(
                client,
                harness,
                since=T0,
                interval=scenario.interval,
                limit=scenario.limit,
                leagues="NFL",
            )
            batches = []
            async for batch in poller:
                batches.append(batch)
                delivered.extend(batch)
        await http.aclose()
        check(batches, expected)
        return batches

    anyio.run(run)


class Crash(Exception):
    """The consumer dies while handling a batch."""


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios, st.integers(1, 6))
def test_a_restart_after_a_crash_repeats_at_most_the_batch_in_hand(
    scenario: Scenario, crash_at: int
) -> None:
    from sports_posts import MemoryCheckpoint

    clock, service, harness, expected = build_world(scenario)
    checkpoint = MemoryCheckpoint()  # outlives the "process", as a file would
    runs: list[list[list[Post]]] = [[], []]
    http = httpx.Client(transport=httpx.MockTransport(service.handler))
    with SportsPosts(api_key="sk_test_poller", base_url=BASE_URL, http_client=http) as client:
        for run, crash in ((0, crash_at), (1, None)):
            poller = make_poller(
                client,
                harness,
                since=T0,
                interval=scenario.interval,
                limit=scenario.limit,
                leagues="NFL",
                checkpoint=checkpoint,
            )
            try:
                for batch in poller:
                    runs[run].append(batch)
                    if len(runs[run]) == crash:
                        raise Crash
            except Crash:
                pass
    http.close()
    crashed = len(runs[0]) == crash_at
    handled = runs[0][:-1] if crashed else runs[0]  # the batch in hand at the crash was not
    first = [p.id for b in runs[0] for p in b]
    second = [p.id for b in runs[1] for p in b]
    assert {p.id for b in handled for p in b} | set(second) == expected  # nothing lost
    repeated = set(first) & set(second)
    if crashed:  # only the batch in hand may repeat
        assert repeated <= {p.id for p in runs[0][-1]}
    else:  # the first run ended normally (stopped): nothing repeats
        assert repeated == set()
    assert len(second) == len(set(second)) and len(first) == len(set(first))
    assert_oldest_first(runs[0] + runs[1])
