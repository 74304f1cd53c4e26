"""PostgreSQL for every store: one connection manager, one schema, one ``migrate()``.

A connection per thread (and per process: a forked child opens its own) and one async
connection per event loop, or the customer's own connection used as given. Everything here
works unchanged behind a transaction-pooling PgBouncer with its default settings:

- no startup ``options``: each call is one message (``SET LOCAL statement_timeout``, the
  store's statements) that the server runs as one transaction, so the timeout applies to
  exactly that transaction on whichever server connection the pooler hands it to, and no
  transaction ever sits idle between two round trips;
- no server-side prepared statements (``prepare_threshold=None``, values bound on the
  client), which a pooler cannot carry from one transaction to the next;
- a call that gives up sends a cancel request (PgBouncer forwards it) before it drops its
  socket, and the server is told to stop a little before the client gives up: a reported
  failure decided nothing.

A call ends within ``connect_timeout`` (when a connection is opened) plus
``statement_timeout``: the server ends the statement itself at 90% of the bound, and a
client-side watchdog sends the cancel request at 95% (or a quarter second before the bound,
if earlier) and ends the wait at the bound for a server that cannot answer at all. A
connection found broken (the server restarted, a standby was promoted) is replaced on the
next call; a libpq multi-host URL with ``target_session_attrs=read-write`` then finds the
new primary.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
import select
import socket
import threading
import time
import weakref
from collections.abc import Sequence
from importlib import resources
from typing import Any, Callable, Optional

from .. import _utils
from .._errors import ParameterError
from .errors import StoreError, check_url, describe_url, import_driver, redact_url, translated

__all__ = ["NOW", "Postgres", "Result", "Statement", "schema_sql"]

Statement = tuple[str, Optional[Any]]
Result = tuple[int, list[tuple[Any, ...]]]
"""(rowcount, rows) of one statement; rows is empty for a statement that returns none."""

NOW = "COALESCE(%(now)s::float8, extract(epoch FROM clock_timestamp()))"
"""The store's clock in SQL: the injected clock's value, else the server's, one clock for the fleet."""

_MIGRATE_LOCK = 0x5350_494E  # one advisory lock for every store's DDL (CREATE IF NOT EXISTS races)

# Within a call's bound: the server is told to stop at SERVER_SHARE of it (its own, clearer
# error, and a statement it stops is rolled back), the client watchdog sends its cancel
# request at CANCEL_SHARE of it (or CANCEL_TIME before the bound, if earlier: a cancel
# request crosses a pooler and a busy machine too) and drops the socket at the bound itself.
SERVER_SHARE = 0.9
CANCEL_SHARE = 0.95
CANCEL_TIME = 0.25


def _cancel_grace(bound: float) -> float:
    """Seconds before the bound at which a call's cancel request is sent."""
    return max(bound * (1 - CANCEL_SHARE), min(CANCEL_TIME, bound / 2))


def schema_sql() -> str:
    """Every table the SDK owns on PostgreSQL (``schema.sql`` beside this module)."""
    return resources.files(__package__).joinpath("schema.sql").read_text(encoding="utf-8")


