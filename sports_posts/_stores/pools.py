"""What the PostgreSQL stores' pools are made with: psycopg_pool itself (or the missing-extra
error), connection classes that remember why a connection could not be opened, the close of
a sync pool when its process exits, and the hosts of a multi-host URL."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import inspect
import os
import select
import threading
import time
import weakref
from collections.abc import Awaitable, Coroutine, Iterator
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from .errors import missing_extra

__all__ = ["Attempts", "alend", "lend", "close_at_exit", "consume", "host_count", "pool_module",
           "quiet", "recording", "run_on"]


_LEND_SLICE = 0.05
"""Seconds a call waits for the pool at a time, between two looks at its connection attempts."""


class Attempts:
    """The pool's connection attempts as its callers see them: the last failure (when, what)
    and the last success, recorded by the pool's connection class (``recording``)."""

    def __init__(self) -> None:
        self.failed: Optional[tuple[float, BaseException]] = None
        self.ok = 0.0

    def record(self, exc: Optional[BaseException]) -> None:
        if exc is None:
            self.ok = time.monotonic()
        else:
            self.failed = (time.monotonic(), exc)

    def failure_since(self, started: float) -> Optional[BaseException]:
        """The failure of an attempt made since ``started`` with none succeeding after it."""
        failed = self.failed
        if failed is None or failed[0] < started or failed[0] <= self.ok:
            return None
        return failed[1]


def _slice(attempts: Attempts, deadline: float) -> float:
    """How long to wait for the pool now: the rest of the call's wait, in one piece once the
    pool has opened a connection since its last failure (its queue serves waiters in turn,
    which a wait given up and asked again would lose), else a short slice: the pool is
    opening its first connection, or failing to, and a failed attempt ends the call at once."""
    left = max(0.001, deadline - time.monotonic())
    failed = attempts.failed
    healthy = attempts.ok > 0.0 and (failed is None or failed[0] <= attempts.ok)
    return left if healthy else min(_LEND_SLICE, left)


def _end_or_wait_on(attempts: Attempts, started: float, deadline: float,
                    refused: Callable[[BaseException], Exception], empty: Callable[[], Exception]) -> None:
    """After a slice of waiting in vain: the call's end (a failed attempt since it started, or
    its wait spent), else nothing, and the caller asks the pool again."""
    failure = attempts.failure_since(started)
    if failure is not None:
        raise refused(failure) from None
    if time.monotonic() >= deadline:
        raise empty() from None


def lend(pool: Any, wait: float, attempts: Attempts, refused: Callable[[BaseException], Exception],
         empty: Callable[[], Exception]) -> Any:
    """A connection of ``pool`` within ``wait`` seconds; while the pool holds none, an attempt
    of the pool's to open one that fails ends the call at once (``refused``), not at the end
    of its wait (``empty``: the pool stayed full, or opened nothing)."""
    started = time.monotonic()
    deadline = started + wait
    timeout_error = pool_module("postgres").PoolTimeout
    while True:
        try:
            return pool.getconn(timeout=_slice(attempts, deadline))
        except timeout_error:
            _end_or_wait_on(attempts, started, deadline, refused, empty)


async def alend(pool: Any, wait: float, attempts: Attempts, refused: Callable[[BaseException], Exception],
                empty: Callable[[], Exception]) -> Any:
    """``lend`` on an ``AsyncConnectionPool``."""
    started = time.monotonic()
    deadline = started + wait
    timeout_error = pool_module("postgres").PoolTimeout
    while True:
        try:
            return await pool.getconn(timeout=_slice(attempts, deadline))
        except timeout_error:
            _end_or_wait_on(attempts, started, deadline, refused, empty)


def recording(base: Any, record: Callable[[Optional[BaseException]], None]) -> Any:
    """``base`` (``psycopg.Connection`` or ``AsyncConnection``) whose connection attempts,
    made by the pool in its own threads or tasks, are told to ``record``: the error of a
    failed one (a call waiting for the pool then ends at once, saying why), ``None`` for one
    that succeeded."""
    asynchronous = inspect.iscoroutinefunction(base.connect)

    class Recording(base):  # type: ignore[misc]
        @classmethod
        def connect(cls, *args: Any, **kwargs: Any) -> Any:
            if asynchronous:
                return _arecorded(super().connect(*args, **kwargs), record)
            with _recorded(record):
                return super().connect(*args, **kwargs)

    return Recording


@contextlib.contextmanager
def _recorded(record: Callable[[Optional[BaseException]], None]) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        record(exc)
        raise
    record(None)


async def _arecorded(connecting: Awaitable[Any], record: Callable[[Optional[BaseException]], None]) -> Any:
    with _recorded(record):
        return await connecting


def consume(task: asyncio.Future[Any]) -> None:
    """Read the end of a call whose caller was cancelled: nothing left unretrieved."""
    if not task.cancelled():
        task.exception()


_RUNNING_ON: set[asyncio.Future[Any]] = set()
"""The tasks of ``run_on`` still running: held here, as the event loop holds a task weakly."""


def run_on(call: Coroutine[Any, Any, Any]) -> None:
    """The rest of a call whose caller was cancelled, in a task of its own: its end is read
    (``consume``) and never raised anywhere."""
    task = asyncio.ensure_future(call)
    _RUNNING_ON.add(task)
    task.add_done_callback(_ran_on)


def _ran_on(task: asyncio.Future[Any]) -> None:
    _RUNNING_ON.discard(task)
    consume(task)


def pool_module(owner: str) -> Any:
    try:
        import psycopg_pool
    except ImportError:
        raise missing_extra(owner, "postgres") from None
    return psycopg_pool


def host_count(url: Optional[str]) -> int:
    """Hosts a libpq multi-host URL names (each gets ``connect_timeout`` in turn)."""
    if url is None:
        return 1
    try:
        hosts = urlsplit(url).netloc.rpartition("@")[2]
    except ValueError:
        return 1
    return hosts.count(",") + 1


def quiet(conn: Any) -> bool:
    """Whether an idle connection of the pool is open and the server sent it nothing: a
    server that restarted, terminated the backend or closed the socket has said so (a FATAL
    message, an end of file), which makes the socket readable. Looked at without waiting,
    only on a connection no call holds."""
    if conn.closed or conn.broken:
        return False
    try:
        readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    except Exception:  # no socket any more: the full check decides (and fails)
        return False
    return not readable


_OPEN: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
"""The sync pools the stores made, each with the process that made it."""
_OPEN_LOCK = threading.Lock()


def close_at_exit(pool: Any) -> Any:
    """``pool``, closed when this process exits if nobody closed it. Left to the garbage
    collector at the interpreter's end, psycopg_pool would wait 5 s for each of its threads,
    which no longer run then (a worker that never called ``close()`` took 30 s to exit).
    A forked child leaves its parent's pools alone: their sockets are the parent's."""
    with _OPEN_LOCK:
        if not _OPEN:
            atexit.unregister(_close_open_pools)  # once, however many pools come and go
            atexit.register(_close_open_pools)
        _OPEN[pool] = os.getpid()
    return pool


def _close_open_pools() -> None:
    me = os.getpid()
    with _OPEN_LOCK:
        mine = [pool for pool, pid in _OPEN.items() if pid == me]
    for pool in mine:
        with contextlib.suppress(Exception):  # exiting: nothing left to tell
            pool.close(timeout=1.0)
