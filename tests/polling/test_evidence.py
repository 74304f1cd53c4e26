"""The poller moves on evidence (its own posts), never on a clock it cannot check.

A forged or stale ``Date``, a proxy's fast clock or a post dated a year ahead must not lose
a post; every wait is bounded; every file error of a checkpoint is a ``CheckpointError``;
an abandoned poller frees its file at once; a checkpoint is only valid for its own feed.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any, Callable, Optional

import httpx
import pytest

from sports_posts import (
    AsyncPoller,
    AsyncSportsPosts,
    CheckpointError,
    CheckpointMismatchError,
    FileCheckpoint,
    MemoryCheckpoint,
    ParameterError,
    Poller,
    PollState,
    RateLimitError,
    SportsPosts,
)
from sports_posts.polling import CheckpointLockedError
from sports_posts.polling._algorithm import MAX_WAIT
from support.fake_service import BASE_URL, T0, FakeClock, FakePost, FakePostsService
from tests.stacks import mock_client

from .conftest import TimeHarness, ids, make_poller

HOURS_10 = timedelta(hours=10)
YEAR = timedelta(days=365)


def http_date(when: datetime) -> str:
    return format_datetime(when.astimezone(timezone.utc), usegmt=True)


def live_feed(service: FakePostsService, minutes: int = 30) -> list[str]:
    """A post every 20 s for ``minutes``, each visible 5 s after it is created."""
    expected = []
    for n in range(minutes * 3):
        service.publish(f"p{n:03d}", 20.0 * n + 1, delay=5)
        expected.append(f"p{n:03d}")
    return expected


def dating(service: FakePostsService, date_of: Callable[[int, datetime], Optional[datetime]]) -> Any:
    """The service's handler behind a "proxy" that rewrites the n-th answer's ``Date``
    to ``date_of(n, service_now)`` (``None``: no ``Date``)."""
    count = [0]

    def handler(request: httpx.Request) -> httpx.Response:
        now = service.clock.now
        response = service.handler(request)
        when = date_of(count[0], now)
        count[0] += 1
        if when is None:
            response.headers.pop("Date", None)
        else:
            response.headers["Date"] = http_date(when)
        return response

    return handler


@pytest.fixture
def proxied(service: FakePostsService, stack: str) -> Iterator[Callable[..., SportsPosts]]:
    """A client to the fake service through a ``Date``-rewriting handler."""
    made: list[Any] = []

    def make(date_of: Callable[[int, datetime], Optional[datetime]]) -> SportsPosts:
        http = mock_client(dating(service, date_of), stack)
        client = SportsPosts(api_key="sk_test_evidence", base_url=BASE_URL, http_client=http)
        made.append((client, http))
        return client

    yield make
    for client, http in made:
        client.close()
        http.close()


# -- clocks can only make the poller more careful ------------------------------------------


@pytest.mark.parametrize("since", [None, T0])
def test_one_forged_first_date_ten_hours_ahead_loses_nothing(
    proxied: Callable[..., SportsPosts], service: FakePostsService, harness: TimeHarness,
    since: Optional[datetime],
) -> None:
    """Today's code took the single sample as the service's clock and slid past every post."""
    expected = live_feed(service)
    client = proxied(lambda n, now: now + HOURS_10 if n == 0 else now)
    harness.until = T0 + timedelta(minutes=31)
    poller = make_poller(client, harness, since=since, leagues="NFL")
    assert ids(list(poller)) == expected
    assert poller.state is not None and poller.state.floor <= harness.clock.now


@pytest.mark.parametrize("offset", [timedelta(minutes=30), -timedelta(minutes=30)])
def test_a_proxys_clock_thirty_minutes_off_loses_nothing(
    proxied: Callable[..., SportsPosts], service: FakePostsService, harness: TimeHarness,
    offset: timedelta, caplog: pytest.LogCaptureFixture,
) -> None:
    expected = live_feed(service)
    client = proxied(lambda n, now: now + offset)
    harness.until = T0 + timedelta(minutes=31)
    poller = make_poller(client, harness, since=T0, leagues="NFL")
    with caplog.at_level(logging.WARNING, logger="sports_posts"):
        assert ids(list(poller)) == expected
    assert abs(poller.clock_skew - offset) <= timedelta(seconds=1), "the estimate is still reported"
    if offset < timedelta(0):  # a Date behind the posts by more than the lookback
        disagree = [r for r in caplog.records if "behind the newest post" in r.getMessage()]
        assert len(disagree) == 1, "logged once"


def test_a_date_behind_the_posts_by_less_than_the_lookback_is_not_reported(
    proxied: Callable[..., SportsPosts], service: FakePostsService, harness: TimeHarness,
    caplog: pytest.LogCaptureFixture,
) -> None:
    live_feed(service, minutes=5)
    client = proxied(lambda n, now: now - timedelta(seconds=60))
    harness.until = T0 + timedelta(minutes=5)
    with caplog.at_level(logging.WARNING, logger="sports_posts"):
        list(make_poller(client, harness, since=T0, leagues="NFL"))
    assert not [r for r in caplog.records if "behind the newest post" in r.getMessage()]


def publish_ahead(service: FakePostsService, post_id: str, visible_at: float, ahead: timedelta) -> None:
    """A bad record: visible ``visible_at`` s after T0, dated ``ahead`` of the service's now."""
    seen_at = T0 + timedelta(seconds=visible_at)
    service.posts[post_id] = FakePost(post_id, seen_at + ahead, seen_at)


