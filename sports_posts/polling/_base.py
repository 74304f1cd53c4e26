"""What both pollers share: argument checks, the starting point, counters (no I/O)."""

from __future__ import annotations

import random
from collections.abc import Generator, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional, Union

from typing_extensions import TypedDict

from .. import _endpoints
from .._errors import ParameterError
from .._transport import APICall
from ..models.post import PostsResponse
from ._algorithm import (
    DEFAULT_LOOKBACK,
    Commit,
    Deliver,
    Fetch,
    PollConfig,
    PollState,
    Sleep,
    log,
    poll_cycles,
    to_datetime,
)
from .checkpoints import Checkpoint, MemoryCheckpoint, hold, release

IOStep = Union[APICall[PostsResponse], Sleep, Deliver, Commit]
"""What a driver does for the poller: make this call (answering with its result or the
error it raised), sleep, hand a batch to the consumer, or save a state to the checkpoint."""

__all__ = ["PollerOptions", "_PollerBase"]


class PollerOptions(TypedDict, total=False):
    """The options of :class:`Poller` and :class:`AsyncPoller`, declared once for both."""

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
    filters: Optional[Mapping[str, Any]]
    """The GET /posts parameters of the feed (every one but since, since_id, page, sort)."""
    clock: Optional[Callable[[], datetime]]
    """The current time as an aware datetime (tests and simulations)."""
    rand: Optional[Callable[[], float]]
    """The jitter source, a float in [0, 1) (tests and simulations)."""


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _is_checkpoint(value: object) -> bool:
    return callable(getattr(value, "load", None)) and callable(getattr(value, "save", None))


class _PollerBase:
    """Argument checks and bookkeeping shared by both drivers (no I/O)."""

    def _setup(
        self,
        *,
        since: Optional[Union[datetime, str]] = None,
        interval: Union[float, timedelta] = 60.0,
        checkpoint: Optional[Checkpoint] = None,
        lookback: Union[float, timedelta] = DEFAULT_LOOKBACK,
        max_calls_per_day: Optional[int] = None,
        filters: Optional[Mapping[str, Any]] = None,
        clock: Optional[Callable[[], datetime]] = None,
        rand: Optional[Callable[[], float]] = None,
    ) -> None:
        self._config = PollConfig.build(
            filters=filters or {},
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
        self._clock = clock or _now
        self._rand = rand or random.random
        self._calls = 0
        self._state: Optional[PollState] = None
        self._pending: Optional[PollState] = None
        self._stopping = False

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(filters={dict(self._config.filters)!r}, "
            f"interval={self._config.interval}, checkpoint={self._checkpoint!r})"
        )

    def _stop_requested(self) -> bool:
        return self._stopping

    def _steps(self, stored: Optional[PollState]) -> Generator[IOStep, object, None]:
        """The algorithm's actions with the poller's bookkeeping done here, once: calls
        counted, stop requests honoured around each wait, the batch in hand remembered
        until its state is saved. The drivers only perform the steps."""
        algorithm = poll_cycles(self._config, self._initial_state(stored), clock=self._clock, rand=self._rand)
        result: object = None
        hold(self._checkpoint)  # a FileCheckpoint's lock, for this poller's life
        try:
            while True:
                action = algorithm.send(result)
                result = None
                if isinstance(action, Fetch):
                    self._calls += 1
                    result = yield _endpoints.posts_list(action.params)
                elif isinstance(action, Sleep):
                    if self._stop_requested():
                        return
                    log.debug("waiting %.1f s (%s)", action.seconds, action.reason)
                    yield action
                    if self._stop_requested():
                        return
                else:
                    if isinstance(action, Deliver):
                        self._pending = action.state
                        yield action
                    yield Commit(action.state)
                    self._committed(action.state)
        finally:
            algorithm.close()
            release(self._checkpoint)

    def _committed(self, state: PollState) -> None:
        self._state = state
        self._pending = None

    @property
    def calls(self) -> int:
        """GET /posts requests this poller has sent (each one costs the customer a call)."""
        return self._calls

    @property
    def state(self) -> Optional[PollState]:
        """The last state saved to the checkpoint (``None`` before the poller started)."""
        return self._state

    @property
    def checkpoint(self) -> Checkpoint:
        return self._checkpoint

    @property
    def config(self) -> PollConfig:
        return self._config

    def _initial_state(self, stored: Optional[PollState]) -> PollState:
        """A stored state wins over ``since``; an empty checkpoint starts at ``since`` or now - lookback."""
        if stored is not None:
            if self._since is not None:
                log.info(
                    "checkpoint found: resuming at %s (since= is ignored)", stored.floor.isoformat()
                )
            return stored
        start = self._since if self._since is not None else self._clock() - self._config.lookback
        return PollState.start(start)