class _Watchdog:
    """One daemon thread that ends a call still waiting at its deadline: it sends the
    statement's cancel request, then shuts down the socket under libpq, which then reports
    the connection closed instead of waiting on a frozen server for ever (the kernel of a
    stopped server still acknowledges, so TCP timeouts never fire).

    Arming and disarming take no lock (a dict entry each, atomic under the GIL): the thread
    is woken only when it sleeps for want of work, or when a shorter bound than any before
    shows up; while calls run it looks at them every sixteenth of the shortest bound seen.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._armed: dict[int, tuple[float, Any, float]] = {}  # ticket -> (deadline, connection, grace)
        self._fired: set[int] = set()
        self._tickets = itertools.count(1)
        self._thread: Optional[threading.Thread] = None
        self._pid = 0
        self._sleeping = False
        self._tick = 1.0

    def arm(self, seconds: float, conn: Any, grace: float) -> int:
        """End the call on ``conn`` in ``seconds`` (its cancel, then ``grace`` seconds later
        at most its socket) unless disarmed first."""
        if self._pid != os.getpid():  # first use, or a forked child: no thread here yet
            self._start()
        ticket = next(self._tickets)
        self._armed[ticket] = (time.monotonic() + seconds, conn, grace)
        if seconds / 16 < self._tick:
            self._tick = seconds / 16
            self._wake()
        elif self._sleeping:
            self._wake()
        return ticket

    def disarm(self, ticket: int) -> bool:
        """Whether the call's deadline passed (its end was sent)."""
        self._armed.pop(ticket, None)
        if ticket in self._fired:
            self._fired.discard(ticket)
            return True
        return False

    def _start(self) -> None:
        with self._cond:
            if self._pid != os.getpid():
                self._armed, self._fired, self._sleeping = {}, set(), False
                thread = threading.Thread(target=self._run, daemon=True, name="sports-posts-pg-watchdog")
                thread.start()
                self._thread, self._pid = thread, os.getpid()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify()

    def _run(self) -> None:
        while True:
            now = time.monotonic()
            earliest: Optional[float] = None
            for ticket, (deadline, conn, grace) in self._armed.copy().items():
                if ticket in self._fired:
                    continue
                if deadline <= now:  # in its own thread: a frozen server blocks only that one
                    self._fired.add(ticket)
                    threading.Thread(target=_end, args=(conn, grace, lambda t=ticket: t in self._armed),
                                     daemon=True, name="sports-posts-pg-cancel").start()
                elif earliest is None or deadline < earliest:
                    earliest = deadline
            with self._cond:
                if earliest is None:
                    self._sleeping = True  # set before the look below: an arm after it wakes us
                    if not any(t not in self._fired for t in self._armed.copy()):
                        self._cond.wait()
                    self._sleeping = False
                else:
                    self._cond.wait(max(0.0, min(earliest - now, self._tick)))


_WATCHDOG = _Watchdog()


class _Watched:
    """One call's statements under the watchdog, for the sync and the async call: armed on
    entry, always disarmed on exit; a driver error once the watchdog ended the call becomes
    the store's "gave no answer" error."""

    __slots__ = ("_bound", "_conn", "_store", "_ticket")

    def __init__(self, store: Postgres, conn: Any, bound: float) -> None:
        self._store, self._conn, self._bound, self._ticket = store, conn, bound, 0

    def __enter__(self) -> None:
        grace = _cancel_grace(self._bound)
        self._ticket = _WATCHDOG.arm(self._bound - grace, self._conn, grace)

    def __exit__(self, kind: Any, exc: Optional[BaseException], tb: Any) -> None:
        if _WATCHDOG.disarm(self._ticket) and isinstance(exc, self._store._errors):
            raise self._store._gave_up(self._bound) from None


def _end(conn: Any, grace: float, waiting: Callable[[], bool]) -> None:
    """End a call on ``conn`` that is still waiting: its cancel request (through a pooler
    too), then, ``grace`` seconds later at most, its socket shut down."""
    _send_cancel(conn.pgconn, grace)
    if waiting():
        _shutdown(conn.pgconn.socket)


