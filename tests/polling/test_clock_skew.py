"""Clock skew: the poller's time bounds follow the service's clock, as its ``Date`` header shows it.

A poller whose clock runs ahead of the service by more than ``lookback`` slides its window
past posts not yet created on the service's clock and skips them all; one whose clock runs
behind refuses a valid checkpoint as "in the future". The fake service here dates its
answers by its own clock; the poller reads a clock offset from it.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Callable

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sports_posts import AsyncSportsPosts, CheckpointError, MemoryCheckpoint, PollState, SportsPosts
from sports_posts.polling import ClockSkew
from sports_posts.polling._config import DEFAULT_LOOKBACK
from sports_posts.polling._skew import MAX_CORRECTION, NOISE, parse_http_date
from support.fake_service import BASE_URL, T0, FakeClock, FakePostsService

from .conftest import TimeHarness, ids, make_async_poller, make_poller

TEN_MINUTES = timedelta(minutes=10)


def http_date(when: datetime) -> str:
    return format_datetime(when.astimezone(timezone.utc), usegmt=True)


def skewed(clock: FakeClock, by: timedelta) -> Callable[[], datetime]:
    """This machine's clock: the service's plus ``by`` (positive: ahead)."""
    return lambda: clock.now + by


def feed(skew: ClockSkew, service_now: datetime, local_ahead: timedelta, rtt: float = 0.2) -> None:
    """One answer served at ``service_now`` to a machine whose clock is ``local_ahead``."""
    sent = service_now + local_ahead - timedelta(seconds=rtt / 2)
    skew.observe(http_date(service_now), sent, sent + timedelta(seconds=rtt))


def live_feed(service: FakePostsService, minutes: int = 30) -> list[str]:
    """A post every 20 s for ``minutes``, each visible 5 s after it is created."""
    expected = []
    for n in range(minutes * 3):
        service.publish(f"p{n:03d}", 20.0 * n + 1, delay=5)
        expected.append(f"p{n:03d}")
    return expected


# -- the estimator -----------------------------------------------------------------------


def test_no_answer_yet_means_no_correction() -> None:
    skew = ClockSkew()
    assert not skew.known
    assert skew.offset == skew.cautious_offset == timedelta(0)


@pytest.mark.parametrize(
    "date",
    [None, "", "   ", "garbage", "1", 1_700_000_000, b"Thu, 15 Jan 2026 18:00:00 GMT",
     "Sat, 01 Jan 10000 00:00:00 GMT", "Thu, 15 Jan 2026 25:00:00 GMT", "Thu, 15 Jan 2026 18:00:00 GMT, x",
     "Mon, 01 Jan 0001 00:00:00 +0100"],
)
def test_a_missing_or_malformed_date_is_ignored(date: object) -> None:
    skew = ClockSkew()
    skew.observe(date, T0, T0 + timedelta(seconds=1))
    assert not skew.known and skew.offset == timedelta(0)


@pytest.mark.parametrize("off", [MAX_CORRECTION + timedelta(minutes=1), -MAX_CORRECTION - timedelta(minutes=1)])
def test_a_date_beyond_the_bound_is_ignored_with_one_warning(
    off: timedelta, caplog: pytest.LogCaptureFixture
) -> None:
    skew = ClockSkew()
    feed(skew, T0, TEN_MINUTES)  # a real skew, learnt first
    with caplog.at_level(logging.DEBUG, logger="sports_posts"):
        for _ in range(20):  # a majority of absurd answers still moves nothing
            feed(skew, T0 + off, -off)  # this clock at T0, the Date far off
        skew.observe("Fri, 31 Dec 9999 23:59:59 GMT", T0, T0)
    assert abs(skew.offset + TEN_MINUTES) < timedelta(seconds=1)
    ignored = [r.levelno for r in caplog.records if "no correction is made" in r.getMessage()]
    assert ignored == [logging.WARNING] + [logging.DEBUG] * 20, "warned once, then at DEBUG"


def test_whole_second_dates_are_noise_below_two_seconds() -> None:
    """Date truncates to the second; the round trip blurs the midpoint: a synced clock
    shows estimates within about a second, and those are taken as zero."""
    skew = ClockSkew()
    for n in range(40):  # the service's time at every phase of its second, various round trips
        served = T0 + timedelta(seconds=n, milliseconds=97 * n % 1000)
        sent = served - timedelta(milliseconds=10 + 37 * n % 400)
        skew.observe(http_date(served), sent, sent + timedelta(milliseconds=20 + 61 * n % 800))
        assert skew.offset == skew.cautious_offset == timedelta(0)
    assert skew.known


def test_a_real_skew_is_measured_within_a_second() -> None:
    skew = ClockSkew()
    for n in range(9):
        feed(skew, T0 + timedelta(seconds=n * 60, milliseconds=111 * n), timedelta(seconds=-42.3), rtt=0.3)
    assert abs(skew.offset - timedelta(seconds=42.3)) <= timedelta(seconds=1)


def test_the_median_outvotes_an_odd_answer_and_follows_a_real_change() -> None:
    skew = ClockSkew()
    for _ in range(9):
        feed(skew, T0, TEN_MINUTES)
    feed(skew, T0, -TEN_MINUTES)  # one odd Date (a stale cache, say)
    assert abs(skew.offset + TEN_MINUTES) < timedelta(seconds=1)
    for _ in range(3):
        feed(skew, T0, -TEN_MINUTES)
    assert abs(skew.offset + TEN_MINUTES) < timedelta(seconds=1), "four of nine is still a minority"
    feed(skew, T0, -TEN_MINUTES)
    assert abs(skew.offset - TEN_MINUTES) < timedelta(seconds=1), "five of nine: the clock changed"


def test_the_cautious_offset_follows_a_clock_stepped_forward_at_once() -> None:
    """Where a late time would skip posts, the newest sample counts as soon as it is earlier."""
    skew = ClockSkew()
    for _ in range(9):
        feed(skew, T0, timedelta(0))
    feed(skew, T0, TEN_MINUTES)  # this machine's clock just jumped ten minutes forward
    assert skew.offset == timedelta(0)
    assert abs(skew.cautious_offset + TEN_MINUTES) < timedelta(seconds=1)
    feed(skew, T0, -TEN_MINUTES)  # a jump back is followed only by the median: never too late
    assert skew.cautious_offset == timedelta(0)


def test_a_clock_stepping_back_during_a_call_gives_no_sample() -> None:
    skew = ClockSkew()
    skew.observe(http_date(T0), T0 + timedelta(seconds=5), T0)
    assert not skew.known


def test_a_large_skew_is_logged_once_as_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    skew = ClockSkew()
    with caplog.at_level(logging.WARNING, logger="sports_posts"):
        for _ in range(5):
            feed(skew, T0, TEN_MINUTES)
    (record,) = caplog.records
    assert record.name.startswith("sports_posts")
    assert "10.0 min ahead of the service's" in record.getMessage()


def test_a_skew_under_the_threshold_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    skew = ClockSkew()
    with caplog.at_level(logging.WARNING, logger="sports_posts"):
        feed(skew, T0, timedelta(seconds=-20))
    assert skew.offset > timedelta(seconds=19) and not caplog.records


@settings(max_examples=200, deadline=None)
@given(
    date=st.one_of(st.text(max_size=60), st.datetimes(timezones=st.just(timezone.utc)).map(http_date)),
    rtt=st.floats(min_value=-5, max_value=1e6, allow_nan=False),
)
def test_any_date_header_never_raises_and_stays_within_the_bound(date: str, rtt: float) -> None:
    skew = ClockSkew()
    skew.observe(date, T0, T0 + timedelta(seconds=rtt))
    assert abs(skew.offset) <= MAX_CORRECTION
    parsed = parse_http_date(date)
    assert parsed is None or parsed.tzinfo == timezone.utc


# -- the poller: skew in both directions ---------------------------------------------------


def test_without_a_date_a_clock_ahead_by_more_than_the_lookback_loses_every_post(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    """The control experiment: what the correction below fixes."""
    live_feed(service)
    harness.until = T0 + timedelta(minutes=31)
    poller = make_poller(client, harness, clock=skewed(harness.clock, TEN_MINUTES), leagues="NFL")
    assert ids(list(poller)) == []
    assert poller.clock_skew == timedelta(0)


@pytest.mark.parametrize("ahead", [TEN_MINUTES, -TEN_MINUTES])
def test_a_skewed_clock_from_an_empty_checkpoint_loses_and_repeats_nothing(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness, ahead: timedelta,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A clock ahead has its start moved back to the service's now - lookback (one extra
    call); a clock behind keeps its own, earlier start: a ``Date`` never moves a bound later
    than this machine's clock put it, so the posts of those ten minutes come too."""
    service.dated = True
    service.publish("before-start", -200.0)  # older than the service's now - lookback
    service.publish("in-lookback", -100.0)  # the last three minutes of the service's clock
    expected = ["in-lookback", *live_feed(service)]
    if ahead < timedelta(0):
        expected.insert(0, "before-start")  # within the local clock's (earlier) start
    harness.until = T0 + timedelta(minutes=31)
    poller = make_poller(client, harness, clock=skewed(harness.clock, ahead), leagues="NFL")
    with caplog.at_level(logging.WARNING, logger="sports_posts"):
        delivered = ids(list(poller))
    assert delivered == expected, "every post once, in order"
    assert abs(poller.clock_skew + ahead) <= timedelta(seconds=1)
    assert len([r for r in caplog.records if "keep the clock synced" in r.getMessage()]) == 1
    moved = service.requests[0]["since"] != service.requests[1]["since"]
    assert moved == (ahead > timedelta(0)), "only a start in the service's future is moved"
    assert poller.state is not None and poller.state.floor <= harness.clock.now


