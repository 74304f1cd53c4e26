"""The since-watermark polling algorithm, written once and without I/O.

``poll_cycles`` is a generator that yields actions (``Fetch``, ``Sleep``,
``Deliver``, ``Commit``) and receives their results: a
``PostsResponse`` or the exception a fetch raised. The sync
``Poller`` and the async ``AsyncPoller`` only
execute those actions, so late indexing, paging, ``SINCE_ID_NOT_FOUND``, back-off and the
call budget live (and are tested) here.

How a cycle works: ask GET /posts with ``sort=recent`` and ``since=<floor>``, where the
floor trails the newest delivered ``created_at`` (the watermark) by ``lookback``, page
through every result, drop the ids already delivered inside that window, and deliver the
rest oldest first. The overlap is what catches a post indexed after a newer one was
served; the remembered ids are what keep it from being delivered twice, and they are
forgotten as soon as they fall below the floor, so memory is bounded by the window.

Clocks can only make the poller more careful. The evidence it moves on is its own posts:
the newest ``created_at`` delivered and the ids it has seen. The ``Date`` header of the
service's answers (``ClockSkew``: one sample, a median, or a proxy's clock) may move a
lower time bound (where an empty checkpoint starts, how far an idle cycle slides the
window) earlier than this machine's clock alone would put it, never later: a forged,
stale or fast ``Date`` then costs a wider window, not lost posts. A post dated beyond the
service's now (this machine's clock, corrected only backwards) is delivered, but the
watermark stops at that now, so one bad record cannot move the window past posts not yet
created (logged once when it is further ahead than ``FUTURE_TOLERANCE``).
"""

from __future__ import annotations

import logging
import random as _random
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Callable, Optional, Union

from .._errors import (
    APIConnectionError,
    InternalServerError,
    InvalidParameterError,
    PageLimitError,
    RateLimitError,
    SinceIdNotFoundError,
)
from .._transport import RetryPolicy, equal_jitter
from ..models.post import Post, PostsResponse
from ._config import REFERENCE_PAGE_MAX_LIMIT, SECONDS_PER_DAY, PollConfig
from ._skew import ClockSkew
from ._state import MAX_CLOCK_SKEW, PollState, iso, shift, utc

__all__ = [
    "Action",
    "Commit",
    "Deliver",
    "Fetch",
    "Sleep",
    "poll_cycles",
    "retry_policy",
]

log = logging.getLogger("sports_posts.polling")

BACKOFF_INITIAL = 1.0
"""The poller's first back-off: 1 s, then 2, 4, ... (each half fixed, half at random)."""
BACKOFF_MIN_CAP = 60.0
"""The longest back-off after a 5xx or a connection error: a minute, or ``interval`` if longer."""
RATE_LIMIT_BACKOFF_CAP = 3600.0
"""Repeated 429s without ``Retry-After`` (a monthly quota says nothing) back off up to an
hour, not a minute: a quota spent on the 3rd is not worth asking about 40,000 times."""
FUTURE_TOLERANCE = timedelta(seconds=60)
"""A post dated further than this ahead of the service's now (as the poller can tell it) is
logged as "from the future": the minute of skew between ``created_at`` and the service's
clock that ``DEFAULT_LOOKBACK`` allows for. Nearer ones are ordinary skew. Either way the
watermark stops at now."""
MAX_WAIT = SECONDS_PER_DAY
"""The longest single wait the poller makes for a ``Retry-After``: a longer one (a monthly
quota, a forged header, ``99999999999``) is capped to a day, logged, and the call is asked
again then (one call a day at most), never an ``OverflowError`` of the clock or the sleep."""


@dataclass(frozen=True)
class Fetch:
    """Send GET /posts with these keyword arguments of ``posts.list``; send back the
    [`PostsResponse`][sports_posts.PostsResponse], or the exception the request raised."""

    params: Mapping[str, object]


@dataclass(frozen=True)
class Sleep:
    """Wait this many seconds (a driver may cut it short on ``stop()``); send back ``None``."""

    seconds: float
    reason: str


@dataclass(frozen=True)
class Deliver:
    """Hand ``batch`` to the consumer; once it asks for the next one, commit ``state``."""

    batch: list[Post]
    state: PollState


@dataclass(frozen=True)
class Commit:
    """Save ``state`` to the checkpoint now (the starting point, or a dropped ``since_id``)."""

    state: PollState


Action = Union[Fetch, Sleep, Deliver, Commit]
Steps = Generator[Action, object, None]
"""A part of the algorithm, run with ``yield from``: yields actions, receives their results."""


