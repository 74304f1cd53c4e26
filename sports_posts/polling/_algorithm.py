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

import json
import logging
import random as _random
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional, Union

from .._errors import (
    APIConnectionError,
    InternalServerError,
    InvalidParameterError,
    PageLimitError,
    ParameterError,
    RateLimitError,
    SinceIdNotFoundError,
    SportsPostsError,
)
from .._params import encode_datetime, encode_posts_params
from ..models.post import Post, PostsResponse
from ._skew import ClockSkew

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_LOOKBACK",
    "MAX_CLOCK_SKEW",
    "MAX_PAGES_PER_CYCLE",
    "Action",
    "CheckpointError",
    "Commit",
    "Deliver",
    "Fetch",
    "PollConfig",
    "PollState",
    "Sleep",
    "poll_cycles",
]

log = logging.getLogger("sports_posts.polling")

STATE_VERSION = 1
DEFAULT_LOOKBACK: timedelta = timedelta(seconds=180)
"""Two minutes of indexing delay (spec 1: "indexed within seconds") plus one minute for
clock skew between the platform's ``created_at`` and the service, and for the cycle's own
duration."""
DEFAULT_LIMIT = 100
"""The largest page of the machine-readable description: fewer calls per busy cycle."""
REFERENCE_PAGE_MAX_LIMIT = 50
"""The reference page's maximum page size; the poller falls back to it when a service that
follows that page rejects the machine-readable description's 100 (spec 4.1 discrepancy)."""
MAX_PAGES_PER_CYCLE = 1000
"""Pages one cycle may read: 100,000 posts at ``limit=100`` in one window is no real feed,
but a service that claims ``has_next`` forever would otherwise cost calls forever."""
RESERVED = ("since", "since_id", "page", "sort")
"""Parameters the poller sets itself on every request."""
BACKOFF_INITIAL = 1.0
BACKOFF_MIN_CAP = 60.0
RATE_LIMIT_BACKOFF_CAP = 3600.0
"""Repeated 429s without ``Retry-After`` (a monthly quota says nothing) back off up to an
hour, not a minute: a quota spent on the 3rd is not worth asking about 40,000 times."""
SECONDS_PER_DAY = 86400.0
MAX_CLOCK_SKEW = timedelta(minutes=5)
"""How far ahead of the service's clock (this machine's, corrected by ``ClockSkew``) a
stored watermark may be: ``created_at`` and the service's clock differ by seconds. Further
ahead, the state was written by a clock that was wrong (or edited by hand), and resuming
from it would skip every post up to that time in silence, so it is refused."""


FUTURE_TOLERANCE = timedelta(seconds=60)
"""A post dated further than this ahead of the service's now (as the poller can tell it) is
logged as "from the future": the minute of skew between ``created_at`` and the service's
clock that ``DEFAULT_LOOKBACK`` allows for. Nearer ones are ordinary skew. Either way the
watermark stops at now."""
MAX_WAIT = SECONDS_PER_DAY
"""The longest single wait the poller makes for a ``Retry-After``: a longer one (a monthly
quota, a forged header, ``99999999999``) is capped to a day, logged, and the call is asked
again then (one call a day at most), never an ``OverflowError`` of the clock or the sleep."""


class CheckpointError(SportsPostsError):
    """A checkpoint that cannot be read back (corrupt, foreign or from a newer SDK).

    Nothing is guessed: delete the checkpoint (or pass ``since=``) to start over.
    """


def _utc(value: datetime) -> datetime:
    return value.astimezone(timezone.utc)


def _iso(value: datetime) -> str:
    return _utc(value).isoformat().replace("+00:00", "Z")


def _parse_iso(value: Any, what: str) -> datetime:
    if not isinstance(value, str):
        raise CheckpointError(
            f"checkpoint field {what!r}: expected an ISO 8601 string, got {type(value).__name__}"
        )
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            raise CheckpointError(f"checkpoint field {what!r}: {value[:40]!r} has no UTC offset")
        return _utc(parsed)
    except (ValueError, OverflowError):  # not ISO 8601, or out of range once in UTC
        raise CheckpointError(
            f"checkpoint field {what!r}: {value[:40]!r} is not an ISO 8601 time"
        ) from None


