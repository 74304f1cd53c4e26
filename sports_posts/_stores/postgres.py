"""PostgreSQL for every store: one connection manager, one schema, one ``migrate()``.

A connection per thread (and per process: a forked child opens its own) and one async
connection per event loop, or the customer's own connection used as given. Connections made
here are in autocommit mode, so a single statement never holds a transaction (and its row
locks) across a pause of the client; ``connect_timeout``, ``statement_timeout``,
``lock_timeout`` and ``idle_in_transaction_session_timeout`` are always set, and a client-side
watchdog ends a statement a frozen server never answers. A connection found broken (the
server restarted, the network dropped it) is replaced on the next call.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import os
import select
import socket
import threading
import time
import weakref
from collections.abc import Sequence
from importlib import resources
from typing import Any, Callable, Optional

from .. import _checks
from .._errors import ParameterError
from .errors import StoreError, check_url, describe_url, import_driver, redact_url, translated

__all__ = ["NOW", "Postgres", "Result", "Statement", "schema_sql"]

Statement = tuple[str, Optional[Any]]
Result = tuple[int, list[tuple[Any, ...]]]
"""(rowcount, rows) of one statement; rows is empty for a statement that returns none."""

NOW = "COALESCE(%(now)s::float8, extract(epoch FROM clock_timestamp()))"
"""The store's clock in SQL: the injected clock's value, else the server's, one clock for the fleet."""

_MIGRATE_LOCK = 0x5350_494E  # one advisory lock for every store's DDL (CREATE IF NOT EXISTS races)

# The server ends a statement at statement_timeout itself (a clearer error); the watchdog
# only steps in after this much more, for a server that cannot answer at all.
_GRACE = 1.5


def schema_sql() -> str:
    """Every table the SDK owns on PostgreSQL (``schema.sql`` beside this module)."""
    return resources.files(__package__).joinpath("schema.sql").read_text(encoding="utf-8")


