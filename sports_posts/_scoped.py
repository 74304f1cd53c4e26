"""Values that belong to one process, or to one event loop of one process.

Every stateful object of the SDK (a client's connection pool, a store's pools, a receiver's
thread pool) holds what it opens through these, so that a process forked after the object
was used (gunicorn ``--preload``, Celery prefork, ``multiprocessing``'s fork) opens its own
instead of reading or writing its parent's sockets, and a second event loop (``asyncio.run``
twice, asgiref's ``async_to_sync``) gets its own async connections instead of the first
loop's, which are bound to that loop.

A fork is noticed with ``os.register_at_fork``: the child counts a new *generation* and
remakes the locks it inherited (another thread may have held one at the fork, and no thread
of the child will ever release it). What the parent opened is dropped in the child without
closing it: closing would send a goodbye on a socket the parent still uses.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import weakref
from collections.abc import AsyncIterator, Awaitable
from typing import Any, Callable, Generic, Optional, TypeVar

__all__ = ["PerLoop", "PerProcess", "generation", "on_fork"]

T = TypeVar("T")

_generation = 0
_callbacks: weakref.WeakSet[_Forkable] = weakref.WeakSet()


class _Forkable:
    """What runs in a child right after a fork: drop the parent's value, remake the lock."""

    __slots__ = ()

    def _after_fork(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


def _in_child() -> None:
    global _generation
    _generation += 1
    for holder in list(_callbacks):
        holder._after_fork()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_in_child)


def generation() -> int:
    """How many forks separate this process from the one that imported the SDK."""
    return _generation


def on_fork(callback: Callable[[], None]) -> _Forkable:
    """Run ``callback`` in every child process right after a fork, while the returned
    handle is alive (keep it on the object the callback cleans up)."""
    handle = _Callback(callback)
    _callbacks.add(handle)
    return handle


class _Callback(_Forkable):
    __slots__ = ("__weakref__", "_callback")

    def __init__(self, callback: Callable[[], None]) -> None:
        self._callback = callback

    def _after_fork(self) -> None:
        self._callback()


class PerProcess(_Forkable, Generic[T]):
    """One value per process, made on first use by ``factory``: a child of a fork makes its
    own and never touches (nor closes) its parent's. ``get`` is safe from many threads."""

    __slots__ = ("__weakref__", "_factory", "_lock", "_value")

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._value: Optional[T] = None
        _callbacks.add(self)

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        self._value = None  # the parent's: not ours to use or close

    def get(self) -> T:
        """This process's value, made now if it has none."""
        value = self._value
        if value is not None:
            return value
        with self._lock:
            if self._value is None:
                self._value = self._factory()
            return self._value

    def peek(self) -> Optional[T]:
        """This process's value if it made one (for ``close``: nothing is made to be closed)."""
        return self._value

    def take(self) -> Optional[T]:
        """This process's value, forgotten here (the caller closes it)."""
        with self._lock:
            value, self._value = self._value, None
        return value


def _running_loop() -> Any:
    """The event loop this coroutine runs on: asyncio's, or the run of trio (through anyio),
    named by its ``TrioToken``. ``RuntimeError`` outside of both, as asyncio's own."""
    import asyncio  # loaded by whoever runs a loop; a sync client's import never pays for it

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        trio = sys.modules.get("trio")  # loaded already whenever a trio run is going on
        if trio is None:
            raise
        try:
            return trio.lowlevel.current_trio_token()
        except RuntimeError:
            raise RuntimeError("no running event loop") from None


def _loop_closed(loop: Any) -> bool:
    """Whether ``loop`` (of ``_running_loop``) has ended: nothing can run on it again."""
    import asyncio

    if isinstance(loop, asyncio.AbstractEventLoop):
        return loop.is_closed()
    try:  # a TrioToken: the one public question a finished run answers
        loop.run_sync_soon(_nothing)
    except sys.modules["trio"].RunFinishedError:
        return True
    return False


def _nothing() -> None:
    return None


