"""What both pollers share: argument checks, the starting point, counters (no I/O)."""

from __future__ import annotations

import contextlib
import random
import weakref
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional, TypeVar, Union

from typing_extensions import TypedDict

from .. import _endpoints, _telemetry
from .._budget import BudgetExhaustedError
from .._errors import APIStatusError, ParameterError
from .._params import PollFilters
from .._request import APICall
from .._transport import RawResponse
from .._utils import Done
from ..models.post import Post, PostsResponse
from ._algorithm import MAX_WAIT, Commit, Deliver, Fetch, Sleep, log, poll_cycles
from ._config import DEFAULT_LOOKBACK, PollConfig, same_feed_form, to_datetime
from ._lease import Lease, LeaseLostError
from ._skew import ClockSkew, parse_http_date
from ._state import PollState
from .checkpoints import (
    Checkpoint,
    CheckpointMismatchError,
    FencedCheckpoint,
    MemoryCheckpoint,
    hold,
    release,
)


@dataclass(frozen=True)
class Acquire:
    """Take the lease: answer with its fencing token, ``None`` while another poller holds
    it, or the error the store raised."""


@dataclass(frozen=True)
class Renew:
    """Renew the lease: answer ``True`` while it is still ours, else ``False`` or the error."""


@dataclass(frozen=True)
class Load:
    """Fence the checkpoint with ``token`` (when there is a lease), then load it: answer
    with the stored ``PollState`` or ``None``."""

    token: Optional[int]


IOStep = Union[APICall[PostsResponse], Sleep, Deliver, Commit, Acquire, Renew, Load]
_STOPPED = object()  # what a call answers when the poller stopped while the budget refilled
"""What a driver does for the poller: make this call (answering with its result or the
error it raised), sleep, hand a batch to the consumer, save a state to the checkpoint, take
or renew the lease, or fence and load the checkpoint."""

__all__ = ["Acquire", "Load", "PollerOptions", "PollerBase", "Renew", "as_is", "poll_steps", "raw_view"]

C = TypeVar("C")
T = TypeVar("T")


class PollerOptions(TypedDict, total=False):
    """The options of ``Poller`` and ``AsyncPoller``, declared once for both."""

    since: Optional[Union[datetime, str]]
    """Where an empty checkpoint starts (default: now minus ``lookback``)."""
    interval: Union[float, timedelta]
    """Seconds between cycles once the poller has caught up (default 60)."""
    checkpoint: Optional[Checkpoint]
    """Where the watermark is kept (default: in memory)."""
    lookback: Union[float, timedelta]
    """How far back each cycle re-reads, to catch posts indexed late."""
    max_calls_per_day: Optional[int]
    """A budget of GET /posts calls per day; the poller waits rather than exceed it."""
    filters: Optional[PollFilters]
    """The GET /posts parameters of the feed (every one but since, since_id, page, sort),
    typed as ``posts.poll(**filters)`` takes them: a misspelt key is a type error."""
    clock: Optional[Callable[[], datetime]]
    """This machine's current time as an aware datetime (tests and simulations); the poller
    corrects it by the skew the service's ``Date`` headers show (``clock_skew``)."""
    rand: Optional[Callable[[], float]]
    """The jitter source, a float in [0, 1) (tests and simulations)."""
    lease: Optional[Lease]
    """One live poller per checkpoint key in the fleet (needs a fenced checkpoint)."""


def raw_view(client: C) -> C:
    """The client as the poller calls it: its ``with_raw_response`` view, whose answers keep
    their headers (the ``Date`` the skew estimate reads) at no extra cost. A requester
    without one answers bare models, and the poller keeps to the local clock."""
    view: C = getattr(client, "with_raw_response", client)
    return view


def as_is(value: T) -> T:
    """What a raw view's call is shaped into: the answer itself (a ``RawResponse``)."""
    return value


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _is_checkpoint(value: object) -> bool:
    return callable(getattr(value, "load", None)) and callable(getattr(value, "save", None))


