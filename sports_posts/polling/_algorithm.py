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
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Callable, Optional, Union

from .._errors import (
    APIConnectionError,
    InternalServerError,
    InvalidParameterError,
    PageLimitError,
    RateLimitError,
    SinceIdNotFoundError,
)
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
]

log = logging.getLogger("sports_posts.polling")

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

    params: Mapping[str, Any]


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


def _retry_wait(
    config: PollConfig, exc: BaseException, failures: int, rand: Callable[[], float]
) -> Optional[float]:
    """Seconds to wait before asking again, or ``None`` when the error must be raised.

    Raised: every 4xx but 429 (401, 402, 403, a 400 other than a recoverable
    ``SINCE_ID_NOT_FOUND``...), a body that is not what the spec says, anything unknown.
    Retrying those would spend the customer's calls on a certain failure.
    """
    if isinstance(exc, RateLimitError):
        if exc.retry_after is not None:
            if exc.retry_after > MAX_WAIT:
                log.warning(
                    "the service asked to retry after %.0f s; waiting %.0f s (a day, the "
                    "poller's longest wait) and asking again then",
                    min(exc.retry_after, 1e18), MAX_WAIT,
                )
            # never less than the back-off: a `Retry-After: 0` repeated must not spin
            return max(min(exc.retry_after, MAX_WAIT), config.backoff(failures, rand))
        return config.backoff(failures, rand, cap=RATE_LIMIT_BACKOFF_CAP)
    if isinstance(exc, (InternalServerError, APIConnectionError)):
        return config.backoff(failures, rand)
    return None


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
    estimating = skew is not None  # else no answer will ever date the service's clock
    skew = skew if skew is not None else ClockSkew()
    ahead = state.ahead_of(clock() + skew.offset)
    # Ahead of this clock, but by less than a skew the first answer may reveal: judged then.
    unjudged = estimating and MAX_CLOCK_SKEW < ahead <= MAX_CLOCK_SKEW + skew.max_correction
    if not unjudged:
        state.check_not_ahead_of(clock() + skew.offset)
        yield Commit(state)  # the starting point is saved before the first call, so a restart keeps it
    unpaid = 0  # calls since the last wait
    warned_future = False
    first_answer = True  # the first page answered in this run: the service's clock is known then

    def wait(seconds: float, reason: str) -> Sleep:
        nonlocal unpaid
        paid = max(seconds, unpaid * config.seconds_per_call)
        if paid > seconds:
            log.info(
                "call budget: waiting %.0f s rather than %.0f s (%d call(s) since the last wait)",
                paid,
                seconds,
                unpaid,
            )
        unpaid = 0
        return Sleep(paid, reason)

    while True:
        started = clock()  # local; the service's time once the answers have dated its clock
        found: dict[str, Post] = {}
        page = 1
        failures = 0
        previous: Optional[PostsResponse] = None  # the last page read in this cycle
        while True:
            if page > config.max_pages:
                raise PageLimitError(
                    f"a polling cycle read {config.max_pages} pages of GET /posts and the service "
                    f"still claims more (PollConfig.max_pages = {config.max_pages}): a service "
                    "that ignores since, or a feed too wide for one poller; narrow the filters",
                    max_pages=config.max_pages,
                )
            result = yield Fetch(config.query(state, page))
            unpaid += 1
            if isinstance(result, SinceIdNotFoundError) and state.since_id is not None:
                # `since` carries the same bound (the since_id post is at or below the
                # floor), so dropping the hint changes neither what is lost nor repeated.
                log.info(
                    "since_id %s is no longer available; continuing with since only", state.since_id
                )
                state = state.without_since_id()
                if not unjudged:  # else it is saved once the service's clock has judged it
                    yield Commit(state)
                continue
            if (
                isinstance(result, InvalidParameterError)
                and not config.limit_given
                and config.limit > REFERENCE_PAGE_MAX_LIMIT
                and "limit" in str(result).lower()
            ):
                log.warning(
                    "the service refused limit=%d (%s); polling with limit=%d, the reference page's maximum",
                    config.limit, result.error_message, REFERENCE_PAGE_MAX_LIMIT,
                )
                config = replace(config, limit=REFERENCE_PAGE_MAX_LIMIT)
                # page numbers mean other posts with another page size
                page, found, previous = 1, {}, None
                continue
            if isinstance(result, BaseException):
                seconds = _retry_wait(config, result, failures, rand)
                if seconds is None:
                    raise result
                failures += 1
                log.warning(
                    "GET /posts page %d failed (%s); retrying in %.1f s", page, result, seconds
                )
                yield wait(seconds, f"retry after {type(result).__name__}")
                continue
            if not isinstance(result, PostsResponse):
                raise TypeError(
                    f"a Fetch must be answered with a PostsResponse, got {type(result).__name__}"
                )
            failures = 0
            if first_answer:
                first_answer = False
                moved = _dated_start(state, from_clock, skew, clock() + skew.offset - config.lookback)
                if moved is not None:
                    # The start was now - lookback on a clock the service disagrees with:
                    # move it to the service's now - lookback and read again from there.
                    log.info("starting point moved by %s to match the service's clock", moved.floor - state.floor)
                    state = moved
                    unjudged = False
                    yield Commit(state)
                    page, found, previous = 1, {}, None
                    continue
                # Refused only when neither this machine's clock nor the header puts it
                # within the allowance: a stale Date (a cache) never refuses a valid state.
                state.check_not_ahead_of(clock() + max(skew.offset, timedelta(0)))
                if state.ahead_of(clock() + skew.offset) > MAX_CLOCK_SKEW:
                    log.warning(
                        "the service's Date header puts the poller's watermark %s ahead of its "
                        "clock; this machine's clock does not, so it resumes (a header cannot "
                        "refuse a state): if this machine's clock runs ahead, sync it (NTP)",
                        state.ahead_of(clock() + skew.offset),
                    )
                if unjudged:
                    unjudged = False
                    yield Commit(state)
            if previous is not None:
                result.check_follows(previous)  # a page that does not advance ends the run
            previous = result
            reached_floor = False
            for post in result.items:
                # The local check repeats the service's exclusive `since`: a post at or
                # below the floor has been forgotten and would otherwise repeat.
                if post.created_at <= state.floor:
                    reached_floor = True
                elif post.id not in state.seen:
                    found.setdefault(post.id, post)
            # Newest first: past the floor every later page is older still, so a service
            # that ignored `since` costs no more pages than one that honoured it.
            if not result.pagination.has_next or not result.items or reached_floor:
                break
            page += 1
        batch = sorted(found.values(), key=lambda p: (p.created_at, p.id))
        log.debug("cycle done: %d page(s), %d new post(s)", page, len(batch))
        # The service's now at the cycle's start, as far as the poller can tell: the local
        # clock, moved back (never forward) by the Date headers. The window slides to it at
        # most, and no post's created_at moves the watermark past it.
        now = shift(started, min(skew.cautious_offset, timedelta(0)))
        if batch and not warned_future:
            latest = shift(started, max(skew.offset, skew.cautious_offset, timedelta(0)))
            ahead = batch[-1].created_at - latest
            if ahead > FUTURE_TOLERANCE:
                warned_future = True
                log.warning(
                    "post %s is dated %s, %s ahead of the service's now as far as the poller "
                    "can tell (this machine's clock and the service's Date header): delivered, "
                    "but the watermark does not move past now (a bad record on the service, or "
                    "this machine's clock is behind); logged once",
                    batch[-1].id, iso(batch[-1].created_at), ahead,
                )
        advanced = state.advance(batch, config.lookback, now, ceiling=now)
        if batch:
            yield Deliver(batch, advanced)
        elif advanced != state:
            yield Commit(advanced)  # an idle cycle only slid the window: nothing is pending
        state = advanced
        yield wait(config.interval, "interval")