@dataclass(frozen=True)
class PollState:
    """Where a poller stands: what a checkpoint stores, as JSON with a version field.

    ``watermark`` is the newest ``created_at`` delivered (or the starting point);
    ``floor`` is the exclusive ``since`` of the next query (never moves back, even if
    ``lookback`` grows between runs); ``seen`` maps each delivered id newer than the floor
    to its ``created_at``; ``since_id`` is a delivered post at or below the floor, sent as
    a hint that narrows the service's search without changing the answer. ``undated``
    marks a starting point read from a machine's clock before any answer dated the
    service's: a run that crashed in its first call leaves it, and the next run corrects it.
    ``filters`` are the query parameters that define the feed (as sent): a state is only
    valid for the feed that wrote it (``None``: written before they were stored).
    """

    watermark: datetime
    floor: datetime
    seen: Mapping[str, datetime] = field(default_factory=dict)
    since_id: Optional[str] = None
    since_id_created_at: Optional[datetime] = None
    undated: bool = False
    filters: Optional[Mapping[str, str]] = field(default=None, compare=False)
    """Not part of equality: two states at the same place are equal whatever feed they are for."""

    @classmethod
    def start(
        cls, at: datetime, *, undated: bool = False, filters: Optional[Mapping[str, str]] = None
    ) -> PollState:
        """The state of a poller that delivers every post created after ``at``."""
        return cls(watermark=_utc(at), floor=_utc(at), undated=undated, filters=filters)

    def advance(
        self,
        batch: list[Post],
        lookback: timedelta,
        cycle_started: datetime,
        ceiling: Optional[datetime] = None,
    ) -> PollState:
        """The state after a complete cycle that found ``batch``: watermark up, window slid,
        ids below the new floor forgotten.

        The floor trails both the watermark and the cycle's start by ``lookback``: any post
        created before ``cycle_started - lookback`` was indexed before the cycle began (if
        its delay is under ``lookback``), so the cycle saw it. The second bound is what
        lets an idle cycle after a burst shrink its window back to one page. ``ceiling`` (the
        service's now, as far as the poller can tell) caps what a post's ``created_at`` may
        move the watermark to: a post from the future is remembered (its id stays in
        ``seen``) but does not slide the window past posts not yet created.
        """
        newest = [p.created_at for p in batch]
        if ceiling is not None:
            newest = [min(t, _utc(ceiling)) for t in newest]
        watermark = max([self.watermark, *newest])
        floor = max(self.floor, _shift(watermark, -lookback), _shift(_utc(cycle_started), -lookback))
        seen = dict(self.seen)
        seen.update((p.id, p.created_at) for p in batch)
        kept = {i: t for i, t in seen.items() if t > floor}
        since_id, since_id_at = self.since_id, self.since_id_created_at
        dropped = [(t, i) for i, t in seen.items() if t <= floor]
        if dropped:
            newest_at, newest_id = max(dropped)
            if since_id_at is None or newest_at >= since_id_at:
                since_id, since_id_at = newest_id, newest_at
        return PollState(watermark, floor, kept, since_id, since_id_at, filters=self.filters)

    def without_since_id(self) -> PollState:
        """The same state without the ``since_id`` hint (its post is gone)."""
        return PollState(self.watermark, self.floor, dict(self.seen), None, None, filters=self.filters)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "watermark": _iso(self.watermark),
            "floor": _iso(self.floor),
            "since_id": self.since_id,
            "since_id_created_at": None
            if self.since_id_created_at is None
            else _iso(self.since_id_created_at),
            "seen": {
                i: _iso(t) for i, t in sorted(self.seen.items(), key=lambda kv: (kv[1], kv[0]))
            },
            **({"undated": True} if self.undated else {}),
            **({} if self.filters is None else {"filters": dict(sorted(self.filters.items()))}),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Any) -> PollState:
        """Read a stored state back; anything unexpected is a [`CheckpointError`][sports_posts.CheckpointError]."""
        if not isinstance(data, dict):
            raise CheckpointError(f"checkpoint is not a JSON object: {type(data).__name__}")
        version = data.get("version")
        if type(version) is not int or version != STATE_VERSION:  # true == 1 in Python
            raise CheckpointError(
                f"checkpoint version {str(version)[:20]!r} is not supported "
                f"(this SDK writes {STATE_VERSION})"
            )
        seen_raw = data.get("seen", {})
        if not isinstance(seen_raw, dict):
            raise CheckpointError("checkpoint field 'seen': expected an object of id -> created_at")
        since_id = data.get("since_id")
        if since_id is not None and not isinstance(since_id, str):
            raise CheckpointError(
                f"checkpoint field 'since_id': expected a string, got {type(since_id).__name__}"
            )
        undated = data.get("undated", False)
        if type(undated) is not bool:
            raise CheckpointError(
                f"checkpoint field 'undated': expected true or false, got {str(undated)[:20]!r}"
            )
        filters = data.get("filters")  # absent in checkpoints written before it was stored
        if filters is not None and not (
            isinstance(filters, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in filters.items())
        ):
            raise CheckpointError("checkpoint field 'filters': expected an object of name -> value")
        since_id_at_raw = data.get("since_id_created_at")
        since_id_at = (
            None if since_id_at_raw is None else _parse_iso(since_id_at_raw, "since_id_created_at")
        )
        return cls(
            watermark=_parse_iso(data.get("watermark"), "watermark"),
            floor=_parse_iso(data.get("floor"), "floor"),
            seen={str(i): _parse_iso(t, f"seen.{str(i)[:40]}") for i, t in seen_raw.items()},
            since_id=since_id if since_id_at is not None else None,
            since_id_created_at=since_id_at if since_id is not None else None,
            undated=undated,
            filters=filters,
        )

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> PollState:
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"checkpoint is not valid JSON: {exc}") from None
        except RecursionError:  # "[[[[...": nesting deeper than the parser's stack
            raise CheckpointError("checkpoint is not a state: JSON nested too deeply") from None
        return cls.from_dict(data)

    def ahead_of(self, now: datetime) -> timedelta:
        """How far the state's watermark (or floor) is ahead of ``now`` (negative: behind)."""
        return max(self.watermark, self.floor) - _utc(now)

    def check_not_ahead_of(self, now: datetime) -> None:
        """Refuse a state whose watermark is further ahead of ``now`` than
        ``MAX_CLOCK_SKEW``: resuming from it would skip posts in silence."""
        ahead = self.ahead_of(now)
        if ahead > MAX_CLOCK_SKEW:
            raise CheckpointError(
                f"the poller's watermark {_iso(self.watermark)} is {ahead} ahead of the clock "
                f"({_iso(now)}; the allowance for clock skew is {MAX_CLOCK_SKEW}): every post "
                "before it would be skipped. A checkpoint written under a wrong clock or edited "
                "by hand: delete it, or pass since= in the past, to start over"
            )