def test_a_synced_clock_spends_no_extra_call(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.dated = True
    live_feed(service, minutes=5)
    harness.until = T0 + timedelta(minutes=5)
    poller = make_poller(client, harness, clock=skewed(harness.clock, timedelta(milliseconds=900)), leagues="NFL")
    list(poller)
    assert poller.clock_skew == timedelta(0)
    assert poller.calls == 5, "one call per cycle (at 0, 1, 2, 3 and 4 minutes): none to move the start"


@pytest.mark.anyio
@pytest.mark.parametrize("ahead", [TEN_MINUTES, -TEN_MINUTES])
async def test_async_a_skewed_clock_from_an_empty_checkpoint_loses_and_repeats_nothing(
    aclient: AsyncSportsPosts, service: FakePostsService, harness: TimeHarness, ahead: timedelta
) -> None:
    service.dated = True
    expected = live_feed(service)
    harness.until = T0 + timedelta(minutes=31)
    poller = make_async_poller(aclient, harness, clock=skewed(harness.clock, ahead), leagues="NFL")
    delivered = ids([batch async for batch in poller])
    assert delivered == expected
    assert abs(poller.clock_skew + ahead) <= timedelta(seconds=1)


def written_by_a_synced_poller(client: SportsPosts, harness: TimeHarness) -> MemoryCheckpoint:
    """Twenty minutes of the feed delivered by a poller whose clock agrees with the service."""
    checkpoint = MemoryCheckpoint()
    harness.until = T0 + timedelta(minutes=20)
    first = make_poller(client, harness, leagues="NFL", checkpoint=checkpoint, since=T0)
    delivered = ids(list(first))
    first.close()
    assert delivered
    return checkpoint


@pytest.mark.parametrize("dated", [True, False])
def test_a_clock_behind_resumes_a_valid_checkpoint_only_with_the_services_date(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness, dated: bool
) -> None:
    """Without a Date the watermark looks ten minutes in the future and is refused; with it,
    the service's clock shows it is not, and the poller resumes without loss or repeat."""
    service.dated = dated
    expected = live_feed(service)
    checkpoint = written_by_a_synced_poller(client, harness)
    before = {p for p in expected if service.posts[p].created_at <= checkpoint.load().watermark}  # type: ignore[union-attr]
    harness.until = T0 + timedelta(minutes=31)
    second = make_poller(client, harness, leagues="NFL", checkpoint=checkpoint,
                         clock=skewed(harness.clock, -TEN_MINUTES))
    if not dated:
        with pytest.raises(CheckpointError, match="ahead of the clock"):
            list(second)
        return
    after = ids(list(second))
    assert sorted(before) + after == expected
    assert abs(second.clock_skew - TEN_MINUTES) <= timedelta(seconds=1)


def test_a_clock_ahead_resumes_a_checkpoint_without_sliding_past_unread_posts(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.dated = True
    expected = live_feed(service)
    checkpoint = written_by_a_synced_poller(client, harness)
    state = checkpoint.load()
    assert state is not None
    harness.until = T0 + timedelta(minutes=31)
    second = make_poller(client, harness, leagues="NFL", checkpoint=checkpoint,
                         clock=skewed(harness.clock, TEN_MINUTES))
    after = ids(list(second))
    assert [p for p in expected if service.posts[p].created_at > state.watermark] == after


def test_a_clock_stepped_forward_mid_run_loses_nothing(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.dated = True
    expected = live_feed(service)
    jump = [timedelta(0)]

    def stepping() -> datetime:
        if harness.clock.now >= T0 + timedelta(minutes=12):
            jump[0] = TEN_MINUTES  # NTP, or a person, sets this machine's clock ten minutes on
        return harness.clock.now + jump[0]

    harness.until = T0 + timedelta(minutes=31)
    poller = make_poller(client, harness, leagues="NFL", clock=stepping, since=T0)
    assert ids(list(poller)) == expected


def test_a_watermark_only_the_date_calls_future_is_resumed_with_a_warning(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A clock ten minutes ahead passes a state eight minutes ahead of the service. The
    first answer's Date says it is in the future, but a header cannot refuse a state (a
    stale cached Date would then refuse every valid checkpoint): the poller resumes, as
    with the local clock alone, and says why the clock should be synced."""
    service.dated = True
    service.publish("p1", 10.0)
    future = PollState.start(T0 + timedelta(minutes=8))
    checkpoint = MemoryCheckpoint(future)
    harness.until = T0 + timedelta(minutes=2)
    poller = make_poller(client, harness, checkpoint=checkpoint, clock=skewed(harness.clock, TEN_MINUTES))
    with caplog.at_level(logging.WARNING, logger="sports_posts"):
        assert ids(list(poller)) == []
    assert len([r for r in caplog.records if "a header cannot refuse a state" in r.getMessage()]) == 1


def test_a_date_on_an_error_answer_counts(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    service.dated = True
    service.fail_next(500, "INTERNAL_ERROR")
    harness.until = T0 + timedelta(seconds=30)
    poller = make_poller(client, harness, leagues="NFL", clock=skewed(harness.clock, TEN_MINUTES))
    list(poller)
    assert abs(poller.clock_skew + TEN_MINUTES) <= timedelta(seconds=1)


def test_clock_skew_is_read_only(client: SportsPosts) -> None:
    poller = client.posts.poll(leagues="NFL")
    assert poller.clock_skew == timedelta(0)
    with pytest.raises(AttributeError):
        poller.clock_skew = timedelta(1)  # type: ignore[misc]



def test_an_unjudged_watermark_is_not_saved_when_its_since_id_is_gone(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    """A watermark 18 minutes ahead of a clock ten minutes behind waits for the service's Date
    to be judged. A first answer of SINCE_ID_NOT_FOUND drops the hint but must not save the
    state still being judged: the next answer shows the watermark is 8 minutes in the
    service's future, and the checkpoint is left as it was."""
    service.dated = True
    service.publish("p1", 10.0)
    future = replace(PollState.start(T0 + timedelta(minutes=8)), since_id="gone",
                     since_id_created_at=T0 + timedelta(minutes=8))
    checkpoint = MemoryCheckpoint(future)
    saved: list[PollState] = []
    original_save = checkpoint.save
    checkpoint.save = lambda state: (saved.append(state), original_save(state))[1]  # type: ignore[method-assign,func-returns-value]
    poller = make_poller(client, harness, checkpoint=checkpoint, clock=skewed(harness.clock, -TEN_MINUTES))
    with pytest.raises(CheckpointError, match="ahead of the clock"):
        next(iter(poller))
    assert [q.get("since_id") for q in service.requests] == ["gone", None]
    assert saved == [] and checkpoint.load() == future


def test_a_watermark_judged_valid_is_saved_without_the_since_id_that_was_gone(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    """The same start with a watermark the service's clock finds valid: its first save comes
    once judged, already without the hint, and the post after it is delivered."""
    service.dated = True
    service.publish("p1", 10.0)
    state = replace(PollState.start(T0 - timedelta(minutes=1)), since_id="gone",
                    since_id_created_at=T0 - timedelta(minutes=1))
    checkpoint = MemoryCheckpoint(state)
    saved: list[PollState] = []
    original_save = checkpoint.save
    checkpoint.save = lambda s: (saved.append(s), original_save(s))[1]  # type: ignore[method-assign,func-returns-value,assignment]
    poller = make_poller(client, harness, checkpoint=checkpoint, clock=skewed(harness.clock, -TEN_MINUTES))
    assert [p.id for p in next(iter(poller))] == ["p1"]
    assert saved[0] == replace(state, since_id=None, since_id_created_at=None)


class Crash(BaseException):
    """The process dying mid-call: nothing in the poller catches it."""


@pytest.mark.parametrize(
    ("first_clock", "second_clock"),
    [(TEN_MINUTES, TEN_MINUTES), (timedelta(minutes=7), timedelta(minutes=7)),
     (TEN_MINUTES, timedelta(0)), (TEN_MINUTES, -TEN_MINUTES)],
    ids=["same-machine", "same-machine-within-allowance", "synced-machine", "machine-behind"],
)
def test_a_crash_during_the_first_call_of_a_skewed_poller_loses_nothing_on_restart(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness,
    first_clock: timedelta, second_clock: timedelta,
) -> None:
    """A fresh poller saves its start (its clock's now - lookback) before the first call and
    moves it when that call's Date shows the clock is off. A crash during that call left the
    unmoved start in the service's future, and the restart trusted it: 7 minutes ahead it
    refused the checkpoint, 4 minutes ahead (within the allowance) it skipped every post of
    those minutes in silence. The restart, here or on another machine, now moves it back."""
    service.dated = True
    service.publish("in-lookback", -100.0)
    expected = ["in-lookback", *live_feed(service)]
    checkpoint = MemoryCheckpoint()

    def crash(service: FakePostsService, query: dict[str, str]) -> None:
        service.before_answer = None
        raise Crash

    service.before_answer = crash
    first = make_poller(client, harness, clock=skewed(harness.clock, first_clock), leagues="NFL",
                        checkpoint=checkpoint)
    with pytest.raises(Crash):
        next(iter(first))
    saved = checkpoint.load()
    assert saved is not None and saved.undated, "the start is saved before the first call"
    harness.until = T0 + timedelta(minutes=31)
    second = make_poller(client, harness, clock=skewed(harness.clock, second_clock), leagues="NFL",
                         checkpoint=checkpoint)
    assert ids(list(second)) == expected


BLUR = NOISE + timedelta(seconds=1)
"""How precisely a Date header places the service's now: whole seconds, and estimates
under ``NOISE`` taken as zero. A start the poller moves by it is the service's now minus
lookback to within this, so a post that close to a start may come or not."""

_skews = st.sampled_from([-TEN_MINUTES, timedelta(minutes=-4), timedelta(0), timedelta(seconds=3),
                          timedelta(minutes=4), timedelta(minutes=7), TEN_MINUTES])


@settings(max_examples=40, deadline=None)
# A post half a second after the start: the moved start (Date + 0.5 s, the middle of its
# second) lands on it. Either outcome is right there; the post after it must come.
@example(first_clock=timedelta(seconds=3), second_clock=timedelta(minutes=-4), crash_at=1,
         created=[-179.5, -176.5])
@example(first_clock=timedelta(seconds=3), second_clock=timedelta(0), crash_at=2, created=[-179.5, -176.5])
@given(
    first_clock=_skews,
    second_clock=_skews,
    crash_at=st.integers(1, 5),
    created=st.lists(st.integers(-1200, 1200).map(lambda x: x / 2), min_size=1, max_size=20),
)
def test_a_fresh_poller_crashing_at_any_call_under_any_skews_loses_nothing_repeats_at_most_its_batch(
    first_clock: timedelta, second_clock: timedelta, crash_at: int, created: list[float]
) -> None:
    """A fresh poller (no since=, empty checkpoint) on a clock off by ``first_clock`` dies
    during its ``crash_at``-th call; another (off by ``second_clock``) resumes the checkpoint.
    Every post created after the service's start minus lookback is delivered; only the batch
    in hand when the first died may repeat. A post from before that start comes only from an
    undated start left by the first clock behind, or moved back by the second clock ahead,
    never earlier than those two skews allow: never forward, so nothing is lost. Each bound
    holds to within ``BLUR``, what a Date header can tell (the docs' "a second or two"): a
    post created that close to one may come or not."""
    clock = FakeClock()
    service = FakePostsService(clock)
    service.dated = True
    for n, seconds in enumerate(created):
        service.publish(f"p{n:02d}", seconds, delay=5)
    start = T0 - DEFAULT_LOOKBACK
    expected = {p.id for p in service.posts.values() if p.created_at > start + BLUR}

    def crash(svc: FakePostsService, query: dict[str, str]) -> None:
        if len(svc.requests) == crash_at:
            raise Crash

    service.before_answer = crash
    harness = TimeHarness(clock, until=1300.0)
    checkpoint = MemoryCheckpoint()
    runs: list[list[list[str]]] = [[], []]
    http = httpx.Client(transport=httpx.MockTransport(service.handler))
    with SportsPosts(api_key="sk_test_poller", base_url=BASE_URL, http_client=http) as client:
        for run, skew in enumerate((first_clock, second_clock)):
            poller = make_poller(client, harness, clock=skewed(clock, skew), checkpoint=checkpoint)
            try:
                for batch in poller:
                    runs[run].append([p.id for p in batch])
            except Crash:
                pass
    http.close()
    first = [i for b in runs[0] for i in b]
    second = [i for b in runs[1] for i in b]
    assert expected <= set(first) | set(second), "a post was lost"
    assert set(first) & set(second) <= set(runs[0][-1] if runs[0] else []), "more than the batch in hand repeated"
    assert len(second) == len(set(second)) and len(first) == len(set(first))
    earliest = start + min(first_clock, timedelta(0)) - max(second_clock, timedelta(0)) - BLUR
    extras = {i for i in set(first) | set(second) if i not in expected}
    assert all(service.posts[i].created_at > earliest for i in extras), "a post from before any start"


def test_an_undated_flag_on_a_state_that_has_delivered_posts_moves_nothing(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness
) -> None:
    """Only a bare start can be undated; on a hand-edited state that holds delivered posts
    the flag is ignored: moving it back would deliver those posts again."""
    service.dated = True
    service.publish("delivered", -30.0)
    service.publish("new", 10.0)
    at = T0 - timedelta(seconds=30)
    state = PollState(watermark=at, floor=T0 - timedelta(minutes=3), seen={"delivered": at}, undated=True)
    checkpoint = MemoryCheckpoint(state)
    harness.until = T0 + timedelta(minutes=2)
    poller = make_poller(client, harness, checkpoint=checkpoint, clock=skewed(harness.clock, TEN_MINUTES))
    assert ids(list(poller)) == ["new"]
    sinces = [datetime.fromisoformat(q["since"].replace("Z", "+00:00")) for q in service.requests]
    assert min(sinces) == state.floor, "the floor never moved back"
