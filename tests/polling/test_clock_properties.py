"""Generated worlds of wrong clocks: this machine's clock off, each answer's ``Date`` honest,
absent, stale (a cache), forged once, alternating, or a proxy's constant offset; posts
indexed late and posts dated ahead; a crash at any batch. Nothing served is lost, only the
batch in hand at a crash repeats, and the checkpoint (as JSON) always loads."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Optional

import httpx
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sports_posts import Poller, PollState, Post, SportsPosts
from support.fake_service import BASE_URL, T0, FakeClock, FakePost, FakePostsService

from .conftest import TimeHarness

MODES = ("honest", "absent", "stale", "first-forged", "alternating", "proxy")
CAREFUL_DATES = ("honest", "stale")
"""The Date modes that can show a machine whose clock runs ahead where the service is: with
any other, such a machine loses posts by its own clock, which no header is trusted to fix."""


@dataclass
class World:
    local_skew: float  # this machine's clock minus the service's, seconds
    mode: str
    date_offset: float  # what the non-honest modes add to the service's clock, seconds
    posts: list[tuple[float, float, str]]  # created (s after T0), indexing delay, league
    ahead: list[tuple[float, float]]  # posts dated ahead: visible at (s after T0), dated ahead by (s)
    interval: float
    limit: int
    crash_at: Optional[int]  # the consumer dies while handling this batch (1-based)
    since_given: bool


@st.composite
def worlds(draw: st.DrawFn) -> World:
    mode = draw(st.sampled_from(MODES))
    skews = [-7200.0, -600.0, -30.0, 0.0, 30.0]
    if mode in CAREFUL_DATES:
        skews.append(600.0)  # ahead by more than the lookback: the Date must correct it
    return World(
        local_skew=draw(st.sampled_from(skews)),
        mode=mode,
        date_offset=draw(st.sampled_from([36000.0, -36000.0, 1800.0, -1800.0, 90000.0, -600.0])),
        posts=draw(
            st.lists(
                st.tuples(
                    st.integers(1, 1200).map(lambda x: x / 2),
                    st.sampled_from([0.0, 0.0, 5.0, 60.0, 100.0]),
                    st.sampled_from(["NFL", "NFL", "NBA"]),
                ),
                min_size=1,
                max_size=25,
            )
        ),
        ahead=draw(
            st.lists(
                st.tuples(st.integers(1, 600).map(float), st.sampled_from([120.0, 3600.0, 365 * 86400.0])),
                max_size=2,
            )
        ),
        interval=draw(st.sampled_from([30.0, 60.0, 90.0])),
        limit=draw(st.integers(3, 10)),
        crash_at=draw(st.one_of(st.none(), st.integers(1, 5))),
        since_given=draw(st.booleans()),
    )


class JsonCheckpoint:
    """A checkpoint that keeps only the JSON text, as a file or a redis key would: every
    load proves the saved state still reads back."""

    def __init__(self) -> None:
        self.text: Optional[str] = None

    def load(self) -> Optional[PollState]:
        return None if self.text is None else PollState.from_json(self.text)

    def save(self, state: PollState) -> None:
        self.text = state.to_json()


def date_header(world: World, n: int, now: datetime) -> Optional[str]:
    """The ``Date`` the n-th answer carries, served at the service's ``now``."""
    offset = timedelta(seconds=world.date_offset)
    when: Optional[datetime] = now
    if world.mode == "absent":
        when = None
    elif world.mode == "stale":
        when = now - abs(offset) if abs(offset) <= timedelta(hours=1) else now - timedelta(minutes=10)
    elif world.mode == "first-forged" and n == 0 or world.mode == "alternating" and n % 2 or world.mode == "proxy":
        when = now + offset
    return None if when is None else format_datetime(when.astimezone(timezone.utc), usegmt=True)