class PerLoop(_Forkable, Generic[T]):
    """One value per running event loop of this process (an async connection pool is bound
    to the loop that opened it), made by ``factory`` in that loop on first use. A loop that
    closed drops its value; a forked child starts with none. A trio run (through anyio)
    counts as a loop of its own.

    With ``close``, an asyncio loop's value is also closed on that loop when the loop ends
    the way ``asyncio.run``, ``asyncio.Runner`` and asgiref's ``async_to_sync`` end one (an
    open connection pool dropped with its loop would report itself unclosed to whichever
    loop the collector runs on): by an async generator of the loop's, which those close
    (``shutdown_asyncgens``) after the loop's last task; or, with ``early``, by a task,
    which they cancel with the loop's other tasks (for a pool whose own tasks end only once
    it closes). A loop closed by hand without either leaves the value to the collector, as
    before, and nothing is logged."""

    __slots__ = ("__weakref__", "_close", "_early", "_factory", "_lock", "_values")

    def __init__(
        self, factory: Callable[[], T], close: Optional[Callable[[T], Awaitable[object]]] = None, *, early: bool = False
    ) -> None:
        self._factory = factory
        self._close = close
        self._early = early
        self._lock = threading.Lock()
        self._values: dict[int, _Entry[T]] = {}
        _callbacks.add(self)

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        self._values = {}

    def get(self) -> T:
        """The running loop's value, made now if it has none (call from a coroutine)."""
        loop = _running_loop()
        entry = self._values.get(id(loop))
        if entry is not None and entry.loop() is loop:
            return entry.value
        with self._lock:
            entry = self._values.get(id(loop))
            if entry is not None and entry.loop() is loop:
                return entry.value
            self._forget_closed()
            entry = _Entry(loop, self._factory())
            if self._close is not None:
                entry.close_at_the_end(loop, self._close, self._early)
            self._values[id(loop)] = entry
            return entry.value

    def peek(self) -> Optional[T]:
        """The running loop's value if it has one."""
        try:
            loop = _running_loop()
        except RuntimeError:
            return None
        entry = self._values.get(id(loop))
        return entry.value if entry is not None and entry.loop() is loop else None

    def take(self) -> Optional[T]:
        """The running loop's value, forgotten here (the caller closes it on this loop)."""
        loop = _running_loop()
        with self._lock:
            entry = self._values.pop(id(loop), None)
        if entry is None or entry.loop() is not loop:
            return None
        entry.release()
        return entry.value

    def others(self) -> list[T]:
        """The values of other loops still open (for a close that reaches them from here)."""
        try:
            running: Any = _running_loop()
        except RuntimeError:
            running = None
        with self._lock:
            self._forget_closed()
            return [entry.value for entry in self._values.values() if entry.loop() is not running]

    def _forget_closed(self) -> None:
        """Drop the values of loops that closed or are gone: nothing can use them again."""
        for key, entry in list(self._values.items()):
            loop = entry.loop()
            if loop is None or _loop_closed(loop):
                del self._values[key]


class _Entry(Generic[T]):
    """A loop's value, and what closes it when the loop ends (``PerLoop``'s close)."""

    __slots__ = ("generator", "guard", "loop", "released", "value")

    def __init__(self, loop: Any, value: T) -> None:
        self.loop: weakref.ref[Any] = weakref.ref(loop)
        self.value = value
        self.guard: Any = None  # the task that closes the value when cancelled (early)
        self.generator: Optional[AsyncIterator[None]] = None  # the one the loop's shutdown closes
        self.released = False

    def close_at_the_end(self, loop: Any, close: Callable[[T], Awaitable[object]], early: bool) -> None:
        import asyncio

        if not isinstance(loop, asyncio.AbstractEventLoop):  # a trio run closes nothing of asyncio's
            return
        if early:
            self.guard = loop.create_task(self._when_cancelled(close))
        else:
            self.generator = self._at_shutdown(close)
            # its first step, on the loop, makes the generator the loop's (the loop's hooks see
            # it start); the task ends there, the generator waits for the loop's shutdown
            loop.create_task(_first_step(self.generator))

    async def _when_cancelled(self, close: Callable[[T], Awaitable[object]]) -> None:
        import asyncio

        try:
            await asyncio.get_running_loop().create_future()  # until the loop cancels its tasks
        except asyncio.CancelledError:
            await self._close(close)
            raise

    async def _at_shutdown(self, close: Callable[[T], Awaitable[object]]) -> AsyncIterator[None]:
        try:
            yield
        finally:  # the loop's shutdown_asyncgens closes this generator on the loop
            await self._close(close)

    async def _close(self, close: Callable[[T], Awaitable[object]]) -> None:
        if not self.released:
            self.released = True
            with contextlib.suppress(Exception):
                await close(self.value)

    def release(self) -> None:
        """The value was taken to be closed by its taker: the loop's end leaves it alone."""
        self.released = True
        if self.guard is not None:
            self.guard.cancel()


async def _first_step(generator: AsyncIterator[None]) -> None:
    await generator.__anext__()
