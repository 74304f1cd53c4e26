"""SQLite for the local stores: a WAL connection per thread and per process, and the store
layer's typed errors for every ``sqlite3`` failure (a locked or unwritable file)."""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
from typing import Any, Callable, Literal, Optional, TypeVar, cast

from .errors import translated

F = TypeVar("F", bound=Callable[..., Any])


def typed_errors(method: F) -> F:
    """A store method whose ``sqlite3`` (and OS) failures are ``StoreError``s naming the store."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with translated(type(self).__name__, "sqlite", (sqlite3.Error,), None):
            return method(self, *args, **kwargs)

    return cast(F, wrapper)


def thread_connection(
    local: threading.local, path: str, busy_timeout: float, synchronous: Literal["NORMAL", "FULL"]
) -> sqlite3.Connection:
    """This thread's connection to ``path`` in WAL mode, opened anew after a fork (a
    connection must not cross processes)."""
    conn: Optional[sqlite3.Connection] = getattr(local, "conn", None)
    if conn is not None and getattr(local, "pid", None) == os.getpid():
        return conn
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    enable_wal(conn, busy_timeout)
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    local.conn = conn
    local.pid = os.getpid()
    return conn


def enable_wal(
    conn: sqlite3.Connection,
    busy_timeout: float,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Put the database file in WAL mode, waiting up to ``busy_timeout`` for other openers.

    Switching needs an exclusive lock. When several processes open a new file at once,
    SQLite answers "database is locked" at once to all but one of them, without calling
    the busy handler (that would deadlock). So the switch is retried here. A file already
    in WAL mode, which is every open after the first, is only read.
    """
    deadline = clock() + busy_timeout
    delay = 0.001
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            message = str(exc).lower()
            if ("locked" not in message and "busy" not in message) or clock() >= deadline:
                raise
        sleep(delay)
        delay = min(delay * 2, 0.05)