def _retried_by_the_poller(exc: BaseException) -> bool:
    """429, every 5xx, every connection error. Raised: every 4xx but 429 (401, 402, 403, a
    400 other than a recoverable ``SINCE_ID_NOT_FOUND``...), a body that is not what the
    spec says, anything unknown: retrying those would spend the customer's calls on a
    certain failure."""
    return isinstance(exc, (RateLimitError, InternalServerError, APIConnectionError))


def _warn_long_retry_after(seconds: float) -> None:
    log.warning(
        "the service asked to retry after %.0f s; waiting %.0f s (a day, the "
        "poller's longest wait) and asking again then",
        min(seconds, 1e18), MAX_WAIT,
    )


def retry_policy(config: PollConfig, rand: Callable[[], float]) -> RetryPolicy:
    """The poller's retry policy: the client's, with the poller's differences. It backs off
    from 1 s up to a minute (or ``interval``), up to an hour after a 429 that names no time;
    it honours a 429's ``Retry-After`` up to a day (never less than the back-off, so a
    repeated ``Retry-After: 0`` cannot spin), and retries every 5xx and connection error."""
    return RetryPolicy(
        retried=_retried_by_the_poller,
        initial=BACKOFF_INITIAL,
        cap=max(config.interval, BACKOFF_MIN_CAP),
        quota_cap=max(config.interval, RATE_LIMIT_BACKOFF_CAP),
        jitter=equal_jitter,
        rand=rand,
        retry_after_from=(RateLimitError,),
        max_retry_after=MAX_WAIT,
        on_long_retry_after=_warn_long_retry_after,
        at_least_backoff=True,
    )


def _dated_start(
    state: PollState, from_clock: bool, skew: ClockSkew, service_start: datetime
) -> Optional[PollState]:
    """The starting point by the service's clock, once an answer has dated it; None when it stays.

    This run's own start (``from_clock``) moves either way; an undated one saved by an
    earlier run moves back only, by this machine's offset (the earlier machine's is not
    known) and at least to the service's now - lookback. Never later than this machine's
    clock put it: a ``Date`` may only make the start earlier (clocks can only make the
    poller more careful)."""
    if from_clock:
        back = min(skew.cautious_offset, timedelta(0))
        return PollState.start(shift(state.floor, back), filters=state.filters) if back else None
    if not state.undated or state.seen or state.since_id or state.watermark != state.floor:
        return None  # only a bare start can be undated: anything else has delivered posts
    start = min(shift(state.floor, min(skew.cautious_offset, timedelta(0))), utc(service_start))
    return PollState.start(start, filters=state.filters) if start != state.floor else None


def poll_cycles(
    config: PollConfig,
    state: PollState,
    *,
    clock: Callable[[], datetime],
    rand: Callable[[], float] = _random.random,
    skew: Optional[ClockSkew] = None,
    from_clock: bool = False,
) -> Generator[Action, object, None]:
    """The polling algorithm: yields actions, receives their results, never returns.

    ``clock`` is this machine's UTC clock; ``skew`` (fed by the caller with each answer's
    ``Date``) turns its readings into the service's time, which stamps ``created_at``: a
    cycle's start minus ``lookback`` is where the window may slide to. ``from_clock`` says
    that ``state`` starts at the local clock's now minus ``lookback``: once the first answer
    dates the service's clock, a start that was off by more than ``NOISE`` is moved and the
    first page asked again (one call, once). An ``undated`` state saved by an earlier run
    (that crashed in its first call, maybe on another machine) is moved back the same way,
    never forward, and never left in the service's future: it delivered nothing, so an
    earlier start repeats nothing, and a later one could lose posts. A stored watermark
    ahead of the local clock by more than ``MAX_CLOCK_SKEW`` is judged by the service's
    clock once its first answer comes (and refused at once when no correction could excuse
    it); every state is judged by the service's clock after that first answer.

    Budget: every call made since the last wait is paid for by the next wait, which is at
    least ``calls x 86400 / max_calls_per_day`` seconds; so over any run the calls average
    at most ``max_calls_per_day`` a day, whatever mix of busy, idle and failing cycles.
    """
    run = _Run(config, state, clock=clock, rand=rand, skew=skew, from_clock=from_clock)
    yield from run.begin()
    while True:
        yield from run.cycle()


@dataclass
class _Start:
    """The run's starting point, until the first answer dates the service's clock."""

    from_clock: bool
    """It is this machine's now - lookback (else it was stored, or given as ``since``)."""
    unsaved: bool
    """It is ahead of this clock by less than a skew the first answer may reveal: it is
    judged, then saved, once that answer comes."""