class _Watchdog:
    """One daemon thread that shuts down the socket of a statement still running past its
    deadline: libpq then reports the connection closed, instead of waiting on a frozen server
    for ever (the kernel of a stopped server still acknowledges, so TCP timeouts never fire)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._armed: dict[int, int] = {}  # ticket -> fd
        self._tickets = itertools.count(1)
        self._thread: Optional[threading.Thread] = None
        self._pid = 0

    def arm(self, fd: int, seconds: float, clock: Callable[[], float]) -> int:
        with self._cond:
            if self._thread is None or self._pid != os.getpid():  # a forked child has no thread
                self._heap, self._armed, self._pid = [], {}, os.getpid()
                self._thread = threading.Thread(target=self._run, args=(clock,), daemon=True,
                                                name="sports-posts-pg-watchdog")
                self._thread.start()
            ticket = next(self._tickets)
            self._armed[ticket] = fd
            if len(self._heap) > 64 and len(self._heap) > 4 * len(self._armed):
                # Finished statements leave their entries until their deadline: drop them
                # now and then, so the heap stays the size of what is running.
                self._heap = [entry for entry in self._heap if entry[1] in self._armed]
                heapq.heapify(self._heap)
            heapq.heappush(self._heap, (clock() + seconds, ticket))
            if self._heap[0][1] == ticket:  # earlier than what the thread waits for
                self._cond.notify()
            return ticket

    def disarm(self, ticket: int) -> None:
        with self._cond:
            self._armed.pop(ticket, None)

    def _run(self, clock: Callable[[], float]) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][1] not in self._armed:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                deadline, ticket = self._heap[0]
                left = deadline - clock()
                if left > 0:
                    self._cond.wait(left)
                    continue
                heapq.heappop(self._heap)
                _shutdown(self._armed.pop(ticket))


_WATCHDOG = _Watchdog()


class Postgres:
    """Where a store's statements run: a ``postgresql://`` URL (connections made here) or
    the customer's ``psycopg.Connection`` / ``psycopg.AsyncConnection`` (used as given,
    never closed here). Every driver failure is a ``StoreError`` (or ``error``)."""

    engine = "postgres"

    def __init__(
        self,
        owner: str,
        url_or_connection: Any,
        *,
        connect_timeout: float = 10.0,
        statement_timeout: float = 30.0,
        lock_timeout: Optional[float] = None,
        auto_migrate: bool = True,
        error: type[StoreError] = StoreError,
        parameter: str = "url",
    ) -> None:
        self.owner = owner
        self._error = error
        psycopg = import_driver("psycopg", owner)
        self._driver = psycopg
        self._errors: tuple[type[BaseException], ...] = (psycopg.Error,)
        self.url: Optional[str] = None
        self._given: Any = None
        self._given_async: Any = None
        if isinstance(url_or_connection, str):
            self.url = check_url(url_or_connection, ("postgresql", "postgres"), owner, parameter)
        elif isinstance(url_or_connection, psycopg.AsyncConnection):
            self._given_async = url_or_connection
        elif isinstance(url_or_connection, psycopg.Connection):
            self._given = url_or_connection
        else:
            raise ParameterError(
                f"{owner} needs a postgresql:// URL or a psycopg connection, not "
                f"{type(url_or_connection).__name__}",
                parameter=parameter,
            )
        self.connect_timeout = _checks.seconds("connect_timeout", connect_timeout)
        self.statement_timeout = _checks.seconds("statement_timeout", statement_timeout)
        lock = _checks.optional_seconds("lock_timeout", lock_timeout)
        self.lock_timeout = lock if lock is not None else self.statement_timeout
        ms = int(self.statement_timeout * 1000)
        self._connect_args = {
            "autocommit": True,
            # libpq counts whole seconds (and at least 2).
            "connect_timeout": max(2, round(self.connect_timeout)),
            "options": (
                f"-c statement_timeout={ms} -c lock_timeout={int(self.lock_timeout * 1000)}"
                f" -c idle_in_transaction_session_timeout={ms}"
            ),
        }
        self._guard = self.statement_timeout * _GRACE
        self._local = threading.local()
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        self._migrated = not auto_migrate
        self._migrate_lock = threading.Lock()

    def __repr__(self) -> str:
        """The store as its URL, password redacted (``'postgresql://:***@host:port/0'``): every
        store's repr shows it so, as the first argument it was made with."""
        if self.url is not None:
            return repr(redact_url(self.url))
        where = self.where()
        return repr(where if where.startswith("<") else f"postgresql://{where}")

    def where(self) -> str:
        """Host, port and database for a repr: never a password."""
        if self.url is not None:
            return describe_url(self.url)
        conn = self._given if self._given is not None else self._given_async
        try:
            info = conn.info
            return f"{info.host}:{info.port}/{info.dbname}"
        except Exception:  # a closed connection has no info; a repr must not raise
            return "<connection>"

    def errors(self) -> Any:
        """A context that turns driver failures into this store's typed error."""
        return translated(self.owner, self.engine, self._errors, self.url, self._error)

    # -- sync ----------------------------------------------------------------------------

    def connection(self) -> Any:
        """This thread's connection, opened anew after a fork or when found broken."""
        if self._given is not None:
            return self._given
        if self.url is None:
            raise ParameterError(
                f"{self.owner} was given an async connection: use its async methods", parameter="url"
            )
        conn = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid() and _alive(conn):
            return conn
        if conn is not None and self._local.pid == os.getpid():
            conn.close()
        conn = self._driver.connect(self.url, **self._connect_args)
        self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def run(
        self, statements: Sequence[Statement], *, connection: Any = None, timeout: Optional[float] = None
    ) -> list[Result]:
        """Run ``statements``: one alone in autocommit, several in one transaction of their
        own, or, given the caller's ``connection``, inside the caller's transaction.
        ``timeout`` (seconds) shortens this call's bound (a caller's own deadline)."""
        with self.errors():
            own = self.connection()
            if not self._migrated:
                with self._migrate_lock:
                    if not self._migrated:
                        self._guarded(own, _migration())
                        self._migrated = True
            if connection is not None:
                with connection.cursor() as cur:
                    return _execute_all(cur, statements)
            return self._guarded(own, statements, timeout)

    def _guarded(self, conn: Any, statements: Sequence[Statement], timeout: Optional[float] = None) -> list[Result]:
        if conn is self._given:  # the customer's connection: their settings, their bounds
            return _run_on(conn, statements)
        bound = self._guard if timeout is None else min(self._guard, timeout)
        ticket = _WATCHDOG.arm(conn.pgconn.socket, bound, time.monotonic)
        try:
            return _run_on(conn, statements)
        finally:
            _WATCHDOG.disarm(ticket)

    def execute(
        self, sql: str, keys: Sequence[str], params: Any, *, timeout: Optional[float] = None
    ) -> Optional[tuple[Any, ...]]:
        """Run one statement and return its first row (``None`` when it returned none);
        ``keys`` is unused (the statement names its rows), as a Redis script needs them."""
        rows = self.run([(sql, params)], timeout=timeout)[0][1]
        return tuple(rows[0]) if rows else None

    def migrate(self) -> None:
        """Create every table and index if missing (idempotent, safe from many processes at once)."""
        self._migrated = False
        self.run([])

    def close(self) -> None:
        """Close this thread's own connection (a customer's connection stays open)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- async ---------------------------------------------------------------------------

    async def aconnection(self) -> Any:
        """This event loop's async connection (psycopg serialises the loop's tasks on it)."""
        if self._given_async is not None:
            return self._given_async
        if self.url is None:
            raise ParameterError(
                f"{self.owner} was given a sync connection: use its sync methods", parameter="url"
            )
        loop = asyncio.get_running_loop()
        conn = self._async.get(loop)
        if conn is None or not _alive(conn):
            if conn is not None:
                await conn.close()
            conn = await self._driver.AsyncConnection.connect(self.url, **self._connect_args)
            self._async[loop] = conn
        return conn

    async def arun(self, statements: Sequence[Statement], *, connection: Any = None) -> list[Result]:
        """``run`` on an async connection."""
        with self.errors():
            own = await self.aconnection()
            if not self._migrated:
                await self._aguarded(own, _migration())
                self._migrated = True
            if connection is not None:
                async with connection.cursor() as cur:
                    return await _aexecute_all(cur, statements)
            return await self._aguarded(own, statements)

    async def _aguarded(self, conn: Any, statements: Sequence[Statement]) -> list[Result]:
        if conn is self._given_async:
            return await _arun_on(conn, statements)
        # Not a task cancellation: psycopg would then wait for a cancel request the frozen
        # server cannot answer either.
        fd = conn.pgconn.socket
        timer = asyncio.get_running_loop().call_later(self._guard, _shutdown, fd)
        try:
            return await _arun_on(conn, statements)
        finally:
            timer.cancel()

    async def aexecute(self, sql: str, keys: Sequence[str], params: Any) -> Optional[tuple[Any, ...]]:
        """``execute`` on this event loop's connection, or in a worker thread when the
        customer gave a sync connection."""
        if self._given is not None:
            import anyio.to_thread

            return await anyio.to_thread.run_sync(self.execute, sql, keys, params)
        rows = (await self.arun([(sql, params)]))[0][1]
        return tuple(rows[0]) if rows else None

    async def amigrate(self) -> None:
        """``migrate`` on an async connection."""
        self._migrated = False
        await self.arun([])

    async def aclose(self) -> None:
        """Close this event loop's own async connection, and this thread's sync one."""
        self.close()
        loop = asyncio.get_running_loop()
        conn = self._async.pop(loop, None)
        if conn is not None:
            await conn.close()


def _alive(conn: Any) -> bool:
    """Whether an idle connection is still usable. The server says nothing to an idle
    connection unless it is going away (a restart, an administrator's terminate), so
    anything to read means it is gone: replaced now rather than failing this call."""
    if conn.closed or conn.broken:
        return False
    try:
        readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    except Exception:  # no socket any more (psycopg or the OS says so): not usable
        return False
    return not readable


def _shutdown(fd: int) -> None:
    """End a connection's socket under libpq: its wait returns, the connection is broken."""
    try:
        sock = socket.socket(fileno=os.dup(fd))
        try:
            sock.shutdown(socket.SHUT_RDWR)
        finally:
            sock.close()
    except OSError:
        pass  # the connection closed meanwhile: nothing left to end


def _migration() -> list[Statement]:
    # The advisory lock serialises first uses on many machines: concurrent CREATE ... IF NOT
    # EXISTS can still collide in the catalog. The schema has no parameters (None: sent as is).
    return [("SELECT pg_advisory_xact_lock(%(lock)s)", {"lock": _MIGRATE_LOCK}), (schema_sql(), None)]


def _execute_all(cur: Any, statements: Sequence[Statement]) -> list[Result]:
    results: list[Result] = []
    for sql, params in statements:
        cur.execute(sql, params)
        results.append((cur.rowcount, cur.fetchall() if cur.description else []))
    return results


def _run_on(conn: Any, statements: Sequence[Statement]) -> list[Result]:
    if len(statements) == 1 and conn.autocommit:  # one statement is atomic: no BEGIN/COMMIT
        with conn.cursor() as cur:
            return _execute_all(cur, statements)
    with conn.transaction(), conn.cursor() as cur:
        return _execute_all(cur, statements)


async def _aexecute_all(cur: Any, statements: Sequence[Statement]) -> list[Result]:
    results: list[Result] = []
    for sql, params in statements:
        await cur.execute(sql, params)
        results.append((cur.rowcount, await cur.fetchall() if cur.description else []))
    return results


async def _arun_on(conn: Any, statements: Sequence[Statement]) -> list[Result]:
    if len(statements) == 1 and conn.autocommit:
        async with conn.cursor() as cur:
            return await _aexecute_all(cur, statements)
    async with conn.transaction(), conn.cursor() as cur:
        return await _aexecute_all(cur, statements)


def check_in_transaction(owner: str, conn: Any) -> None:
    """A claim outside a transaction would commit alone, and the exactly-once promise with it.

    Inside ``with conn.transaction():``, or on a connection not in autocommit mode (its
    first statement opens the transaction that the caller commits), the claim is theirs.
    """
    psycopg = import_driver("psycopg", owner)
    if conn.autocommit and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        raise ParameterError(
            "claim_in needs the connection inside your transaction (with conn.transaction(): ...)",
            parameter="connection",
        )
