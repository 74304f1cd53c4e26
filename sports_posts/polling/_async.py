"""``AsyncPoller``: drives ``poll_cycles`` with an ``AsyncSportsPosts`` client."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Awaitable, Mapping
from datetime import datetime, timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, Union

import anyio.to_thread

from .. import _endpoints
from ..models.post import Post
from ._algorithm import DEFAULT_LOOKBACK, Commit, Deliver, Fetch, PollState, Sleep, log, poll_cycles
from ._base import _PollerBase
from .checkpoints import Checkpoint, MemoryCheckpoint

if TYPE_CHECKING:
    from .._client import AsyncSportsPosts

__all__ = ["AsyncPoller"]

R = TypeVar("R")


class AsyncPoller(_PollerBase):
    """The async twin of [`Poller`][sports_posts.Poller]: ``async for batch in poller``.

    Many pollers can share one [`AsyncSportsPosts`][sports_posts.AsyncSportsPosts] (one connection pool) in one
    event loop. Checkpoint I/O runs in a worker thread (a [`MemoryCheckpoint`][sports_posts.MemoryCheckpoint]
    directly), so a slow disk or redis does not stall the other pollers. Call
    [`stop`][sports_posts.AsyncPoller.stop] from the event loop's thread, or from any thread: it hops onto the loop.
    """

    def __init__(
        self,
        client: AsyncSportsPosts,
        *,
        since: Optional[Union[datetime, str]] = None,
        interval: Union[float, timedelta] = 60.0,
        checkpoint: Optional[Checkpoint] = None,
        lookback: Union[float, timedelta] = DEFAULT_LOOKBACK,
        max_calls_per_day: Optional[int] = None,
        filters: Optional[Mapping[str, Any]] = None,
        clock: Optional[Callable[[], datetime]] = None,
        sleep: Optional[Callable[[float], Awaitable[None]]] = None,
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
        self._sleep = sleep or self._interruptible_sleep
        self._run: Optional[AsyncGenerator[list[Post], None]] = None
        self._wake: Optional[asyncio.Event] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._loop_thread: Optional[int] = None

    def __repr__(self) -> str:
        return f"AsyncPoller(filters={dict(self._config.filters)!r}, interval={self._config.interval}, checkpoint={self._checkpoint!r})"

    async def _interruptible_sleep(self, seconds: float) -> None:
        if self._wake is None:  # created inside the loop: Python 3.9 binds an Event to a loop
            self._wake = asyncio.Event()
        if self._stop_requested():
            return
        try:
            await asyncio.wait_for(self._wake.wait(), timeout=seconds)
        except asyncio.TimeoutError:
            pass

    def stop(self) -> None:
        """End the loop after the current cycle (a wait in progress ends at once)."""
        self._stopping = True
        wake, loop = self._wake, self._loop
        if wake is None or loop is None:
            return
        if self._loop_thread == threading.get_ident():
            wake.set()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(wake.set)

    def __aiter__(self) -> AsyncPoller:
        return self

    async def __anext__(self) -> list[Post]:
        if self._run is None:
            self._run = self._drive()
        return await self._run.__anext__()

    async def aclose(self) -> None:
        """Commit the batch the consumer holds (it is done with it) and end the loop."""
        self.stop()
        if self._pending is not None:
            await self._commit(self._pending)
        if self._run is not None:
            await self._run.aclose()

    async def __aenter__(self) -> AsyncPoller:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if exc_type is not None:
            self._pending = None  # a half-handled batch repeats rather than being lost
        await self.aclose()

    async def _checkpoint_io(self, fn: Callable[..., R], *args: Any) -> R:
        if isinstance(self._checkpoint, MemoryCheckpoint):
            return fn(*args)
        return await anyio.to_thread.run_sync(fn, *args)

    async def _commit(self, state: PollState) -> None:
        await self._checkpoint_io(self._checkpoint.save, state)
        self._state = state
        self._pending = None

    async def _drive(self) -> AsyncGenerator[list[Post], None]:
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        if self._wake is None:
            self._wake = asyncio.Event()
        if self._stop_requested():
            return
        stored = await self._checkpoint_io(self._checkpoint.load)
        algorithm = poll_cycles(
            self._config, self._initial_state(stored), clock=self._clock, rand=self._rand
        )
        result: object = None
        try:
            while True:
                action = algorithm.send(result)
                result = None
                if isinstance(action, Fetch):
                    self._calls += 1
                    try:
                        response = await self._client._request(_endpoints.posts_list(action.params))
                        result = response
                    except (
                        Exception
                    ) as exc:  # handed to the algorithm, which raises what it cannot retry
                        result = exc
                elif isinstance(action, Sleep):
                    if self._stop_requested():
                        return
                    log.debug("waiting %.1f s (%s)", action.seconds, action.reason)
                    await self._sleep(action.seconds)
                    if self._stop_requested():
                        return
                elif isinstance(action, Deliver):
                    self._pending = action.state
                    yield action.batch
                    await self._commit(action.state)
                elif isinstance(action, Commit):
                    await self._commit(action.state)
        finally:
            algorithm.close()
