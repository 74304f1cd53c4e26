"""PostgreSQL plumbing the fleet stores share: psycopg imported on first use, one connection per
thread (or the customer's own), each operation one transaction, driver errors made typed.

An operation is a list of ``(sql, params)`` statements run in one transaction; the stores
build them and read the results, so the sync and the async path share every statement.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import Sequence
from importlib import resources
from typing import Any, Optional

from .. import _checks
from .._errors import ParameterError
from ._store import describe_url, missing_extra, translated_errors

__all__ = ["NOW", "Database", "Result", "schema_sql"]

Statement = tuple[str, Optional[dict[str, Any]]]
Result = tuple[int, list[tuple[Any, ...]]]
"""(rowcount, rows) of one statement; rows is empty for a statement that returns none."""

NOW = "COALESCE(%(now)s::float8, extract(epoch FROM clock_timestamp()))"
"""The store's clock in SQL: the injected clock's value, else the server's, one clock for the fleet."""

_MIGRATE_LOCK = 0x5350_494E  # "SPIN": serialises concurrent first uses (CREATE IF NOT EXISTS races)


def schema_sql() -> str:
    """The schema every PostgreSQL store uses (``postgres_schema.sql`` in the package)."""
    return resources.files(__package__).joinpath("postgres_schema.sql").read_text(encoding="utf-8")


def _psycopg(owner: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise missing_extra(owner, "postgres") from None
    return psycopg


class Database:
    """Where a store's statements run: a URL (a connection per thread and per process, and
    one async connection per event loop), or the customer's ``psycopg.Connection`` /
    ``psycopg.AsyncConnection``, used as given and never closed here."""

    def __init__(
        self,
        owner: str,
        url_or_connection: Any,
        *,
        connect_timeout: float,
        statement_timeout: float,
        auto_migrate: bool,
    ) -> None:
        _checks.seconds("connect_timeout", connect_timeout)
        _checks.seconds("statement_timeout", statement_timeout)
        psycopg = _psycopg(owner)
        self.owner = owner
        self._errors: tuple[type[BaseException], ...] = (psycopg.Error,)
        self.url: Optional[str] = None
        self._given: Any = None
        self._given_async: Any = None
        if isinstance(url_or_connection, str):
            if not url_or_connection.startswith(("postgresql://", "postgres://")):
                raise ParameterError(
                    f"{owner} needs a postgresql:// URL or a psycopg connection", parameter="url"
                )
            self.url = url_or_connection
        elif isinstance(url_or_connection, psycopg.AsyncConnection):
            self._given_async = url_or_connection
        elif isinstance(url_or_connection, psycopg.Connection):
            self._given = url_or_connection
        else:
            raise ParameterError(
                f"{owner} needs a postgresql:// URL or a psycopg connection, not "
                f"{type(url_or_connection).__name__}",
                parameter="url",
            )
        for name, value in (("connect_timeout", connect_timeout), ("statement_timeout", statement_timeout)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ParameterError(f"{name} must be a positive number of seconds", parameter=name)
        # Bounded: a connection attempt and every statement end within these (server-side
        # statement_timeout, so a lock wait cannot hang a worker either).
        self._connect_args = {
            "autocommit": True,
            "connect_timeout": max(1, round(connect_timeout)),
            "options": f"-c statement_timeout={int(statement_timeout * 1000)}",
        }
        self._local = threading.local()
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        self._migrated = not auto_migrate
        self._migrate_lock = threading.Lock()

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

    def _errors_here(self) -> Any:
        return translated_errors(self.owner, "postgres", self._errors, self.url)

    # -- sync ----------------------------------------------------------------------------

    def connection(self) -> Any:
        """This thread's connection, opened anew after a fork or a broken connection."""
        if self._given is not None:
            return self._given
        if self.url is None:
            raise ParameterError(
                f"{self.owner} was given an async connection: use its a* methods", parameter="url"
            )
        conn = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid() and not conn.closed:
            return conn
        conn = _psycopg(self.owner).connect(self.url, **self._connect_args)
        self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def run(self, statements: Sequence[Statement], *, connection: Any = None) -> list[Result]:
        """Run ``statements`` in one transaction of their own, or, given the caller's
        ``connection``, inside the caller's transaction (committed or rolled back by them)."""
        with self._errors_here():
            own = self.connection()
            if not self._migrated:
                with self._migrate_lock:
                    if not self._migrated:
                        _run_on(own, _migration())
                        self._migrated = True
            if connection is not None:
                with connection.cursor() as cur:
                    return _execute_all(cur, statements)
            return _run_on(own, statements)

    def migrate(self) -> None:
        """Create the tables and indexes if missing (idempotent, safe from many processes at once)."""
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
        if conn is None or conn.closed:
            conn = await _psycopg(self.owner).AsyncConnection.connect(self.url, **self._connect_args)
            self._async[loop] = conn
        return conn

    async def arun(self, statements: Sequence[Statement], *, connection: Any = None) -> list[Result]:
        """``run`` on an async connection."""
        with self._errors_here():
            own = await self.aconnection()
            if not self._migrated:
                await _arun_on(own, _migration())
                self._migrated = True
            if connection is not None:
                async with connection.cursor() as cur:
                    return await _aexecute_all(cur, statements)
            return await _arun_on(own, statements)

    async def amigrate(self) -> None:
        """``migrate`` on an async connection."""
        self._migrated = False
        await self.arun([])

    async def aclose(self) -> None:
        """Close this event loop's own async connection."""
        loop = asyncio.get_running_loop()
        conn = self._async.pop(loop, None)
        if conn is not None:
            await conn.close()


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
    if len(statements) == 1 and conn.autocommit:  # one statement is atomic: no BEGIN/COMMIT trips
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
    psycopg = _psycopg(owner)
    if conn.autocommit and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        raise ParameterError(
            "claim_in needs the connection inside your transaction (with conn.transaction(): ...)",
            parameter="connection",
        )