def test_a_post_dated_a_year_ahead_is_delivered_once_and_moves_nothing(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Today's code moved the watermark to next year: every later post was lost, and the
    checkpoint was refused at the next restart."""
    expected = live_feed(service)
    publish_ahead(service, "from-the-future", 100.0, YEAR)
    path = tmp_path / "nfl.json"
    harness.until = T0 + timedelta(minutes=15)
    with caplog.at_level(logging.WARNING, logger="sports_posts"):
        first = make_poller(client, harness, since=T0, leagues="NFL", checkpoint=FileCheckpoint(path))
        delivered = ids(list(first))
        first.close()
    state = FileCheckpoint(path).load()
    assert state is not None and state.watermark <= harness.clock.now, "the watermark stops at now"
    assert "from-the-future" in state.seen, "remembered, so not delivered again"
    future = [r for r in caplog.records if "from-the-future" in r.getMessage()]
    assert len(future) == 1 and future[0].levelno == logging.WARNING

    harness.until = T0 + timedelta(minutes=31)
    second = make_poller(client, harness, since=T0, leagues="NFL", checkpoint=FileCheckpoint(path))
    delivered += ids(list(second))
    second.close()
    assert sorted(delivered) == sorted([*expected, "from-the-future"])
    assert len(delivered) == len(set(delivered))


# -- every wait is bounded -------------------------------------------------------------------


@pytest.mark.parametrize(
    "retry_after", ["99999999999", "Fri, 31 Dec 9999 23:59:59 GMT", "1e308"]
)
def test_a_huge_retry_after_is_a_capped_wait_for_the_poller(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness, retry_after: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Today's code slept 99999999999 s (an OverflowError in any real sleep)."""
    service.publish("p1", 10.0)
    service.fail_next(429, "RATE_LIMITED", retry_after=retry_after)
    harness.until = T0 + timedelta(days=1, minutes=5)
    with caplog.at_level(logging.WARNING, logger="sports_posts"):
        delivered = ids(list(make_poller(client, harness, since=T0, leagues="NFL")))
    assert delivered == ["p1"]
    assert max(harness.sleeps) == MAX_WAIT
    assert any("a day, the poller's longest wait" in r.getMessage() for r in caplog.records)


def test_a_huge_interval_is_slept_in_slices_of_a_day(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    harness.until = T0 + timedelta(days=2, seconds=1)
    list(make_poller(client, harness, since=T0, interval=1e300))
    assert harness.sleeps == [MAX_WAIT, MAX_WAIT, MAX_WAIT]


def test_the_default_sleep_takes_a_day_long_slice(client: SportsPosts) -> None:
    """The wait a slice can be is one ``threading.Event.wait`` accepts (no OverflowError)."""
    poller = Poller(client)
    poller.stop()  # the wait returns at once, but only after it accepted the timeout
    poller._interruptible_sleep(MAX_WAIT)


@pytest.mark.parametrize(
    "retry_after", ["99999999999", "Fri, 31 Dec 9999 23:59:59 GMT", "1e308"]
)
def test_a_huge_retry_after_on_a_call_is_a_rate_limit_error(retry_after: str, stack: str) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = {"ok": False, "error_code": "RATE_LIMITED", "error_message": "quota"}
        return httpx.Response(429, json=body, headers={"Retry-After": retry_after})

    http = mock_client(answer, stack)
    client = SportsPosts(api_key="sk_test_evidence", base_url=BASE_URL, http_client=http, max_retries=3)
    with client as c, pytest.raises(RateLimitError) as caught:
        c.posts.list(leagues="NFL")
    http.close()
    assert caught.value.retry_after is not None and caught.value.retry_after > MAX_WAIT


# -- file errors ---------------------------------------------------------------------------------


def a_state() -> PollState:
    return PollState.start(T0)


def test_a_directory_that_is_a_file_is_a_checkpoint_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    checkpoint = FileCheckpoint(blocker / "nfl.json")
    for action in (checkpoint.load, lambda: checkpoint.save(a_state()), checkpoint.acquire):
        with pytest.raises(CheckpointError) as caught:
            action()
        assert str(blocker) in str(caught.value), "names the path"
        assert "a file stands where a directory" in str(caught.value), "and the cause"


def test_a_lock_that_cannot_be_made_is_a_checkpoint_error(tmp_path: Path) -> None:
    checkpoint = FileCheckpoint(tmp_path / "nfl.json")
    checkpoint.lock_path.mkdir()  # a directory where the lock file goes
    with pytest.raises(CheckpointError, match="cannot make the lock file") as caught:
        checkpoint.acquire()
    assert str(checkpoint.lock_path) in str(caught.value)


def test_a_permission_error_on_save_is_a_checkpoint_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkpoint = FileCheckpoint(tmp_path / "nfl.json")

    def refuse(src: Any, dst: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(CheckpointError, match="Permission denied") as caught:
        checkpoint.save(a_state())
    assert str(checkpoint.path) in str(caught.value) and "permissions" in str(caught.value)
    assert not list(tmp_path.glob(".nfl.json.*.tmp")), "the temporary file is removed"


def test_a_failing_poller_save_is_a_checkpoint_error(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    poller = make_poller(client, harness, since=T0, checkpoint=FileCheckpoint(blocker / "nfl.json"))
    with pytest.raises(CheckpointError):
        list(poller)


# -- an abandoned poller frees its file at once ----------------------------------------------


def one_batch(client: SportsPosts, clock: FakeClock, path: Path) -> Poller:
    poller = Poller(
        client, checkpoint=FileCheckpoint(path), since=T0 - timedelta(minutes=1), clock=clock, sleep=lambda s: None
    )
    assert next(iter(poller))
    return poller


def test_a_poller_nobody_holds_lets_go_of_its_file_at_once(
    client: SportsPosts, service: FakePostsService, clock: FakeClock, tmp_path: Path
) -> None:
    """Today's poller and its generator referenced each other: the lock stayed until the
    garbage collector ran, and the second poller got CheckpointLockedError."""
    service.publish("p1", -10.0)
    path = tmp_path / "nfl.json"
    enabled = gc.isenabled()
    gc.disable()  # only reference counting may free the first poller
    try:
        first = one_batch(client, clock, path)
        del first
        second = one_batch(client, clock, path)
        second.close()
    finally:
        if enabled:
            gc.enable()


@pytest.mark.anyio
async def test_an_async_poller_nobody_holds_lets_go_of_its_file_at_once(
    aclient: AsyncSportsPosts, service: FakePostsService, clock: FakeClock, tmp_path: Path
) -> None:
    service.publish("p1", -10.0)
    path = tmp_path / "nfl.json"

    async def no_wait(seconds: float) -> None:
        return None

    def poller() -> AsyncPoller:
        return AsyncPoller(
            aclient, checkpoint=FileCheckpoint(path), since=T0 - timedelta(minutes=1), clock=clock, sleep=no_wait
        )

    enabled = gc.isenabled()
    gc.disable()
    try:
        first = poller()
        assert await first.__anext__()
        del first
        for _ in range(3):  # the event loop closes the abandoned generator on its next steps
            await asyncio.sleep(0)
        second = poller()
        assert await second.__anext__()
        await second.aclose()
    finally:
        if enabled:
            gc.enable()


def test_a_lock_held_in_this_process_says_so_and_how_to_close_it(
    client: SportsPosts, service: FakePostsService, clock: FakeClock, tmp_path: Path
) -> None:
    service.publish("p1", -10.0)
    path = tmp_path / "nfl.json"
    first = one_batch(client, clock, path)
    with pytest.raises(CheckpointLockedError) as caught:
        one_batch(client, clock, path)
    message = str(caught.value)
    assert "this same process" in message and f"process {os.getpid()}" in message
    assert "poller.close()" in message and "with" in message
    first.close()


# -- a checkpoint is valid for its own feed ---------------------------------------------------


def nfl_then_nba(client: SportsPosts, service: FakePostsService, harness: TimeHarness, checkpoint: Any) -> None:
    service.publish("nfl-1", 10.0, league="NFL")
    harness.until = T0 + timedelta(minutes=2)
    first = make_poller(client, harness, since=T0, leagues="NFL", checkpoint=checkpoint)
    assert ids(list(first)) == ["nfl-1"]
    first.close()


def test_a_checkpoint_of_other_filters_is_refused_before_any_call(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness, tmp_path: Path
) -> None:
    """Today's code resumed an NFL checkpoint for NBA and delivered none of its posts."""
    checkpoint = FileCheckpoint(tmp_path / "feed.json")
    nfl_then_nba(client, service, harness, checkpoint)
    calls = len(service.requests)
    harness.until = T0 + timedelta(minutes=4)
    second = make_poller(client, harness, leagues="NBA", checkpoint=checkpoint)
    with pytest.raises(CheckpointMismatchError) as caught:
        list(second)
    assert isinstance(caught.value, CheckpointError)
    message = str(caught.value)
    assert "leagues: stored 'NFL', now 'NBA'" in message
    assert "its own checkpoint" in message and "delete" in message
    assert caught.value.differences == ["leagues: stored 'NFL', now 'NBA'"]
    assert len(service.requests) == calls, "nothing was sent"


def test_a_filter_added_is_a_mismatch_too(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    checkpoint = MemoryCheckpoint()
    nfl_then_nba(client, service, harness, checkpoint)
    second = make_poller(client, harness, leagues="NFL", checkpoint=checkpoint, media_type="video")
    with pytest.raises(CheckpointMismatchError, match="media_type: stored '\\(none\\)'"):
        list(second)


def test_the_page_size_is_not_part_of_the_feed(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    checkpoint = MemoryCheckpoint()
    nfl_then_nba(client, service, harness, checkpoint)
    harness.until = T0 + timedelta(minutes=4)
    assert ids(list(make_poller(client, harness, leagues="NFL", checkpoint=checkpoint, limit=20))) == []


def test_an_old_checkpoint_without_filters_adopts_the_current_ones(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness, tmp_path: Path
) -> None:
    path = tmp_path / "old.json"
    old = PollState.start(T0).to_dict()
    assert "filters" not in old
    path.write_text(json.dumps(old))
    service.publish("nba-1", 10.0, league="NBA")
    harness.until = T0 + timedelta(minutes=2)
    poller = make_poller(client, harness, leagues="NBA", checkpoint=FileCheckpoint(path))
    assert ids(list(poller)) == ["nba-1"]
    poller.close()
    saved = FileCheckpoint(path).load()
    assert saved is not None and saved.filters == {"leagues": "NBA"}


def test_stored_filters_round_trip_and_bad_ones_are_refused() -> None:
    state = PollState.start(T0, filters={"leagues": "NFL"})
    assert PollState.from_json(state.to_json()).filters == {"leagues": "NFL"}
    bad = {**state.to_dict(), "filters": {"leagues": 3}}
    with pytest.raises(CheckpointError, match="'filters'"):
        PollState.from_dict(bad)


def test_an_ignored_since_is_a_warning(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness, caplog: pytest.LogCaptureFixture
) -> None:
    checkpoint = MemoryCheckpoint()
    nfl_then_nba(client, service, harness, checkpoint)
    harness.until = T0 + timedelta(minutes=4)
    with caplog.at_level(logging.WARNING, logger="sports_posts"):
        list(make_poller(client, harness, leagues="NFL", checkpoint=checkpoint, since=T0 - YEAR))
    ignored = [r for r in caplog.records if "is ignored" in r.getMessage()]
    assert len(ignored) == 1 and ignored[0].levelno == logging.WARNING
    assert "new checkpoint path or key" in ignored[0].getMessage()


# -- the ends of the calendar ------------------------------------------------------------------


def test_a_lookback_beyond_a_day_is_a_parameter_error(client: SportsPosts) -> None:
    """Today's code raised a raw OverflowError for lookback=1e300."""
    for lookback in (1e300, 86400 * 365 * 5000, timedelta(days=2)):
        with pytest.raises(ParameterError, match="lookback: at most 86400 seconds"):
            Poller(client, lookback=lookback)
    Poller(client, lookback=timedelta(days=1))


def test_a_since_in_year_one_is_a_valid_bound(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    """Today's code raised a raw OverflowError at the first idle cycle (year 1 - lookback)."""
    harness.until = T0 + timedelta(minutes=3)
    poller = make_poller(client, harness, since=datetime(1, 1, 1, tzinfo=timezone.utc))
    assert ids(list(poller)) == []
    service.publish("p1", 200.0)
    harness.until = T0 + timedelta(minutes=6)
    assert ids(list(make_poller(client, harness, since=datetime(1, 1, 1, 0, 1, tzinfo=timezone.utc)))) == ["p1"]
