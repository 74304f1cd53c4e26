"""PostgreSQL for every store: one connection manager, one schema, one ``migrate()``.

Connections come from ``psycopg_pool``: a ``ConnectionPool`` per process for the sync calls
and an ``AsyncConnectionPool`` per event loop of a process for the async ones (a forked child
and a second loop make their own, and never use or close their parent's), ``pool_size``
connections each at most (``DEFAULT_POOL_SIZE``). A call takes one connection for itself
and gives it back idle, or discards it: no connection is ever shared by two calls in
flight. The pool checks a connection before lending it (no round trip when the server sent
an idle connection nothing, else ``ConnectionPool.check_connection``) and replaces one found
broken (the server restarted, a standby was promoted; a libpq
multi-host URL with ``target_session_attrs=read-write`` then finds the new primary). The
customer's own pool (used as given, never closed here) or connection (used as given, its
calls serialised by psycopg) works too. Everything here works unchanged behind a
transaction-pooling PgBouncer with its default settings:

- no startup ``options``: each call is one message (``SET LOCAL statement_timeout``, the
  store's statements) that the server runs as one transaction, so the timeout applies to
  exactly that transaction on whichever server connection the pooler hands it to, and no
  transaction ever sits idle between two round trips;
- no server-side prepared statements (``prepare_threshold=None``, values bound on the
  client), which a pooler cannot carry from one transaction to the next;
- a call that gives up sends a cancel request (PgBouncer forwards it) before it drops its
  socket, and the server is told to stop a little before the client gives up: a reported
  failure decided nothing (``watchdog.py``: a cancel request's socket is never closed
  before the pooler closes it, which PgBouncer 1.18 could not survive).

A call ends within ``connect_timeout`` (the wait for a connection of the pool, a new one
opened meanwhile if the pool may grow: a pool whose every connection stayed busy that long
is a ``StoreError`` saying the pool is full) plus ``statement_timeout``: the server ends the
statement itself at 90% of the bound, and a client-side watchdog sends the cancel request at
95% (or a quarter second before the bound, if earlier) and ends the wait at the bound for a
server that cannot answer at all. An async call whose task is cancelled returns at once;
its statement runs on to its end (within the same bound) and gives its connection back idle.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import threading
import time
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any, Optional, Union

from .. import _utils
from .._errors import ParameterError
from .._scoped import PerLoop, PerProcess
from .errors import (
    StoreError,
    check_url,
    describe_url,
    import_driver,
    pooler_cannot_reach_server,
    pooler_unreachable,
    scrub,
    store_repr,
    translated,
)
from .given import aon_given as _aon_given
from .given import on_given as _on_given
from .pools import (
    Attempts,
    alend,
    close_at_exit,
    consume,
    host_count,
    lend,
    pool_module,
    quiet,
    recording,
    run_on,
)
from .quoted import Quoted, areply, reply
from .watchdog import Watched

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

__all__ = ["DEFAULT_POOL_SIZE", "NOW", "Postgres", "PostgresTarget", "Result", "Statement", "schema_sql"]

PostgresTarget = Union[
    str,
    "psycopg.Connection[Any]",
    "psycopg.AsyncConnection[Any]",
    "psycopg_pool.ConnectionPool[Any]",
    "psycopg_pool.AsyncConnectionPool[Any]",
]
"""What a PostgreSQL store is given: a ``postgresql://`` URL (the store makes its pools), a
``psycopg_pool.ConnectionPool`` / ``AsyncConnectionPool`` or a ``psycopg.Connection`` /
``AsyncConnection`` of yours (used as given, never closed by the store)."""

Statement = tuple[str, Optional[Any]]
Result = tuple[int, list[tuple[Any, ...]]]
"""(rowcount, rows) of one statement; rows is empty for a statement that returns none."""

NOW = "COALESCE(%(now)s::float8, extract(epoch FROM clock_timestamp()))"
"""The store's clock in SQL: the injected clock's value, else the server's, one clock for the fleet."""

