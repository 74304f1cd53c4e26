"""``AsyncPoller``: performs the poller's steps with an async client in an event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, Union

import anyio.to_thread
from typing_extensions import Unpack

from .._errors import SportsPostsError
from .._request import APICall
from .._utils import Done, advance
from ..models.post import Post, PostsResponse
from ._algorithm import Deliver, log
from ._base import Acquire, PollerBase, PollerOptions, Renew, as_is, raw_view
from ._lease import LeaseLostError
from ._state import PollState
from .checkpoints import MemoryCheckpoint

if TYPE_CHECKING:
    from .._base_client import AsyncAPIClient

__all__ = ["AsyncPoller"]

R = TypeVar("R")


class AsyncPoller(PollerBase):
    """The async twin of [`Poller`][sports_posts.Poller]: ``async for batch in poller``.

    Many pollers can share one [`AsyncSportsPosts`][sports_posts.AsyncSportsPosts] (one connection pool) in one
    event loop. Checkpoint I/O runs in a worker thread (a [`MemoryCheckpoint`][sports_posts.MemoryCheckpoint]
    directly), so a slow disk or redis does not stall the other pollers. Call
    ``stop()`` from the event loop's thread, or from any thread: it hops onto the loop.
    """

    def __init__(
        self,
        client: AsyncAPIClient,
        *,
        sleep: Optional[Callable[[float], Awaitable[None]]] = None,
        **options: Unpack[PollerOptions],
    ) -> None:
        self._setup(**options)
        self._client = raw_view(client.with_options(max_retries=0))
        self._sleep = sleep  # None: the interruptible sleep (no bound method kept: no cycle)
        self._wake: Optional[asyncio.Event] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._loop_thread: Optional[int] = None

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
        if self._loop is None:  # the first batch: the loop the poller runs on is known now
            self._loop = asyncio.get_running_loop()
            self._loop_thread = threading.get_ident()
        if self._wake is None:
            self._wake = asyncio.Event()
        with self._stepping() as steps:
            step = advance(steps, None)  # begins the steps, or answers the batch handed out last
            while not isinstance(step, (Deliver, Done)):
                step = advance(steps, await self._perform(step))
        return self._handed(step, StopAsyncIteration)

    async def aclose(self) -> None:
        """Commit the batch the consumer holds (it is done with it), end the loop and
        release the lease, if any."""
        self.stop()
        try:
            if self._pending is not None:
                await self._commit(self._pending)
            if self._run is not None:
                self._run.close()
        finally:
            if self._lease is not None and self._lease.token is not None:
                try:
                    await self._lease.release_async()
                except SportsPostsError as exc:  # it expires on its own within the TTL
                    log.warning("lease %r not released: %s", self._lease.key, exc)

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

    async def _pause(self, seconds: float) -> None:
        await (self._sleep or self._interruptible_sleep)(seconds)

    async def _commit(self, state: PollState) -> None:
        try:
            await self._checkpoint_io(self._checkpoint.save, state)
        except LeaseLostError:
            self._pending = None  # the new holder delivers this batch again
            raise
        self._committed(state)

    async def _load(self, token: Optional[int]) -> Optional[PollState]:
        if token is not None:
            assert self._fenced is not None  # a token comes with a lease, checked by _setup
            await self._checkpoint_io(self._fenced.fence, token)
        return await self._checkpoint_io(self._checkpoint.load)

    async def _lease_step(self, step: Union[Acquire, Renew]) -> object:
        assert self._lease is not None
        try:
            if isinstance(step, Acquire):
                return await self._lease.acquire_async()
            return await self._lease.renew_async()
        except SportsPostsError as exc:  # handed to the steps, which decide
            return exc

    async def _fetch(self, call: APICall[PostsResponse]) -> object:
        try:
            return await self._client._result(call, as_is)  # a RawResponse: its Date dates the service
        except Exception as exc:  # handed to the algorithm, which raises what it cannot retry
            return exc
