"""The poller against the stateful fake of GET /posts: the guarantees of the issue, sync and async."""

from __future__ import annotations

import gc
import logging
from datetime import timedelta

import httpx
import pytest

from sports_posts import (
    AsyncSportsPosts,
    AuthenticationError,
    FileCheckpoint,
    InvalidParameterError,
    MemoryCheckpoint,
    ParameterError,
    PaymentRequiredError,
    PermissionDeniedError,
    Poller,
    PollState,
    SinceIdNotFoundError,
    SportsPosts,
)
from sports_posts.polling import DEFAULT_LOOKBACK
from support.fake_service import BASE_URL, T0, FakeClock, FakePostsService

from .conftest import TimeHarness, assert_oldest_first, ids, make_async_poller, make_poller


def busy_league(service: FakePostsService) -> list[str]:
    """Posts over ten minutes, some indexed late (up to 110 s), some of another league."""
    expected = []
    for n in range(60):
        created = 10.0 * n + 1
        delay = 110.0 if n % 7 == 3 else (n % 4) * 3.0
        league = "NBA" if n % 10 == 9 else "NFL"
        service.publish(f"p{n:03d}", created, delay=delay, league=league)
        if league == "NFL":
            expected.append(f"p{n:03d}")
    return expected


# -- exactly once, oldest first ----------------------------------------------------------


