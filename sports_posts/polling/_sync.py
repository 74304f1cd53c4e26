"""``Poller``: drives ``poll_cycles`` with a ``SportsPosts`` client and a thread's time."""

from __future__ import annotations

import threading
from collections.abc import Generator, Mapping
from datetime import datetime, timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from .. import _endpoints
from ..models.post import Post
from ._algorithm import DEFAULT_LOOKBACK, Commit, Deliver, Fetch, PollState, Sleep, log, poll_cycles
from ._base import _PollerBase
from .checkpoints import Checkpoint

if TYPE_CHECKING:
    from .._client import SportsPosts

__all__ = ["Poller"]


class Poller(_PollerBase):
    """Delivers every post matching the filters once, in batches, each oldest first.

    Iterate it: ``for batch in poller``. The checkpoint advances only when the next batch
    is asked for (or on ``close()`` / a clean ``with`` exit), so a crash while handling a
    batch repeats that batch and loses nothing. Retries are the poller's own (its client
    has ``max_retries=0``): 429 waits ``Retry-After``, 5xx and connection errors back off,
    every other error is raised.

    ``clock`` and ``sleep`` exist for tests and simulations; the default sleep returns at
    once when [`stop`][sports_posts.Poller.stop] is called from another thread.
    """

    def __init__(
        self,
        client: SportsPosts,
        *,
        since: Optional[Union[datetime, str]] = None,
        interval: Union[float, timedelta] = 60.0,
        checkpoint: Optional[Checkpoint] = None,
        lookback: Union[float, timedelta] = DEFAULT_LOOKBACK,
        max_calls_per_day: Optional[int] = None,
        filters: Optional[Mapping[str, Any]] = None,
        clock: Optional[Callable[[], datetime]] = None,
        sleep: Optional[Callable[[float], None]] = None,
        rand: Optional[Callable[[], float]] = None,
    ) -> None:
        self._setup(
            since=since,
            interval=interval,
            checkpoint=checkpoint,
            lookback=lookback,
            max_calls_per_day=max_calls_per_day,
            filters=filters or {},
            clock=clock,
            rand=rand,
        )
        self._client = client.with_options(max_retries=0)
        self._wake = threading.Event()
        self._sleep = sleep or self._interruptible_sleep
        self._run: Optional[Generator[list[Post], None, None]] = None

    def __repr__(self) -> str:
        return f"Poller(filters={dict(self._config.filters)!r}, interval={self._config.interval}, checkpoint={self._checkpoint!r})"

    def _interruptible_sleep(self, seconds: float) -> None:
        self._wake.wait(seconds)

    def stop(self) -> None:
        """End the loop after the current cycle (a wait in progress ends at once). Thread-safe."""
        self._stopping = True
        self._wake.set()

    def __iter__(self) -> Poller:
        return self

    def __next__(self) -> list[Post]:
        if self._run is None:
            self._run = self._drive()
        return next(self._run)

    def close(self) -> None:
        """Commit the batch the consumer holds (it is done with it) and end the loop."""
        self.stop()
        if self._pending is not None:
            self._commit(self._pending)
        if self._run is not None:
            self._run.close()

    def __enter__(self) -> Poller:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if exc_type is not None:
            # The batch in hand may be half handled: leave it uncommitted so it repeats.
            self._pending = None
        self.close()

    def _commit(self, state: PollState) -> None:
        self._checkpoint.save(state)
        self._state = state
        self._pending = None

    def _drive(self) -> Generator[list[Post], None, None]:
        if self._stop_requested():
            return
        algorithm = poll_cycles(
            self._config,
            self._initial_state(self._checkpoint.load()),
            clock=self._clock,
            rand=self._rand,
        )
        result: object = None
        try:
            while True:
                action = algorithm.send(result)
                result = None
                if isinstance(action, Fetch):
                    self._calls += 1
                    try:
                        response = self._client._request(_endpoints.posts_list(action.params))
                        result = response
                    except (
                        Exception
                    ) as exc:  # handed to the algorithm, which raises what it cannot retry
                        result = exc
                elif isinstance(action, Sleep):
                    if self._stop_requested():
                        return
                    log.debug("waiting %.1f s (%s)", action.seconds, action.reason)
                    self._sleep(action.seconds)
                    if self._stop_requested():
                        return
                elif isinstance(action, Deliver):
                    self._pending = action.state
                    yield action.batch
                    self._commit(action.state)
                elif isinstance(action, Commit):
                    self._commit(action.state)
        finally:
            algorithm.close()