def _send_cancel(pgconn: Any, grace: float) -> None:
    """Send ``pgconn``'s cancel request, waiting ``grace`` seconds at most for it to be taken
    (libpq's non-blocking cancel: a frozen server never answers, and the GIL stays free)."""
    from psycopg import pq

    deadline = time.monotonic() + grace
    try:
        cancel = pgconn.cancel_conn()
    except Exception:  # a libpq older than 17 has no non-blocking cancel: the shutdown suffices
        return
    try:
        cancel.start()
        while True:
            status = cancel.poll()
            left = deadline - time.monotonic()
            if status in (pq.PollingStatus.OK, pq.PollingStatus.FAILED) or left <= 0:
                return
            fd = cancel.socket
            if status == pq.PollingStatus.READING:
                select.select([fd], [], [], left)
            else:
                select.select([], [fd], [], left)
    except Exception:  # the server or the pooler is gone: the shutdown that follows suffices
        pass
    finally:
        cancel.finish()


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
        self._caught = (psycopg.Error, OSError)
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
        self.connect_timeout = _utils.seconds("connect_timeout", connect_timeout)
        self.statement_timeout = _utils.seconds("statement_timeout", statement_timeout)
        lock = _utils.optional_seconds("lock_timeout", lock_timeout)
        self.lock_timeout = lock if lock is not None else self.statement_timeout
        self._connect_bound = max(2, math.ceil(self.connect_timeout))
        self._connect_args: dict[str, Any] = {
            "autocommit": True,
            # psycopg counts whole seconds (at least 2) per host tried: rounded up here, so
            # the bound is never shorter than the one given.
            "connect_timeout": self._connect_bound,
            # Values bound on the client, nothing prepared on the server: a transaction
            # pooler hands each transaction whichever server connection is free.
            "prepare_threshold": None,
        }
        self._settings_of: dict[float, list[str]] = {}
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

    @property
    def connect_bound(self) -> float:
        """Seconds a new connection may take per host of the URL (what psycopg enforces)."""
        return float(self._connect_bound)

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

    def __enter__(self) -> None:
        """``with self:`` is ``with self.errors():`` at the cost of a method call, for every call."""

    def __exit__(self, kind: Any, exc: Optional[BaseException], tb: Any) -> None:
        if exc is not None and isinstance(exc, self._caught):
            with self.errors():
                raise exc

    def _no_connection(self) -> StoreError:
        return self._error(
            f"{self.owner}: postgres did not accept a connection within the call's bound of "
            f"{self.connect_bound:g} s per host (connect_timeout); nothing was sent",
            engine=self.engine, code="08001",
        )

    def _gave_up(self, bound: float) -> StoreError:
        return self._error(
            f"{self.owner}: postgres gave no answer within the call's bound of {bound:g} s "
            "(statement_timeout); its statement was cancelled and decided nothing",
            engine=self.engine, code="57014",
        )

    def _settings(self, bound: float) -> list[str]:
        """The settings of one call's transaction, sent in the same message as its statements
        (``SET LOCAL``: they end with it, whatever server connection a pooler chose)."""
        settings = self._settings_of.get(bound)  # shared: never changed once made
        if settings is None:
            settings = [f"SET LOCAL statement_timeout = {max(1, int(bound * SERVER_SHARE * 1000))}"]
            if self.lock_timeout < bound:
                settings.append(f"SET LOCAL lock_timeout = {max(1, int(self.lock_timeout * SERVER_SHARE * 1000))}")
            if len(self._settings_of) < 64:  # a caller's own deadlines vary: keep the usual ones
                self._settings_of[bound] = settings
        return settings

    def wire(self, cur: Any, statements: Sequence[Statement], bound: Optional[float] = None) -> str:
        """The one message a call sends: its settings, then each statement with its values
        bound by ``cur`` (a ``psycopg.ClientCursor``); the benchmark's raw driver sends it too."""
        parts = [*self._settings(self.statement_timeout if bound is None else bound)]
        for sql, params in statements:
            parts.append(sql if params is None else cur.mogrify(sql, params))
        return ";\n".join(parts)

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
        try:
            conn = self._driver.connect(self.url, cursor_factory=self._driver.ClientCursor, **self._connect_args)
        except self._driver.errors.ConnectionTimeout:
            raise self._no_connection() from None
        self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def run(
        self, statements: Sequence[Statement], *, connection: Any = None, timeout: Optional[float] = None
    ) -> list[Result]:
        """Run ``statements`` as one transaction of their own, or, given the caller's
        ``connection``, inside the caller's transaction (nothing of ours is opened then).
        ``timeout`` (seconds) shortens this call's bound (a caller's own deadline)."""
        with self:
            if connection is not None:
                if not self._migrated:
                    _on_given(connection, _migration(), atomic=True)
                    self._migrated = True
                return _on_given(connection, statements)
            conn = self.connection()
            if not self._migrated:
                with self._migrate_lock:
                    if not self._migrated:
                        self._guarded(conn, _migration())
                        self._migrated = True
            return self._guarded(conn, statements, timeout)

    def _guarded(self, conn: Any, statements: Sequence[Statement], timeout: Optional[float] = None) -> list[Result]:
        if conn is self._given:  # the customer's connection: their settings, their bounds
            return _on_given(conn, statements)
        bound = self.statement_timeout if timeout is None else min(self.statement_timeout, timeout)
        with conn.cursor() as cur:
            text = self.wire(cur, statements, bound)
            with _Watched(self, conn, bound):
                cur.execute(text)
                return _results(cur, len(self._settings(bound)), len(statements))

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
            try:
                conn = await self._driver.AsyncConnection.connect(
                    self.url, cursor_factory=self._driver.AsyncClientCursor, **self._connect_args)
            except self._driver.errors.ConnectionTimeout:
                raise self._no_connection() from None
            self._async[loop] = conn
        return conn

    async def arun(self, statements: Sequence[Statement], *, connection: Any = None) -> list[Result]:
        """``run`` on an async connection."""
        with self:
            if connection is not None:
                if not self._migrated:
                    await _aon_given(connection, _migration(), atomic=True)
                    self._migrated = True
                return await _aon_given(connection, statements)
            conn = await self.aconnection()
            if not self._migrated:
                await self._aguarded(conn, _migration())
                self._migrated = True
            return await self._aguarded(conn, statements)

    async def _aguarded(self, conn: Any, statements: Sequence[Statement]) -> list[Result]:
        if conn is self._given_async:
            return await _aon_given(conn, statements)
        bound = self.statement_timeout
        # Not a task cancellation: psycopg would then wait for a cancel request the frozen
        # server cannot answer either.
        async with conn.cursor() as cur:
            text = self.wire(cur, statements, bound)
            with _Watched(self, conn, bound):
                await cur.execute(text)
                return await _aresults(cur, len(self._settings(bound)), len(statements))

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