class PollerBase:
    """Argument checks and bookkeeping shared by both drivers (no I/O)."""

    def _setup(
        self,
        *,
        since: Optional[Union[datetime, str]] = None,
        interval: Union[float, timedelta] = 60.0,
        checkpoint: Optional[Checkpoint] = None,
        lookback: Union[float, timedelta] = DEFAULT_LOOKBACK,
        max_calls_per_day: Optional[int] = None,
        filters: Optional[PollFilters] = None,
        clock: Optional[Callable[[], datetime]] = None,
        rand: Optional[Callable[[], float]] = None,
        lease: Optional[Lease] = None,
    ) -> None:
        self._config = PollConfig.build(
            filters=dict(filters or {}),
            interval=interval,
            lookback=lookback,
            max_calls_per_day=max_calls_per_day,
        )
        self._since = None if since is None else to_datetime("since", since)
        if checkpoint is not None and not _is_checkpoint(checkpoint):
            raise ParameterError(
                f"checkpoint must have load() and save(state), got {checkpoint!r}: "
                "pass MemoryCheckpoint(), FileCheckpoint(path) or RedisCheckpoint(url, key=...)",
                parameter="checkpoint",
            )
        self._checkpoint: Checkpoint = checkpoint if checkpoint is not None else MemoryCheckpoint()
        if lease is not None and not isinstance(lease, Lease):
            raise ParameterError(f"lease must be a Lease, got {lease!r}", parameter="lease")
        self._fenced: Optional[FencedCheckpoint] = None  # the checkpoint, when a lease fences it
        if lease is not None:
            if not isinstance(self._checkpoint, FencedCheckpoint):
                raise ParameterError(
                    f"lease= needs a checkpoint that checks fencing tokens, got {self._checkpoint!r}: "
                    "pass RedisCheckpoint(url, key=...) or PostgresCheckpoint(url, key=...)",
                    parameter="lease",
                )
            self._fenced = self._checkpoint
        self._lease = lease
        self._clock = clock or _now
        self._rand = rand or random.random
        self._skew = ClockSkew()
        self._calls = 0
        self._state: Optional[PollState] = None
        self._pending: Optional[PollState] = None
        self._run: Optional[Generator[IOStep, object, None]] = None  # the steps, once begun
        self._stopping = False
        self._warned_date = False

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(filters={dict(self._config.filters)!r}, "
            f"interval={self._config.interval}, checkpoint={self._checkpoint!r})"
        )

    def _stop_requested(self) -> bool:
        return self._stopping

    def _steps(self) -> Generator[IOStep, object, None]:
        """The algorithm's actions with the poller's bookkeeping done here, once: the lease
        taken and renewed before each call, delivery and save, calls counted, the budget's
        refusals waited out, stop requests honoured around each wait, the batch in hand
        remembered until its state is saved. The drivers only perform the steps.

        The drivers call it on a weak proxy of the poller (``_stepping``)."""
        if self._stop_requested():
            return
        checkpoint = self._checkpoint  # released in `finally`, when the poller may be gone
        token = yield from self._take_lease()
        if token == 0:
            return  # stopped while standing by
        stored = yield Load(token)
        if stored is not None and not isinstance(stored, PollState):
            raise TypeError(f"a Load must be answered with a PollState or None, got {stored!r}")
        algorithm = poll_cycles(
            self._config, self._initial_state(stored), clock=self._clock, rand=self._rand,
            skew=self._skew, from_clock=stored is None and self._since is None,
        )
        result: object = None
        hold(checkpoint)  # a FileCheckpoint's lock, for this poller's life
        try:
            while True:
                action = algorithm.send(result)
                result = None
                if isinstance(action, Fetch):
                    result = yield from self._call(action)
                    if result is _STOPPED:
                        return
                elif isinstance(action, Sleep):
                    if not (yield from self._wait(action.seconds, action.reason)):
                        return
                else:
                    yield from self._hold()
                    if isinstance(action, Deliver):
                        self._pending = action.state
                        _telemetry.posts_delivered(len(action.batch), self._config.filters)
                        # Handed over from here, where only the weak proxy is held (a
                        # sub-generator would hold the poller itself while the consumer works).
                        yield action
                        yield from self._hold()  # the consumer may have held the batch past the TTL
                    yield Commit(action.state)
                    self._committed(action.state)
        finally:
            algorithm.close()
            release(checkpoint)

    def _call(self, action: Fetch) -> Generator[IOStep, object, object]:
        """The answer of GET /posts (or the error it raised), the call counted; ``_STOPPED``
        when stopped while the call budget refilled."""
        call = _endpoints.posts_list(action.params)
        while True:
            yield from self._hold()
            sent = self._clock()
            result = self._dated((yield call), sent)
            if not isinstance(result, BudgetExhaustedError):
                break
            # Nothing was sent: wait for the budget to refill, then ask again.
            log.warning("call budget spent (%s); waiting %.0f s", result.bound, result.retry_after)
            if not (yield from self._wait(result.retry_after, "call budget")):
                return _STOPPED
        self._calls += 1
        _telemetry.poll_lag(self._clock() + self._skew.offset, self._state, self._config.filters)
        return result

    @contextlib.contextmanager
    def _stepping(self) -> Iterator[Generator[IOStep, object, None]]:
        """The steps, begun on first use; an error the driver's I/O raised ends them (and
        releases the checkpoint's lock) as one raised inside them does.

        They hold the poller weakly: a poller nobody holds is freed at once (no reference
        cycle waits for the garbage collector), which closes its steps and releases the lock."""
        if self._run is None:
            self._run = poll_steps(weakref.proxy(self))
        try:
            yield self._run
        except BaseException:
            self._run.close()
            raise

    def _perform(self, step: IOStep) -> Any:
        """Do ``step`` (any but a ``Deliver``) with the driver's I/O: the sync driver's
        answer, or an awaitable of the async driver's."""
        if isinstance(step, Sleep):
            return self._pause(step.seconds)
        if isinstance(step, Commit):
            return self._commit(step.state)
        if isinstance(step, Load):
            return self._load(step.token)
        if isinstance(step, (Acquire, Renew)):
            return self._lease_step(step)
        assert not isinstance(step, Deliver)  # the driver hands a batch to its consumer
        return self._fetch(step)

    @staticmethod
    def _handed(step: Union[Deliver, Done[None]], end: type[Exception]) -> list[Post]:
        """The batch to hand to the consumer, or ``end`` raised once the steps ended."""
        if isinstance(step, Done):
            raise end
        return step.batch

    # The driver's I/O: methods of the sync driver, coroutines of the async one.

    def _pause(self, seconds: float) -> Any:
        raise NotImplementedError

    def _commit(self, state: PollState) -> Any:
        raise NotImplementedError

    def _load(self, token: Optional[int]) -> Any:
        raise NotImplementedError

    def _lease_step(self, step: Union[Acquire, Renew]) -> Any:
        raise NotImplementedError

    def _fetch(self, call: APICall[PostsResponse]) -> Any:
        raise NotImplementedError

    def _dated(self, result: object, sent: datetime) -> object:
        """The answer of a call sent at ``sent`` (local clock), after its ``Date`` header
        (a raw answer's, or an error answer's) fed the skew estimate."""
        received = self._clock()
        if isinstance(result, RawResponse):
            date = result.headers.get("date")
            self._skew.observe(date, sent, received)
            parsed = result.parse()
            if isinstance(parsed, PostsResponse):
                self._check_date(date, parsed)
            return parsed
        if isinstance(result, APIStatusError):
            self._skew.observe(result.response.headers.get("date"), sent, received)
        return result

    def _check_date(self, date: object, page: PostsResponse) -> None:
        """Warn once when an answer's ``Date`` is more than ``lookback`` behind the newest
        post it served: the header (a cache, a proxy's clock) or the post is wrong, and the
        poller moves on its posts, never on the header."""
        served = parse_http_date(date)
        if served is None or not page.items or self._warned_date:
            return
        newest = max(p.created_at for p in page.items)
        if newest - served > self._config.lookback:
            self._warned_date = True
            log.warning(
                "the service's Date header (%s) is %s behind the newest post it served (%s), "
                "more than the lookback (%s): a stale cache or a proxy's clock, or a post dated "
                "ahead; the poller moves on its posts, never on the header; logged once",
                str(date)[:40], newest - served, newest.isoformat(), self._config.lookback,
            )

    def _take_lease(self) -> Generator[IOStep, object, Optional[int]]:
        """The lease's fencing token once taken (standing by meanwhile), ``None`` without a
        lease, ``0`` when stopped while standing by."""
        lease = self._lease
        if lease is None:
            return None
        while not self._stop_requested():
            token = yield Acquire()
            if isinstance(token, BaseException):
                log.warning("lease %r: the store failed (%s); standing by", lease.key, token)
            elif isinstance(token, int) and token > 0:
                log.info("lease %r taken by %s with fencing token %d", lease.key, lease.holder, token)
                return token
            yield Sleep(lease.renew_every, "standby: another poller holds the lease")
        return 0

    def _hold(self) -> Generator[IOStep, object, None]:
        """Renew the lease; a poller that lost it stops here, before it delivers or saves."""
        if self._lease is None:
            return
        held = yield Renew()
        if held is True:
            return
        self._pending = None  # the next holder delivers this batch again: never save it
        why = f"the store failed ({held})" if isinstance(held, BaseException) else "another poller took it over"
        lost = LeaseLostError(
            f"lease {self._lease.key!r} lost: {why}; this poller stopped before delivering or saving"
        )
        lost.store_failed = isinstance(held, BaseException)
        raise lost

    def _wait(self, seconds: float, reason: str) -> Generator[IOStep, object, bool]:
        """Sleep ``seconds`` (in slices that renew the lease, if any); ``False`` on a stop request."""
        if self._stop_requested():
            return False
        log.debug("waiting %.1f s (%s)", seconds, reason)
        # In slices of at most a day: no sleep, event or timer ever sees a value its
        # clock arithmetic cannot hold (an OverflowError), however long the wait.
        step = min(seconds, MAX_WAIT) if self._lease is None else min(self._lease.renew_every, MAX_WAIT)
        remaining = seconds
        while True:
            yield Sleep(min(step, remaining), reason)
            remaining -= step
            if self._stop_requested():
                return False
            if remaining <= 0:
                return True
            yield from self._hold()

    def _committed(self, state: PollState) -> None:
        self._state = state
        self._pending = None

    @property
    def clock_skew(self) -> timedelta:
        """The service's clock minus this machine's, as the answers' ``Date`` headers show
        it (zero before the first answer and within 2 s); the poller adds it wherever the
        service's time matters."""
        return self._skew.offset

    @property
    def calls(self) -> int:
        """GET /posts requests this poller has sent (each one costs the customer a call)."""
        return self._calls

    @property
    def state(self) -> Optional[PollState]:
        """The last state saved to the checkpoint (``None`` before the poller started)."""
        return self._state

    @property
    def lease(self) -> Optional[Lease]:
        """The lease this poller takes before polling (``None``: no lease)."""
        return self._lease

    @property
    def checkpoint(self) -> Checkpoint:
        return self._checkpoint

    @property
    def config(self) -> PollConfig:
        return self._config

    def _initial_state(self, stored: Optional[PollState]) -> PollState:
        """A stored state wins over ``since``; an empty checkpoint starts at ``since`` or now -
        lookback (on the local clock: the algorithm moves it once an answer dates the service's)."""
        feed = self._config.feed
        if stored is not None:
            self._check_feed(stored, feed)
            if self._since is not None:
                log.warning(
                    "checkpoint %r found: resuming at %s, so since=%s is ignored (to start at "
                    "since=, use a new checkpoint path or key, or delete this one)",
                    self._checkpoint, stored.floor.isoformat(), self._since.isoformat(),
                )
            # A checkpoint written before filters were stored, or in another written form of
            # the same feed, adopts this poller's.
            return stored if stored.filters == feed else replace(stored, filters=feed)
        if self._since is not None:
            return PollState.start(self._since, filters=feed)
        return PollState.start(self._clock() - self._config.lookback, undated=True, filters=feed)

    def _check_feed(self, stored: PollState, feed: Mapping[str, str]) -> None:
        """Refuse a checkpoint written for other filters: its watermark says nothing of
        this feed's posts, so resuming from it would skip them in silence."""
        if stored.filters is None:
            return
        # A checkpoint may hold its feed as sent (written before the compared form was
        # stored): compare both in the form the service compares them.
        was = same_feed_form(stored.filters)
        if was == dict(feed):
            return
        names = sorted(set(was) | set(feed))
        differs = [
            f"{name}: stored {was.get(name, '(none)')!r}, now {feed.get(name, '(none)')!r}"
            for name in names
            if was.get(name) != feed.get(name)
        ]
        raise CheckpointMismatchError(
            f"checkpoint {self._checkpoint!r} was written by a poller with other filters "
            f"({'; '.join(differs)}): resuming it would skip this feed's posts. Give this feed "
            "its own checkpoint (another path or key), or delete this one to start over",
            differences=differs,
        )


def poll_steps(poller: PollerBase) -> Generator[IOStep, object, None]:
    """``poller``'s steps holding ``poller`` as given: the drivers pass a weak proxy, so a
    poller nobody holds is freed at once (a bound method would hold it strongly)."""
    return PollerBase._steps(poller)