@dataclass
class _Window:
    """The pages of one cycle read so far."""

    page: int = 1
    found: dict[str, Post] = field(default_factory=dict)
    previous: Optional[PostsResponse] = None  # the last page read
    failures: int = 0  # in a row, for the back-off

    def restart(self) -> None:
        """Read again from the first page (another page size, or another start)."""
        self.page, self.found, self.previous = 1, {}, None

    def take(self, answer: PostsResponse, state: PollState) -> bool:
        """Keep the page's posts that are new to ``state``; whether to read the next page."""
        if self.previous is not None:
            answer.check_follows(self.previous)  # a page that does not advance ends the run
        self.previous = answer
        reached_floor = False
        for post in answer.items:
            # The local check repeats the service's exclusive `since`: a post at or
            # below the floor has been forgotten and would otherwise repeat.
            if post.created_at <= state.floor:
                reached_floor = True
            elif post.id not in state.seen:
                self.found.setdefault(post.id, post)
        # Newest first: past the floor every later page is older still, so a service
        # that ignored `since` costs no more pages than one that honoured it.
        if not answer.pagination.has_next or not answer.items or reached_floor:
            return False
        self.page += 1
        return True


class _Run:
    """One run of the algorithm: the state it moves and what it has learnt on the way. Each
    method is one step of a cycle; ``poll_cycles`` strings them together."""

    def __init__(
        self,
        config: PollConfig,
        state: PollState,
        *,
        clock: Callable[[], datetime],
        rand: Callable[[], float],
        skew: Optional[ClockSkew],
        from_clock: bool,
    ) -> None:
        self.config = config
        self.state = state
        self.clock = clock
        self.retry = retry_policy(config, rand)
        self.skew = skew if skew is not None else ClockSkew()
        # Without a skew estimate no answer will ever date the service's clock.
        unsaved = self.excusably_ahead() and skew is not None
        self.start: Optional[_Start] = _Start(from_clock, unsaved=unsaved)
        self.unpaid = 0  # calls since the last wait
        self.warned_future = False

    def service_now(self) -> datetime:
        """The service's now, as far as the answers so far have dated its clock."""
        return self.clock() + self.skew.offset

    def excusably_ahead(self) -> bool:
        """Whether the state is ahead of this clock, but by less than a skew the first answer
        may reveal: it is judged then."""
        ahead = self.state.ahead_of(self.service_now())
        return MAX_CLOCK_SKEW < ahead <= MAX_CLOCK_SKEW + self.skew.max_correction

    def unsaved(self) -> bool:
        return self.start is not None and self.start.unsaved

    def begin(self) -> Steps:
        """Save the starting point before the first call, so that a restart keeps it."""
        if not self.unsaved():
            self.state.check_not_ahead_of(self.service_now())
            yield Commit(self.state)

    def cycle(self) -> Steps:
        """Read the window, deliver what is new oldest first, then wait the interval."""
        started = self.clock()  # local; the service's time once the answers have dated its clock
        window = _Window()
        yield from self.read(window)
        batch = sorted(window.found.values(), key=lambda p: (p.created_at, p.id))
        log.debug("cycle done: %d page(s), %d new post(s)", window.page, len(batch))
        # The service's now at the cycle's start, as far as the poller can tell: the local
        # clock, moved back (never forward) by the Date headers. The window slides to it at
        # most, and no post's created_at moves the watermark past it.
        now = shift(started, min(self.skew.cautious_offset, timedelta(0)))
        self.warn_future(batch, started)
        advanced = self.state.advance(batch, self.config.lookback, now, ceiling=now)
        if batch:
            yield Deliver(batch, advanced)
        elif advanced != self.state:
            yield Commit(advanced)  # an idle cycle only slid the window: nothing is pending
        self.state = advanced
        yield self.wait(self.config.interval, "interval")

    def read(self, window: _Window) -> Steps:
        """Fetch the window's pages, newest first, until the floor or the last page."""
        while True:
            if window.page > self.config.max_pages:
                raise PageLimitError(
                    f"a polling cycle read {self.config.max_pages} pages of GET /posts and the "
                    f"service still claims more (PollConfig.max_pages = {self.config.max_pages}): "
                    "a service that ignores since, or a feed too wide for one poller; narrow the "
                    "filters",
                    max_pages=self.config.max_pages,
                )
            result = yield Fetch(self.config.query(self.state, window.page))
            self.unpaid += 1
            answer = yield from self.answered(result, window)
            if answer is not None and not window.take(answer, self.state):
                return

    def answered(
        self, result: object, window: _Window
    ) -> Generator[Action, object, Optional[PostsResponse]]:
        """The page a fetch answered, or None when the page is to be asked again (after an
        error the poller recovers from, or a starting point moved)."""
        if isinstance(result, BaseException):
            yield from self.recover(result, window)
            return None
        if not isinstance(result, PostsResponse):
            raise TypeError(
                f"a Fetch must be answered with a PostsResponse, got {type(result).__name__}"
            )
        window.failures = 0
        if self.start is not None and (yield from self.judge_start()):
            window.restart()
            return None
        return result

    def recover(self, error: BaseException, window: _Window) -> Steps:
        """Drop a ``since_id`` the service lost, fall back to the reference page's limit, or
        wait and ask again; raise what cannot be recovered from."""
        if isinstance(error, SinceIdNotFoundError) and self.state.since_id is not None:
            # `since` carries the same bound (the since_id post is at or below the
            # floor), so dropping the hint changes neither what is lost nor repeated.
            log.info("since_id %s is no longer available; continuing with since only", self.state.since_id)
            self.state = self.state.without_since_id()
            if not self.unsaved():  # else it is saved once the service's clock has judged it
                yield Commit(self.state)
        elif self.limit_refused(error):
            window.restart()  # page numbers mean other posts with another page size
        elif self.retry.retries(error):
            seconds = self.retry.wait(error, window.failures)
            window.failures += 1
            log.warning("GET /posts page %d failed (%s); retrying in %.1f s", window.page, error, seconds)
            yield self.wait(seconds, f"retry after {type(error).__name__}")
        else:
            raise error

    def limit_refused(self, error: BaseException) -> bool:
        """Whether the service refused the machine-readable description's page size (spec
        4.1 discrepancy); if so the poller falls back to the reference page's."""
        config = self.config
        if not (
            isinstance(error, InvalidParameterError)
            and not config.limit_given
            and config.limit > REFERENCE_PAGE_MAX_LIMIT
            and "limit" in str(error).lower()
        ):
            return False
        log.warning(
            "the service refused limit=%d (%s); polling with limit=%d, the reference page's maximum",
            config.limit, error.error_message, REFERENCE_PAGE_MAX_LIMIT,
        )
        self.config = replace(config, limit=REFERENCE_PAGE_MAX_LIMIT)
        return True

    def judge_start(self) -> Generator[Action, object, bool]:
        """At the run's first answer, date the starting point by the service's clock: True
        when it moved (the window is then read again from the new start)."""
        start, self.start = self.start, None
        assert start is not None  # judged once, at the first answer
        moved = _dated_start(
            self.state, start.from_clock, self.skew, self.service_now() - self.config.lookback
        )
        if moved is not None:
            # The start was now - lookback on a clock the service disagrees with:
            # move it to the service's now - lookback and read again from there.
            log.info("starting point moved by %s to match the service's clock", moved.floor - self.state.floor)
            self.state = moved
            yield Commit(self.state)
            return True
        # Refused only when neither this machine's clock nor the header puts it
        # within the allowance: a stale Date (a cache) never refuses a valid state.
        self.state.check_not_ahead_of(self.clock() + max(self.skew.offset, timedelta(0)))
        if self.state.ahead_of(self.service_now()) > MAX_CLOCK_SKEW:
            log.warning(
                "the service's Date header puts the poller's watermark %s ahead of its "
                "clock; this machine's clock does not, so it resumes (a header cannot "
                "refuse a state): if this machine's clock runs ahead, sync it (NTP)",
                self.state.ahead_of(self.service_now()),
            )
        if start.unsaved:
            yield Commit(self.state)
        return False

    def warn_future(self, batch: list[Post], started: datetime) -> None:
        """Log, once a run, a post dated further ahead of the service's now than
        ``FUTURE_TOLERANCE``: delivered, but the watermark stops at now."""
        if not batch or self.warned_future:
            return
        latest = shift(started, max(self.skew.offset, self.skew.cautious_offset, timedelta(0)))
        ahead = batch[-1].created_at - latest
        if ahead > FUTURE_TOLERANCE:
            self.warned_future = True
            log.warning(
                "post %s is dated %s, %s ahead of the service's now as far as the poller "
                "can tell (this machine's clock and the service's Date header): delivered, "
                "but the watermark does not move past now (a bad record on the service, or "
                "this machine's clock is behind); logged once",
                batch[-1].id, iso(batch[-1].created_at), ahead,
            )

    def wait(self, seconds: float, reason: str) -> Sleep:
        """A wait of ``seconds``, or longer to pay for the calls made since the last wait."""
        paid = max(seconds, self.unpaid * self.config.seconds_per_call)
        if paid > seconds:
            log.info(
                "call budget: waiting %.0f s rather than %.0f s (%d call(s) since the last wait)",
                paid, seconds, self.unpaid,
            )
        self.unpaid = 0
        return Sleep(paid, reason)