# -- actions ---------------------------------------------------------------------------


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


# -- configuration ---------------------------------------------------------------------


def to_datetime(name: str, value: Union[datetime, str]) -> datetime:
    """An aware ``datetime`` or an ISO 8601 string with an offset, as an aware UTC datetime."""
    text = encode_datetime(name, value)  # raises ParameterError for naive or malformed values
    return datetime.fromisoformat(text[:-1] + "+00:00")


def _seconds(name: str, value: Any) -> float:
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not value > 0
        or value == float("inf")
    ):
        raise ParameterError(
            f"{name}: expected a positive number of seconds, got {value!r}", parameter=name
        )
    return float(value)


MAX_LOOKBACK = timedelta(days=1)
"""The widest window: a post indexed a day late is no feed's normal, and every post of the
window is kept in memory (``seen``) and read again each cycle."""


def _lookback(value: Any) -> timedelta:
    seconds = _seconds("lookback", value)
    if seconds > MAX_LOOKBACK.total_seconds():
        raise ParameterError(
            f"lookback: at most {MAX_LOOKBACK.total_seconds():.0f} seconds (a day), got {value!r}",
            parameter="lookback",
        )
    return timedelta(seconds=seconds)


def _shift(when: datetime, by: timedelta) -> datetime:
    """``when + by``, held at the ends of the calendar (year 1, year 9999) rather than an
    ``OverflowError``: a ``since`` or a clock at either end stays a valid bound."""
    try:
        return when + by
    except OverflowError:
        edge = datetime.min if by < timedelta(0) else datetime.max
        return edge.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class PollConfig:
    """The checked settings of one poller (built by [`PollConfig.build`][sports_posts.polling.PollConfig.build])."""

    filters: Mapping[str, Any]
    interval: float
    lookback: timedelta
    limit: int = DEFAULT_LIMIT
    max_calls_per_day: Optional[int] = None
    limit_given: bool = False
    max_pages: int = MAX_PAGES_PER_CYCLE

    @classmethod
    def build(
        cls,
        *,
        filters: Mapping[str, Any],
        interval: Any,
        lookback: Any,
        max_calls_per_day: Any,
    ) -> PollConfig:
        """Check every argument before anything is sent; bad input is a [`ParameterError`][sports_posts.ParameterError]."""
        given = {k: v for k, v in filters.items() if v is not None}
        for name in RESERVED:
            if name in given:
                hint = (
                    " (pass since= to poll() to choose the starting point)"
                    if name == "since"
                    else ""
                )
                raise ParameterError(
                    f"{name} is set by the poller on every request and cannot be a filter{hint}",
                    parameter=name,
                )
        limit_given = "limit" in given
        limit = given.pop("limit", DEFAULT_LIMIT)
        # The same checks as posts.list, made once here rather than on the first request.
        encode_posts_params({**given, "sort": "recent", "limit": limit, "page": 1})
        if max_calls_per_day is not None and (
            isinstance(max_calls_per_day, bool)
            or not isinstance(max_calls_per_day, int)
            or max_calls_per_day < 1
        ):
            raise ParameterError(
                f"max_calls_per_day: expected a positive integer or None, got {max_calls_per_day!r}",
                parameter="max_calls_per_day",
            )
        return cls(
            filters=given,
            interval=_seconds("interval", interval),
            lookback=_lookback(lookback),
            limit=limit,
            max_calls_per_day=max_calls_per_day,
            limit_given=limit_given,
        )

    @property
    def feed(self) -> dict[str, str]:
        """The query parameters that define the feed, as sent (every filter but ``limit``,
        which changes the pages, not the posts): what a checkpoint is valid for."""
        return encode_posts_params(self.filters)

    @property
    def seconds_per_call(self) -> float:
        """The wait each call must pay for to keep inside ``max_calls_per_day`` (0 without one)."""
        return 0.0 if self.max_calls_per_day is None else SECONDS_PER_DAY / self.max_calls_per_day

    def query(self, state: PollState, page: int) -> dict[str, Any]:
        """The ``posts.list`` arguments of one page of a cycle."""
        params: dict[str, Any] = {
            **self.filters,
            "sort": "recent",
            "since": state.floor,
            "limit": self.limit,
            "page": page,
        }
        if state.since_id is not None:
            params["since_id"] = state.since_id
        return params

    def backoff(self, failures: int, rand: Callable[[], float], *, cap: float = BACKOFF_MIN_CAP) -> float:
        """Exponential back-off with equal jitter, capped at ``max(interval, cap)``."""
        cap = max(self.interval, cap)
        base = min(cap, BACKOFF_INITIAL * (2.0 ** min(failures, 30)))
        return base / 2 + rand() * base / 2


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
        return PollState.start(_shift(state.floor, back), filters=state.filters) if back else None
    if not state.undated or state.seen or state.since_id or state.watermark != state.floor:
        return None  # only a bare start can be undated: anything else has delivered posts
    start = min(_shift(state.floor, min(skew.cautious_offset, timedelta(0))), _utc(service_start))
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
        now = _shift(started, min(skew.cautious_offset, timedelta(0)))
        if batch and not warned_future:
            latest = _shift(started, max(skew.offset, skew.cautious_offset, timedelta(0)))
            ahead = batch[-1].created_at - latest
            if ahead > FUTURE_TOLERANCE:
                warned_future = True
                log.warning(
                    "post %s is dated %s, %s ahead of the service's now as far as the poller "
                    "can tell (this machine's clock and the service's Date header): delivered, "
                    "but the watermark does not move past now (a bad record on the service, or "
                    "this machine's clock is behind); logged once",
                    batch[-1].id, _iso(batch[-1].created_at), ahead,
                )
        advanced = state.advance(batch, config.lookback, now, ceiling=now)
        if batch:
            yield Deliver(batch, advanced)
        elif advanced != state:
            yield Commit(advanced)  # an idle cycle only slid the window: nothing is pending
        state = advanced
        yield wait(config.interval, "interval")