def _results(cur: Any, settings: int, statements: int) -> list[Result]:
    """(rowcount, rows) of each statement of one message, its settings' results skipped."""
    for _ in range(settings):
        cur.nextset()
    results: list[Result] = []
    for index in range(statements):
        if index:
            cur.nextset()
        results.append((cur.rowcount, cur.fetchall() if cur.description else []))
    return results


async def _aresults(cur: Any, settings: int, statements: int) -> list[Result]:
    for _ in range(settings):
        cur.nextset()  # every result of the message is already here: nextset does no I/O
    results: list[Result] = []
    for index in range(statements):
        if index:
            cur.nextset()
        results.append((cur.rowcount, await cur.fetchall() if cur.description else []))
    return results


def _on_given(conn: Any, statements: Sequence[Statement], *, atomic: bool = False) -> list[Result]:
    """Run on the customer's connection, inside their transaction if one is open, never
    prepared (their pooler may be one that cannot keep a prepared statement). Several
    statements (or ``atomic``) go all or nothing: in a transaction, or a savepoint in theirs."""
    results: list[Result] = []
    with conn.transaction() if atomic or len(statements) > 1 else contextlib.nullcontext(), conn.cursor() as cur:
        for sql, params in statements:
            cur.execute(sql, params, prepare=False)
            results.append((cur.rowcount, cur.fetchall() if cur.description else []))
    return results


async def _aon_given(conn: Any, statements: Sequence[Statement], *, atomic: bool = False) -> list[Result]:
    if atomic or len(statements) > 1:
        async with conn.transaction(), conn.cursor() as cur:
            return await _aexecute_given(cur, statements)
    async with conn.cursor() as cur:
        return await _aexecute_given(cur, statements)


async def _aexecute_given(cur: Any, statements: Sequence[Statement]) -> list[Result]:
    results: list[Result] = []
    for sql, params in statements:
        await cur.execute(sql, params, prepare=False)
        results.append((cur.rowcount, await cur.fetchall() if cur.description else []))
    return results


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