_MIGRATE_LOCK = 0x5350_494E  # one advisory lock for every store's DDL (CREATE IF NOT EXISTS races)

# Within a call's bound: the server is told to stop at SERVER_SHARE of it (its own, clearer
# error, and a statement it stops is rolled back); the watchdog (watchdog.py) ends the rest.
SERVER_SHARE = 0.9


def schema_sql() -> str:
    """Every table the SDK owns on PostgreSQL (``schema.sql`` beside this module)."""
    return resources.files(__package__).joinpath("schema.sql").read_text(encoding="utf-8")


DEFAULT_POOL_SIZE = 10
"""Connections a PostgreSQL store opens at most: per process for its sync calls, and per
event loop for its async ones (``pool_size=`` of every PostgreSQL store)."""

_WAIT_ENDS: contextvars.ContextVar[float] = contextvars.ContextVar("sports_posts_pg_wait_ends", default=0.0)
"""When the running call's wait for a connection ends (``time.monotonic()``): the bound of
the pool's check of the connection it is about to lend."""

_MIN_SIZE = 1  # kept open while idle (max_idle): the next call needs no new connection


class Postgres:
    """Where a store's statements run: a ``postgresql://`` URL (pools of connections made
    here), the customer's ``psycopg_pool.ConnectionPool`` / ``AsyncConnectionPool`` (used as
    given, never closed here) or the customer's ``psycopg.Connection`` /
    ``psycopg.AsyncConnection`` (used as given, never closed here). Every driver failure is
    a ``StoreError`` (or ``error``)."""

    engine = "postgres"

    def __init__(
        self,
        owner: str,
        url_or_connection: PostgresTarget,
        *,
        connect_timeout: float = 10.0,
        statement_timeout: float = 30.0,
        lock_timeout: Optional[float] = None,
        auto_migrate: bool = True,
        error: type[StoreError] = StoreError,
        parameter: str = "url",
        pool_size: Optional[int] = None,
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
        self._given_pool: Any = None
        self._given_apool: Any = None
        target: Any = url_or_connection
        if isinstance(target, str):
            self.url = check_url(target, ("postgresql", "postgres"), owner, parameter)
        elif isinstance(target, psycopg.AsyncConnection):
            self._given_async = target
        elif isinstance(target, psycopg.Connection):
            self._given = target
        elif type(target).__module__.split(".", 1)[0] == "psycopg_pool":
            pools = pool_module(owner)
            if isinstance(target, pools.AsyncConnectionPool):
                self._given_apool = target
            elif isinstance(target, pools.ConnectionPool):
                self._given_pool = target
        if self.url is None and all(given is None for given in (
                self._given, self._given_async, self._given_pool, self._given_apool)):
            raise ParameterError(
                f"{owner} needs a postgresql:// URL, a psycopg connection or a psycopg_pool "
                f"pool, not {type(target).__name__}",
                parameter=parameter,
            )
        if pool_size is not None and self.url is None:
            raise ParameterError(
                f"{owner}: pool_size sizes the pools made from a URL; the pool or connection "
                "you pass is used as it is (its own max_size)",
                parameter="pool_size",
            )
        if pool_size is None:
            pool_size = DEFAULT_POOL_SIZE
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise ParameterError(f"{owner}: pool_size must be a positive integer", parameter="pool_size")
        self.pool_size = pool_size
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
        # The wait for a connection of the pool: a new one may be opened meanwhile, on
        # each host of a multi-host URL in turn.
        self._wait_bound = float(self._connect_bound * host_count(self.url))
        self._settings_of: dict[float, list[str]] = {}
        self._pool: PerProcess[Any] = PerProcess(self._new_pool)
        self._apools: PerLoop[Any] = PerLoop(self._new_apool, close=_close_pool, early=True)
        self._attempts = Attempts()
        self._migrated = not auto_migrate
        self._migrate_lock = threading.Lock()

    def __repr__(self) -> str:
        """The store as its URL, password redacted (``'postgresql://:***@host:port/0'``): every
        store's repr shows it so, as the first argument it was made with."""
        return store_repr(self.url, self.where, "postgresql")

    @property
    def connect_bound(self) -> float:
        """Seconds a new connection may take per host of the URL (what psycopg enforces)."""
        return float(self._connect_bound)

    def where(self) -> str:
        """Host, port and database for a repr: never a password."""
        if self.url is not None:
            return describe_url(self.url)
        pool = self._given_pool if self._given_pool is not None else self._given_apool
        if pool is not None:
            conninfo = pool.conninfo if isinstance(pool.conninfo, str) else ""
            if conninfo.lower().startswith(("postgresql:", "postgres:")):
                return describe_url(conninfo)
            return f"<pool {pool.name}>"
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

    def _no_slot(self, pool: Any, waited: float) -> StoreError:
        """A pool that lent no connection within the wait: full, or none could be opened."""
        stats = pool.get_stats()
        if stats.get("pool_size", 0) >= pool.max_size and stats.get("pool_available", 0) == 0:
            given = pool is self._given_pool or pool is self._given_apool
            parameter = "the max_size of the pool you passed" if given else "pool_size"
            return self._error(
                f"{self.owner}: the connection pool is full: its {pool.max_size} connections "
                f"stayed busy with other calls for the call's wait of {waited:g} s "
                f"(connect_timeout); nothing was sent. Raise {parameter}, or make fewer calls "
                "at once", engine=self.engine, code="53300",
            )
        failed = self._attempts.failed
        if failed is not None and failed[0] >= time.monotonic() - waited:
            # Why the pool could not open a connection during this wait: the one error of that
            # case (the driver's words, password scrubbed; a pooler without its server typed)
            return self._refused(failed[1])
        return self._no_connection()

    def _refused(self, exc: BaseException) -> StoreError:
        """The error of a call whose wait saw the pool fail to open a connection: refused, a
        wrong password, no such database, a pooler without its server (password scrubbed)."""
        message = scrub(f"{self.owner}: postgres did not accept a connection: {type(exc).__name__}: {exc}; "
                        "nothing was sent", self.url)
        code = getattr(exc, "sqlstate", None) or "08001"
        if pooler_cannot_reach_server(str(exc)):
            return pooler_unreachable(message, self._error, code)
        return self._error(message, engine=self.engine, code=code)

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

    def _head(self, bound: float) -> bytes:
        """``_settings`` as the head of a ``Quoted`` statement's message."""
        return ";\n".join([*self._settings(bound), ""]).encode()

    def wire(self, cur: Any, statements: Sequence[Statement], bound: Optional[float] = None) -> Union[str, bytes]:
        """The one message a call sends: its settings, then each statement with its values
        bound by ``cur`` (a ``psycopg.ClientCursor``; a ``Quoted`` statement's by libpq's
        escaping); the benchmark's raw driver sends it too."""
        bound = self.statement_timeout if bound is None else bound
        if isinstance(statements, Quoted):
            return statements.template.render(cur.connection, statements.values, self._head(bound))
        parts = [*self._settings(bound)]
        for sql, params in statements:
            parts.append(sql if params is None else cur.mogrify(sql, params))
        return ";\n".join(parts)

    def _pool_args(self, cursor: Any) -> dict[str, Any]:
        return {
            "kwargs": {**self._connect_args, "cursor_factory": cursor},
            "min_size": min(_MIN_SIZE, self.pool_size),
            "max_size": self.pool_size,
            "timeout": self._wait_bound,
            "name": f"sports-posts {self.owner}",
        }

    # -- sync ----------------------------------------------------------------------------

    def _new_pool(self) -> Any:
        pools = pool_module(self.owner)
        return close_at_exit(pools.ConnectionPool(
            self.url, connection_class=recording(self._driver.Connection, self._attempts.record), open=True,
            check=self._check, num_workers=2,
            **self._pool_args(self._driver.ClientCursor),
        ))

    def _check(self, conn: Any) -> None:
        """The pool's check of a connection before it lends it: a connection the server
        dropped is discarded and replaced. An idle connection the server said nothing to is
        lent at once (no round trip: the server speaks to an idle connection only when it
        goes away, and no other call can have a reply pending on a connection in the pool);
        else ``check_connection``'s empty statement decides, within what is left of the
        call's wait, so that a frozen server cannot hold it longer."""
        if quiet(conn):
            return
        watched = Watched(self, conn, max(0.001, _WAIT_ENDS.get() - time.monotonic()))
        try:
            with watched:
                pool_module(self.owner).ConnectionPool.check_connection(conn)
        finally:
            if watched.fired:
                conn.close()

    def pool(self) -> Any:
        """This process's pool of sync connections (made on first use; a forked child makes
        its own), or the customer's pool."""
        if self._given_pool is not None:
            return self._given_pool
        if self.url is None:
            kind = "an async connection" if self._given_async is not None else "a connection"
            if self._given_apool is not None:
                kind = "an async pool"
            raise ParameterError(f"{self.owner} was given {kind}: use its async methods", parameter="url")
        return self._pool.get()

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
            if self._given is not None:  # the customer's connection: their settings, their bounds
                if not self._migrated:
                    _on_given(self._given, _migration(), atomic=True)
                    self._migrated = True
                return _on_given(self._given, statements)
            pool = self.pool()
            if not self._migrated:
                with self._migrate_lock:
                    if not self._migrated:
                        self._pooled(pool, _migration())
                        self._migrated = True
            return self._pooled(pool, statements, timeout)

    def _pooled(self, pool: Any, statements: Sequence[Statement], timeout: Optional[float] = None) -> list[Result]:
        """One call on a connection of ``pool`` of its own, given back idle or discarded."""
        bound = self.statement_timeout if timeout is None else min(self.statement_timeout, timeout)
        wait = self._wait_bound if timeout is None else min(self._wait_bound, timeout)
        _WAIT_ENDS.set(time.monotonic() + wait)
        conn = lend(pool, wait, self._attempts, self._refused, lambda: self._no_slot(pool, wait))
        watched = Watched(self, conn, bound)
        try:
            if isinstance(statements, Quoted):  # no cursor: libpq's connection, as an async call's
                return [(reply(conn, statements, self._head(bound), watched), [])]
            with self._driver.ClientCursor(conn) as cur:
                text = self.wire(cur, statements, bound)
                with watched:
                    cur.execute(text, prepare=False)
                    results = _results(cur, len(self._settings(bound)), len(statements))
                    if not conn.autocommit:  # the customer's pool: our transaction, committed
                        conn.commit()
                    return results
        finally:
            if watched.fired:  # its socket was shut down, or a cancel may still reach it
                conn.close()
            pool.putconn(conn)

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
        """Close this process's own pool of sync connections (a customer's pool or connection
        stays open); a later call opens a new one."""
        pool = self._pool.take()
        if pool is not None:
            pool.close()

    # -- async ---------------------------------------------------------------------------

    def _new_apool(self) -> Any:
        pools = pool_module(self.owner)
        return pools.AsyncConnectionPool(
            self.url, connection_class=recording(self._driver.AsyncConnection, self._attempts.record),
            open=False,
            check=self._acheck, num_workers=2,
            **self._pool_args(self._driver.AsyncClientCursor),
        )

    async def _acheck(self, conn: Any) -> None:
        if quiet(conn):
            return
        watched = Watched(self, conn, max(0.001, _WAIT_ENDS.get() - time.monotonic()))
        try:
            with watched:
                await pool_module(self.owner).AsyncConnectionPool.check_connection(conn)
        finally:
            if watched.fired:
                await conn.close()

    async def apool(self) -> Any:
        """This event loop's pool of async connections (made on first use; a second loop or
        a forked child makes its own), or the customer's async pool."""
        if self._given_apool is not None:
            return self._given_apool
        if self.url is None:
            kind = "a sync pool" if self._given_pool is not None else "a sync connection"
            raise ParameterError(f"{self.owner} was given {kind}: use its sync methods", parameter="url")
        pool = self._apools.get()
        if pool.closed:  # not opened yet (open() on an open pool costs a lock per call)
            await pool.open()
        return pool

    async def arun(self, statements: Sequence[Statement], *, connection: Any = None) -> list[Result]:
        """``run`` on an async connection."""
        with self:
            if connection is not None:
                if not self._migrated:
                    await _aon_given(connection, _migration(), atomic=True)
                    self._migrated = True
                return await _aon_given(connection, statements)
            if self._given_async is not None:
                if not self._migrated:
                    await _aon_given(self._given_async, _migration(), atomic=True)
                    self._migrated = True
                return await _aon_given(self._given_async, statements)
            pool = await self.apool()
            if not self._migrated:
                await self._ashielded(pool, _migration())
                self._migrated = True
            if isinstance(statements, Quoted):
                return [(await self._aquoted(pool, statements), [])]
            return await self._ashielded(pool, statements)

    async def _ashielded(self, pool: Any, statements: Sequence[Statement]) -> list[Result]:
        # A task cancelled (a client that went away, a timeout of the caller's) returns at
        # once; its statement runs on in a task of its own, within its bound, and gives its
        # connection back idle. Not psycopg's own cancellation: that would wait for a cancel
        # request a frozen server cannot answer, and close its socket early (PgBouncer 1.18).
        task = asyncio.ensure_future(self._apooled(pool, statements))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(consume)
            raise

    async def _aquoted(self, pool: Any, quoted: Quoted, in_task: bool = False) -> int:
        """A ``Quoted`` statement's rowcount, in the caller's own task (no task, no shield: the
        caller wakes once, on the reply). Cancelled while it waits for a connection or for
        the reply, the call returns at once and the rest runs on in a task (``run_on``), as
        ``_ashielded``'s does."""
        _WAIT_ENDS.set(time.monotonic() + self._wait_bound)
        try:
            conn = await alend(pool, self._wait_bound, self._attempts, self._refused,
                               lambda: self._no_slot(pool, self._wait_bound))
        except asyncio.CancelledError:
            if not in_task:
                run_on(self._aquoted(pool, quoted, True))
            raise
        return await areply(self, pool, conn, quoted, self._head(self.statement_timeout), in_task)

    async def _apooled(self, pool: Any, statements: Sequence[Statement]) -> list[Result]:
        bound = self.statement_timeout
        _WAIT_ENDS.set(time.monotonic() + self._wait_bound)
        conn = await alend(pool, self._wait_bound, self._attempts, self._refused,
                           lambda: self._no_slot(pool, self._wait_bound))
        watched = Watched(self, conn, bound)
        try:
            async with self._driver.AsyncClientCursor(conn) as cur:
                text = self.wire(cur, statements, bound)
                with watched:
                    await cur.execute(text, prepare=False)
                    results = await _aresults(cur, len(self._settings(bound)), len(statements))
                    if not conn.autocommit:
                        await conn.commit()
                    return results
        finally:
            if watched.fired:
                await conn.close()
            await pool.putconn(conn)

    async def aexecute(self, sql: str, keys: Sequence[str], params: Any) -> Optional[tuple[Any, ...]]:
        """``execute`` on a connection of this event loop's pool, or in a worker thread when
        the customer gave a sync connection or pool."""
        if self._given is not None or self._given_pool is not None:
            import anyio.to_thread

            return await anyio.to_thread.run_sync(self.execute, sql, keys, params)
        rows = (await self.arun([(sql, params)]))[0][1]
        return tuple(rows[0]) if rows else None

    async def amigrate(self) -> None:
        """``migrate`` on an async connection."""
        self._migrated = False
        await self.arun([])

    async def aclose(self) -> None:
        """Close this event loop's own pool of async connections, and this process's sync one."""
        self.close()
        pool = self._apools.take()
        if pool is not None:
            await pool.close()


async def _close_pool(pool: Any) -> None:
    """A loop's pool when the loop ends (``PerLoop``): its own workers, cancelled in the middle
    of a connection, would otherwise wait for more work for ever and ``asyncio.run`` would
    never return."""
    await pool.close(timeout=1.0)


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
