"""What both pollers share: argument checks, the starting point, counters (no I/O)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional, Union

from .._errors import ParameterError
from ._algorithm import PollConfig, PollState, log, to_datetime
from .checkpoints import Checkpoint, MemoryCheckpoint

__all__ = ["_PollerBase"]


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _is_checkpoint(value: object) -> bool:
    return callable(getattr(value, "load", None)) and callable(getattr(value, "save", None))


class _PollerBase:
    """Argument checks and bookkeeping shared by both drivers (no I/O)."""

    def _setup(
        self,
        *,
        since: Optional[Union[datetime, str]],
        interval: Union[float, timedelta],
        checkpoint: Optional[Checkpoint],
        lookback: Union[float, timedelta],
        max_calls_per_day: Optional[int],
        filters: Mapping[str, Any],
        clock: Optional[Callable[[], datetime]],
        rand: Optional[Callable[[], float]],
    ) -> None:
        self._config = PollConfig.build(
            filters=filters,
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

    def _stop_requested(self) -> bool:
        return self._stopping

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