def test_every_post_once_oldest_first_with_late_indexing_429_and_500(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    expected = busy_league(service)
    service.fail_next(429, "RATE_LIMITED", retry_after="7")
    service.fail_next(500, "INTERNAL_ERROR", times=2)
    poller = make_poller(client, harness, since=T0, interval=30, leagues="NFL", limit=4)
    batches = list(poller)
    assert sorted(ids(batches)) == sorted(expected)
    assert len(ids(batches)) == len(expected)
    assert_oldest_first(batches)
    assert 7.0 in harness.sleeps  # the 429's Retry-After


@pytest.mark.anyio
async def test_async_every_post_once_oldest_first_with_late_indexing_429_and_500(
    aclient: AsyncSportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    expected = busy_league(service)
    service.fail_next(429, "RATE_LIMITED", retry_after="7")
    service.fail_next(500, "INTERNAL_ERROR", times=2)
    poller = make_async_poller(aclient, harness, since=T0, interval=30, leagues="NFL", limit=4)
    batches = [batch async for batch in poller]
    assert sorted(ids(batches)) == sorted(expected)
    assert len(ids(batches)) == len(expected)
    assert_oldest_first(batches)
    assert 7.0 in harness.sleeps


def test_late_indexed_post_is_delivered_after_a_newer_one_was_served(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("early-but-late", 10, delay=100)  # visible at 110 s
    service.publish("newer", 20, delay=0)
    harness.until = T0 + timedelta(seconds=300)
    batches = list(make_poller(client, harness, since=T0, interval=60))
    assert [[p.id for p in b] for b in batches] == [["newer"], ["early-but-late"]]


def test_a_cycle_pages_through_more_new_posts_than_limit(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    for n in range(250):
        service.publish(f"p{n:03d}", 1 + n * 0.1)
    harness.clock.advance(60)
    poller = make_poller(client, harness, since=T0)
    batch = next(poller)
    assert [p.id for p in batch] == [f"p{n:03d}" for n in range(250)]
    assert poller.calls == 3  # limit=100 by default: pages 1, 2, 3
    assert [r["page"] for r in service.requests] == ["1", "2", "3"]
    assert all(r["limit"] == "100" and r["sort"] == "recent" for r in service.requests)


def test_posts_shifting_across_pages_during_a_cycle_are_neither_lost_nor_repeated(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    for n in range(20):
        service.publish(f"old{n:02d}", n + 1)
    arrivals = iter(range(100))

    def insert_on_top(svc: FakePostsService, query: dict[str, str]) -> None:
        # two newer posts appear between every pair of pages: page N+1 repeats two of page N
        if query.get("page") != "1" and len(svc.posts) < 40:
            for _ in range(2):
                k = next(arrivals)
                svc.publish(f"new{k:02d}", 25 + k)

    service.before_answer = insert_on_top
    harness.clock.advance(30)
    harness.until = T0 + timedelta(seconds=400)
    poller = make_poller(client, harness, since=T0, limit=5, interval=60)
    batches = list(poller)
    delivered = ids(batches)
    assert len(delivered) == len(set(delivered))
    assert set(delivered) == set(service.posts)
    assert_oldest_first(batches)


def test_a_deletion_between_pages_skips_a_post_that_the_next_cycle_catches(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    for n in range(10):
        service.publish(f"p{n}", n + 1)

    def delete_newest_before_page_2(svc: FakePostsService, query: dict[str, str]) -> None:
        if query.get("page") == "2" and not svc.posts["p9"].deleted:
            svc.delete("p9")  # p4 moves up onto page 1, which was already served

    service.before_answer = delete_newest_before_page_2
    harness.clock.advance(20)
    harness.until = T0 + timedelta(seconds=200)
    batches = list(make_poller(client, harness, since=T0, limit=5, interval=60))
    assert [p.id for p in batches[0]] == ["p0", "p1", "p2", "p3", "p5", "p6", "p7", "p8", "p9"]
    assert [p.id for p in batches[1]] == ["p4"]
    assert len(batches) == 2


# -- since_id -----------------------------------------------------------------------------


def test_since_id_not_found_falls_back_to_since_without_loss_or_repeat(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("a", 1)
    service.publish("b", 2)
    harness.clock.advance(300)
    service.publish("c", 290)  # 290 - 180 lookback = 110 > a, b: they fall below the floor
    poller = make_poller(client, harness, since=T0, interval=60)
    first = next(poller)
    assert [p.id for p in first] == ["a", "b", "c"]
    service.publish("d", 330)  # visible before the next cycle (at 360 s)
    service.delete("b")  # the since_id post
    second = next(poller)  # commits the first batch, waits, polls
    assert [p.id for p in second] == ["d"]
    sent = [r.get("since_id") for r in service.requests]
    assert sent == [None, "b", None]  # the hint, its 400, then since alone
    assert poller.state is not None and poller.state.since_id is None
    assert poller.calls == 3


def test_a_since_id_not_found_without_since_id_sent_is_raised(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.fail_next(400, "SINCE_ID_NOT_FOUND")
    with pytest.raises(SinceIdNotFoundError):
        next(make_poller(client, harness, since=T0))


# -- the starting point and checkpoints --------------------------------------------------------


def test_an_empty_checkpoint_starts_at_since(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("before", 5)
    service.publish("after", 15)
    harness.clock.advance(3600)
    batch = next(make_poller(client, harness, since=T0 + timedelta(seconds=10)))
    assert [p.id for p in batch] == ["after"]
    assert service.requests[0]["since"] == "2026-11-21T12:00:10Z"


def test_an_empty_checkpoint_without_since_starts_at_now_minus_lookback(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("old", 100)
    service.publish("recent", 3500)
    harness.clock.advance(3600)
    batch = next(make_poller(client, harness))
    assert [p.id for p in batch] == ["recent"]
    assert service.requests[0]["since"] == "2026-11-21T12:57:00Z"  # 13:00 - 180 s
    assert timedelta(minutes=2) <= DEFAULT_LOOKBACK


def test_a_non_empty_checkpoint_wins_over_since(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("x", 5)
    service.publish("y", 50)
    harness.clock.advance(100)
    checkpoint = MemoryCheckpoint(PollState.start(T0 + timedelta(seconds=30)))
    batch = next(make_poller(client, harness, since=T0, checkpoint=checkpoint))
    assert [p.id for p in batch] == ["y"]


def test_the_checkpoint_advances_only_when_the_next_batch_is_asked_for(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    checkpoint = MemoryCheckpoint()
    service.publish("a", 1)
    service.publish("b", 100)
    harness.clock.advance(10)
    poller = make_poller(client, harness, since=T0, checkpoint=checkpoint, interval=120)
    first = next(poller)
    assert [p.id for p in first] == ["a"]
    saved = checkpoint.load()
    assert saved == PollState.start(T0)  # only the starting point so far
    second = next(poller)
    assert [p.id for p in second] == ["b"]
    saved = checkpoint.load()
    assert saved is not None and "a" in saved.seen and "b" not in saved.seen
    poller.close()  # the consumer is done with the batch it holds
    saved = checkpoint.load()
    assert saved is not None and "b" in saved.seen


def test_with_block_commits_on_clean_exit_and_not_on_error(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("a", 1)
    harness.clock.advance(10)
    clean = MemoryCheckpoint()
    with make_poller(client, harness, since=T0, checkpoint=clean) as poller:
        for _batch in poller:
            break
    assert (clean.load() or PollState.start(T0)).seen.keys() == {"a"}

    failed = MemoryCheckpoint()
    with (
        pytest.raises(RuntimeError),
        make_poller(client, harness, since=T0, checkpoint=failed) as poller,
    ):
        for _batch in poller:
            raise RuntimeError("handler failed")
    assert failed.load() == PollState.start(T0)


@pytest.mark.parametrize("crash_after", [1, 2, 3])
def test_restart_from_file_checkpoint_after_abrupt_stop_repeats_at_most_one_batch(
    tmp_path: object,
    crash_after: int,
    service: FakePostsService,
    harness: TimeHarness,
    clock: FakeClock,
) -> None:
    path = f"{tmp_path}/nfl.json"
    expected = busy_league(service)
    delivered: list[list[str]] = []

    http = httpx.Client(transport=httpx.MockTransport(service.handler))
    client = SportsPosts(api_key="sk_test_poller", base_url=BASE_URL, http_client=http)
    poller = make_poller(
        client, harness, since=T0, interval=45, leagues="NFL", checkpoint=FileCheckpoint(path)
    )
    with pytest.raises(KeyboardInterrupt):
        for n, batch in enumerate(poller, start=1):
            delivered.append([p.id for p in batch])
            if n == crash_after:
                raise KeyboardInterrupt  # the process dies while handling this batch
    harness.poller = None
    del poller  # never closed: an abrupt stop; collected, it frees the file as a dead process would
    gc.collect()

    restarted = make_poller(
        client, harness, since=T0, interval=45, leagues="NFL", checkpoint=FileCheckpoint(path)
    )
    after = [[p.id for p in b] for b in restarted]
    everything = [i for b in delivered + after for i in b]
    assert set(everything) == set(expected)  # nothing lost
    repeated = sorted({i for i in everything if everything.count(i) > 1})
    assert repeated == sorted(delivered[-1])  # exactly the batch in hand at the crash
    assert after[0] == delivered[-1]


# -- errors and cost -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code", "error"),
    [
        (401, "UNAUTHORIZED", AuthenticationError),
        (402, "PAYMENT_REQUIRED", PaymentRequiredError),
        (403, "FORBIDDEN", PermissionDeniedError),
        (400, "INVALID_PARAMETER", InvalidParameterError),
    ],
)
def test_errors_that_will_not_go_away_are_raised_after_one_call(
    client: SportsPosts,
    service: FakePostsService,
    harness: TimeHarness,
    status: int,
    code: str,
    error: type,
) -> None:
    service.fail_next(status, code, times=5)
    poller = make_poller(client, harness, since=T0)
    with pytest.raises(error):
        next(poller)
    assert poller.calls == 1
    assert harness.sleeps == []


def test_a_service_that_caps_limit_at_50_gets_50_without_loss(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    """The spec documents two maxima (100 and 50); the poller's own default falls back."""
    service.max_limit = 50
    for n in range(120):
        service.publish(f"p{n:03d}", 0.5 + n * 0.25)
    harness.clock.advance(60)
    poller = make_poller(client, harness, since=T0)
    batch = next(poller)
    assert [p.id for p in batch] == [f"p{n:03d}" for n in range(120)]
    assert poller.calls == 1 + 3, "one refused call, then three pages of 50"
    assert [(r["limit"], r["page"]) for r in service.requests] == [("100", "1"), ("50", "1"), ("50", "2"), ("50", "3")]


def test_a_limit_the_caller_chose_is_not_changed_behind_their_back(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.max_limit = 50
    service.publish("a", 1)
    poller = make_poller(client, harness, since=T0, limit=100)
    with pytest.raises(InvalidParameterError, match="limit"):
        next(poller)
    assert poller.calls == 1


def test_a_429_waits_as_retry_after_says_then_goes_on(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("a", 1)
    harness.clock.advance(5)
    service.fail_next(429, "RATE_LIMITED", retry_after="3600")  # longer than the client would wait
    harness.until = T0 + timedelta(days=1)
    poller = make_poller(client, harness, since=T0)
    assert [p.id for p in next(poller)] == ["a"]
    assert harness.sleeps == [3600.0]
    assert poller.calls == 2


def test_a_quota_429_without_retry_after_backs_off_up_to_an_hour(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("a", 1)
    harness.clock.advance(5)
    service.fail_next(429, "RATE_LIMITED", times=16)  # a spent monthly quota names no time
    harness.until = T0 + timedelta(days=2)
    poller = make_poller(client, harness, since=T0)
    assert [p.id for p in next(poller)] == ["a"]
    assert poller.calls == 17
    assert harness.sleeps == sorted(harness.sleeps), "the waits only grow"
    assert 60 < max(harness.sleeps) <= 3600, "beyond a minute, at most an hour"
    assert sum(harness.sleeps) > 3 * 3600, "sixteen refusals spread over hours, not minutes"


def test_a_repeated_retry_after_zero_backs_off_instead_of_spinning(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.fail_next(429, "RATE_LIMITED", retry_after="0", times=3)
    poller = make_poller(client, harness, since=T0)
    harness.until = T0 + timedelta(seconds=6)
    assert list(poller) == []
    assert harness.sleeps[:3] == [0.75, 1.5, 3.0]
    assert poller.calls == 4


def test_paging_stops_at_the_floor_even_if_the_service_ignores_since(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    for n in range(50):
        service.publish(f"old{n:02d}", n + 1)
    for n in range(3):
        service.publish(f"new{n}", 1000 + n)
    harness.clock.advance(1100)

    original = service._answer

    def answer_without_since(request: httpx.Request, q: dict[str, str]) -> httpx.Response:
        q.pop("since", None)
        return original(request, q)

    service._answer = answer_without_since  # type: ignore[method-assign]
    poller = make_poller(client, harness, since=T0 + timedelta(seconds=999), limit=2)
    assert [p.id for p in next(poller)] == ["new0", "new1", "new2"]
    assert poller.calls == 2  # page 2 reaches the floor: pages 3..27 are never asked for


def test_5xx_and_connection_errors_back_off_logged_then_go_on(
    service: FakePostsService, harness: TimeHarness, caplog: pytest.LogCaptureFixture
) -> None:
    service.publish("a", 1)
    harness.clock.advance(5)
    service.fail_next(503, "UNAVAILABLE", times=2)
    failures = iter([True, False, False, False])

    def flaky(request: httpx.Request) -> httpx.Response:
        if next(failures, False):
            raise httpx.ConnectError("connection refused", request=request)
        return service.handler(request)

    http = httpx.Client(transport=httpx.MockTransport(flaky))
    client = SportsPosts(api_key="sk_live_do_not_log", base_url=BASE_URL, http_client=http)
    poller = make_poller(client, harness, since=T0)
    with caplog.at_level(logging.WARNING, logger="sports_posts.polling"):
        assert [p.id for p in next(poller)] == ["a"]
    assert poller.calls == 4
    # equal jitter with rand()=0.5: 3/4 of 1, 2, 4 seconds
    assert harness.sleeps == [0.75, 1.5, 3.0]
    records = [r for r in caplog.records if r.name == "sports_posts.polling"]
    assert len(records) == 3
    assert all("do_not_log" not in r.getMessage() for r in caplog.records)


def test_an_idle_cycle_costs_one_call(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    harness.until = T0 + timedelta(seconds=600)
    poller = make_poller(client, harness, since=T0, interval=60)
    assert list(poller) == []
    assert poller.calls == len(service.requests) == 10
    assert harness.sleeps == [60.0] * 10


def test_max_calls_per_day_stretches_the_interval(
    client: SportsPosts,
    service: FakePostsService,
    harness: TimeHarness,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="sports_posts.polling")
    for n in range(300):  # one busy burst: 3 pages
        service.publish(f"p{n:03d}", 1 + n * 0.1)
    harness.clock.advance(60)
    harness.until = T0 + timedelta(days=2)
    poller = make_poller(client, harness, since=T0, interval=60, max_calls_per_day=24)
    batches = list(poller)
    assert len(ids(batches)) == 300
    # 3 calls, each paying 86400 / 24 s; the next cycle's window still holds the burst
    assert harness.sleeps[:2] == [3 * 3600.0, 3 * 3600.0]
    assert set(harness.sleeps[2:]) == {3600.0}  # then idle cycles: one call, one hour
    assert poller.calls <= 2 * 24 + 3
    assert "call budget: waiting 10800 s rather than 60 s (3 call(s)" in caplog.text


def test_stop_ends_the_loop_after_the_current_cycle(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("a", 1)
    service.publish("b", 100)
    harness.clock.advance(10)
    poller = make_poller(client, harness, since=T0)
    seen = []
    for batch in poller:
        seen.append([p.id for p in batch])
        poller.stop()
    assert seen == [["a"]]
    assert poller.calls == 1
    assert poller.state is not None and set(poller.state.seen) == {"a"}  # committed on the way out


def test_stop_before_iterating_sends_nothing(client: SportsPosts, harness: TimeHarness) -> None:
    poller = make_poller(client, harness, since=T0)
    poller.stop()
    assert list(poller) == []
    assert poller.calls == 0


def test_filters_are_sent_on_every_request(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    harness.until = T0 + timedelta(seconds=180)
    list(
        make_poller(client, harness, since=T0, leagues=["NFL", "NBA"], highlight=True, min_score=7)
    )
    assert len(service.requests) == 3
    for query in service.requests:
        assert query["leagues"] == "NFL,NBA"
        assert query["highlight"] == "true"
        assert query["min_score"] == "7"


def test_posts_poll_builds_a_poller_from_the_resource(client: SportsPosts) -> None:
    poller = client.posts.poll(leagues="NFL", interval=120, lookback=timedelta(minutes=5))
    assert isinstance(poller, Poller)
    assert poller.config.interval == 120.0
    assert poller.config.lookback == timedelta(minutes=5)
    assert poller.config.filters == {"leagues": "NFL"}


def test_memory_is_bounded_by_the_lookback_window(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    for n in range(720):  # one post every 5 s for an hour
        service.publish(f"p{n:03d}", n * 5.0)
    harness.until = T0 + timedelta(seconds=3700)
    poller = make_poller(client, harness, since=T0, interval=60)
    sizes = []
    for _batch in poller:
        state = poller.checkpoint.load()
        assert state is not None
        sizes.append(len(state.seen))
    assert max(sizes) <= 180 / 5 + 12 + 1  # the window (36 posts) plus one cycle's posts


# -- bad input ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"since_id": "123"},
        {"page": 2},
        {"sort": "top"},
        {"limit": 0},
        {"teams": "1,2"},  # without id_type
        {"interval": 0},
        {"interval": -5},
        {"lookback": -1},
        {"lookback": "soon"},
        {"max_calls_per_day": 0},
        {"since": "yesterday"},
        {"unknown_filter": 1},
        {"checkpoint": "nfl.json"},  # a path, not a checkpoint
    ],
)
def test_bad_input_is_a_parameter_error(client: SportsPosts, kwargs: dict[str, object]) -> None:
    with pytest.raises(ParameterError):
        client.posts.poll(**kwargs)  # type: ignore[arg-type]


def test_a_naive_since_is_a_parameter_error(client: SportsPosts) -> None:
    with pytest.raises(ParameterError):
        client.posts.poll(since=T0.replace(tzinfo=None))


def test_since_inside_filters_is_a_parameter_error(client: SportsPosts) -> None:
    with pytest.raises(ParameterError, match="since="):
        Poller(client, filters={"since": T0})  # type: ignore[arg-type]  # refused, as typed


# -- the async driver and the default sleeps -------------------------------------------------------


def test_stop_wakes_the_default_sleep(client: SportsPosts) -> None:
    poller = client.posts.poll(leagues="NFL", interval=3600)
    poller.stop()
    poller._interruptible_sleep(3600)  # returns at once: the wake event is set


@pytest.mark.anyio
async def test_stop_from_another_thread_wakes_the_async_default_sleep(
    aclient: AsyncSportsPosts,
) -> None:
    import asyncio

    import anyio.to_thread

    poller = aclient.posts.poll(leagues="NFL", interval=3600)
    poller._loop = asyncio.get_running_loop()
    poller._loop_thread = -1  # as if stop() came from a thread other than the loop's
    poller._wake = asyncio.Event()
    sleeping = asyncio.ensure_future(poller._interruptible_sleep(3600))
    await asyncio.sleep(0)
    assert not sleeping.done()
    await anyio.to_thread.run_sync(poller.stop)
    await sleeping  # woken by the stop, not by the hour passing


@pytest.mark.anyio
async def test_async_errors_that_will_not_go_away_are_raised(
    aclient: AsyncSportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.fail_next(403, "FORBIDDEN", times=3)
    poller = make_async_poller(aclient, harness, since=T0, leagues="NFL")
    with pytest.raises(PermissionDeniedError):
        await poller.__anext__()
    assert poller.calls == 1


@pytest.mark.anyio
async def test_async_with_block_commits_on_clean_exit_and_stop_ends_the_loop(
    aclient: AsyncSportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("a", 1)
    service.publish("b", 100)
    harness.clock.advance(10)
    checkpoint = MemoryCheckpoint()
    seen = []
    async with make_async_poller(aclient, harness, since=T0, checkpoint=checkpoint) as poller:
        async for batch in poller:
            seen.append([p.id for p in batch])
            poller.stop()
    assert seen == [["a"]]
    saved = checkpoint.load()
    assert saved is not None and set(saved.seen) == {"a"}


@pytest.mark.anyio
async def test_async_since_id_not_found_falls_back_to_since(
    aclient: AsyncSportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("a", 1)
    harness.clock.advance(300)
    service.publish("c", 290)
    poller = make_async_poller(aclient, harness, since=T0, interval=60)
    assert [p.id for p in await poller.__anext__()] == ["a", "c"]
    service.publish("d", 330)
    service.delete("a")
    assert [p.id for p in await poller.__anext__()] == ["d"]
    assert [r.get("since_id") for r in service.requests] == [None, "a", None]
    await poller.aclose()


@pytest.mark.anyio
async def test_aclient_posts_poll_builds_an_async_poller(aclient: AsyncSportsPosts) -> None:
    from sports_posts import AsyncPoller

    poller = aclient.posts.poll(teams=["1", "2"], id_type="service", max_calls_per_day=6)
    assert isinstance(poller, AsyncPoller)
    assert (
        poller.config.seconds_per_call == 14400.0
    )  # the free plan's 200 a month: one call per 4 h