def build(world: World) -> tuple[FakeClock, FakePostsService, set[str], httpx.MockTransport]:
    clock = FakeClock()
    service = FakePostsService(clock)
    expected: set[str] = set()
    for n, (created, delay, league) in enumerate(world.posts):
        service.publish(f"p{n:02d}", created, delay=delay, league=league)
        if league == "NFL":
            expected.add(f"p{n:02d}")
    for n, (visible, ahead) in enumerate(world.ahead):
        seen_at = T0 + timedelta(seconds=visible)
        service.posts[f"f{n}"] = FakePost(f"f{n}", seen_at + timedelta(seconds=ahead), seen_at)
        expected.add(f"f{n}")
    answered = [0]

    def handler(request: httpx.Request) -> httpx.Response:
        now = clock.now
        response = service.handler(request)
        date = date_header(world, answered[0], now)
        answered[0] += 1
        if date is not None:
            response.headers["Date"] = date
        return response

    return clock, service, expected, httpx.MockTransport(handler)


class Crash(Exception):
    """The consumer dies while handling a batch."""


def run(world: World) -> None:
    clock, service, expected, transport = build(world)
    local = timedelta(seconds=world.local_skew)
    checkpoint = JsonCheckpoint()
    runs: list[list[list[Post]]] = [[], []]
    crashed = False
    http = httpx.Client(transport=transport)
    with SportsPosts(api_key="sk_test_properties", base_url=BASE_URL, http_client=http) as client:
        for n, crash_at in enumerate((world.crash_at, None)):
            until = (clock.now - T0).total_seconds() + 1400.0  # each run has time to catch up
            harness = TimeHarness(clock, until=until)
            poller = harness.attach(
                Poller(
                    client,
                    filters={"leagues": "NFL", "limit": world.limit},
                    since=T0 - timedelta(hours=3) if world.since_given else None,
                    interval=world.interval,
                    checkpoint=checkpoint,
                    clock=lambda: clock.now + local,
                    sleep=harness.sleep,
                    rand=harness.rand,
                )
            )
            try:
                for batch in poller:
                    runs[n].append(batch)
                    if len(runs[n]) == crash_at:
                        raise Crash
            except Crash:
                crashed = True
            if checkpoint.text is not None:
                assert checkpoint.load() is not None  # the checkpoint always loads
    http.close()
    first = [p.id for b in runs[0] for p in b]
    second = [p.id for b in runs[1] for p in b]
    handled = runs[0][:-1] if crashed else runs[0]
    delivered = {p.id for b in handled for p in b} | set(second)
    lost = expected - delivered
    assert not lost, f"lost {sorted(lost)}"
    assert delivered <= set(service.posts), "a post of another league"
    assert len(first) == len(set(first)) and len(second) == len(set(second)), "a repeat within a run"
    repeated = set(first) & set(second)
    allowed = {p.id for p in runs[0][-1]} if crashed else set()
    assert repeated <= allowed, f"repeated beyond the batch in hand: {sorted(repeated - allowed)}"


# Three silent losses, as explicit examples: a forged first answer (FORGED_FIRST), a fast
# proxy clock (FAST_PROXY), and a post dated a year ahead by an honest service (YEAR_AHEAD).
FORGED_FIRST = World(0.0, "first-forged", 36000.0, [(n * 20.0 + 1, 5.0, "NFL") for n in range(25)], [], 60.0, 10, None, False)
FAST_PROXY = World(0.0, "proxy", 1800.0, [(n * 20.0 + 1, 5.0, "NFL") for n in range(25)], [], 60.0, 10, None, True)
YEAR_AHEAD = World(0.0, "honest", 0.0, [(n * 20.0 + 200, 5.0, "NFL") for n in range(25)], [(100.0, 365 * 86400.0)], 60.0, 10, 2, True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(FORGED_FIRST)
@example(FAST_PROXY)
@example(YEAR_AHEAD)
@given(worlds())
def test_no_clock_and_no_post_dated_ahead_loses_a_post(world: World) -> None:
    run(world)
