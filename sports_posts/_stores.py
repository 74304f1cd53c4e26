"""Running one statement on Redis or PostgreSQL, sync or async, for the fleet's coordination.

The lease, the fenced checkpoint and the call budget each decide in a Lua script or one SQL
statement; this module only runs those statements. Each runner takes a URL (clients made on
first use) or a client the customer already has, turns every driver failure into a
``CoordinationError`` with any password scrubbed, and imports its driver only here.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Optional
from urllib.parse import unquote, urlsplit, urlunsplit

from ._errors import ParameterError, SportsPostsError

__all__ = ["CoordinationError", "PostgresRunner", "RedisRunner", "redact_url", "scrub"]


class CoordinationError(SportsPostsError):
    """Redis or PostgreSQL failed a statement of a lease, a fenced checkpoint or a call budget.

    Nothing was decided: a lease is not held, a draw is not granted. The message names the
    store and the driver's error (never a password).
    """


def redact_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (for reprs, logs and errors)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable url>"
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _password(url: str) -> Optional[str]:
    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    return unquote(password) if password else None


def scrub(text: str, url: Optional[str]) -> str:
    """``text`` with the URL's password (raw and percent-decoded) masked, in case a driver
    echoes it. The fleet stores of ``sports_posts.webhooks`` use this one too."""
    password = _password(url) if url else None
    if password:
        raw = urlsplit(url).password if url else None
        for secret in {password, raw}:
            if secret:
                text = text.replace(secret, "***")
    return text


class _Runner:
    """What both runners share: where they connect and how a failure is reported."""

    engine = ""
    _async_close = "close"
    """The coroutine method that closes the async client (redis: ``aclose``)."""

    def __init__(self, url_or_client: Any, *, what: str) -> None:
        self._what = what
        self._url: Optional[str] = url_or_client if isinstance(url_or_client, str) else None
        self._lock = threading.Lock()
        self._sync: Any = None
        self._async: Any = None

    def close(self) -> None:
        """Close the client made from a URL (a client passed in is the caller's to close)."""
        if self._url is not None and self._sync is not None:
            self._sync.close()
            self._sync = None

    async def aclose(self) -> None:
        """``close``, and the async client made from a URL."""
        self.close()
        if self._url is not None and self._async is not None:
            await getattr(self._async, self._async_close)()
            self._async = None

    def __repr__(self) -> str:
        where = redact_url(self._url) if self._url is not None else "<client>"
        return f"{self.engine}({where})"

    def _failed(self, exc: BaseException) -> CoordinationError:
        detail = scrub(f"{type(exc).__name__}: {exc}".strip(), self._url)
        return CoordinationError(f"{self._what}: {self.engine} failed ({detail})")


class RedisRunner(_Runner):
    """Runs Lua scripts on a ``redis://`` URL, a ``redis.Redis`` or a ``redis.asyncio.Redis``.

    A sync client serves the async methods through a worker thread; an async client cannot
    serve the sync ones (a ``ParameterError`` says so).
    """

    engine = "redis"
    _async_close = "aclose"

    def __init__(self, url_or_client: Any, *, what: str) -> None:
        super().__init__(url_or_client, what=what)
        if self._url is None:
            redis_asyncio = _import("redis.asyncio", what)
            if isinstance(url_or_client, redis_asyncio.Redis):
                self._async = url_or_client
            elif callable(getattr(url_or_client, "register_script", None)):
                self._sync = url_or_client
            else:
                raise ParameterError(
                    f"{what}: expected a redis:// URL, a redis.Redis or a redis.asyncio.Redis, "
                    f"got {type(url_or_client).__name__}"
                )
        self._scripts: dict[tuple[int, str], Any] = {}

    def _script(self, client: Any, source: str) -> Any:
        key = (id(client), source)
        script = self._scripts.get(key)
        if script is None:
            script = self._scripts[key] = client.register_script(source)
        return script

    def _sync_client(self) -> Any:
        with self._lock:
            if self._sync is None:
                if self._url is None:
                    raise ParameterError(
                        f"{self._what}: a redis.asyncio.Redis serves only the async methods; "
                        "pass a redis.Redis or a URL for the sync ones"
                    )
                self._sync = _import("redis", self._what).Redis.from_url(self._url)
            return self._sync

    def run(self, source: str, keys: Sequence[str], args: Any) -> Any:
        """Run a Lua script (atomic on the server) and return its reply."""
        client = self._sync_client()
        errors = _import("redis", self._what).RedisError
        try:
            return self._script(client, source)(keys=list(keys), args=list(args))
        except errors as exc:
            raise self._failed(exc) from None

    async def run_async(self, source: str, keys: Sequence[str], args: Any) -> Any:
        """``run`` on the event loop (an async client) or in a worker thread (a sync one)."""
        if self._async is None and (self._sync is not None or self._url is None):
            import anyio.to_thread

            return await anyio.to_thread.run_sync(self.run, source, keys, args)
        redis = _import("redis", self._what)
        if self._async is None:
            self._async = _import("redis.asyncio", self._what).Redis.from_url(self._url)
        try:
            return await self._script(self._async, source)(keys=list(keys), args=list(args))
        except redis.RedisError as exc:
            raise self._failed(exc) from None


class PostgresRunner(_Runner):
    """Runs one SQL statement on a ``postgresql://`` URL, a ``psycopg.Connection`` or a
    ``psycopg.AsyncConnection``; creates its tables once, under an advisory lock.

    A connection made from a URL is in autocommit mode: every statement commits at once. A
    connection passed in keeps its mode; outside a transaction the statement is committed,
    inside the caller's transaction it commits (or rolls back) with it.
    """

    engine = "postgresql"

    def __init__(self, url_or_client: Any, *, what: str, schema: str) -> None:
        super().__init__(url_or_client, what=what)
        psycopg = _import("psycopg", what)
        self._schema = schema
        if self._url is None:
            if isinstance(url_or_client, psycopg.AsyncConnection):
                self._async = url_or_client
            elif isinstance(url_or_client, psycopg.Connection):
                self._sync = url_or_client
            else:
                raise ParameterError(
                    f"{what}: expected a postgresql:// URL, a psycopg.Connection or a "
                    f"psycopg.AsyncConnection, got {type(url_or_client).__name__}"
                )
        self._ready_sync = False
        self._ready_async = False

    def _lock_id(self) -> int:
        # One advisory lock for every runner's DDL: concurrent CREATE TABLE IF NOT EXISTS
        # races on the catalog (a unique violation in pg_type) without it.
        return 0x5350_4C45  # "SPLE"

    def run(self, sql: str, keys: Sequence[str], params: Any) -> Optional[tuple[Any, ...]]:
        """Run one statement (creating the tables first, once) and return its first row;
        ``keys`` is unused (the statement names its rows), as Lua scripts need them."""
        psycopg = _import("psycopg", self._what)
        try:
            with self._lock:
                if self._sync is None:
                    if self._url is None:
                        raise ParameterError(
                            f"{self._what}: a psycopg.AsyncConnection serves only the async methods; "
                            "pass a psycopg.Connection or a URL for the sync ones"
                        )
                    self._sync = psycopg.connect(self._url, autocommit=True)
                conn = self._sync
                with conn.transaction():
                    if not self._ready_sync:
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_id(),))
                        conn.execute(self._schema)
                    row = conn.execute(sql, params).fetchone()
                self._ready_sync = True
                return None if row is None else tuple(row)
        except psycopg.Error as exc:
            raise self._failed(exc) from None

    async def run_async(self, sql: str, keys: Sequence[str], params: Any) -> Optional[tuple[Any, ...]]:
        """``run`` on the event loop (an async connection) or in a worker thread."""
        if self._async is None and (self._sync is not None or self._url is None):
            import anyio.to_thread

            return await anyio.to_thread.run_sync(self.run, sql, keys, params)
        psycopg = _import("psycopg", self._what)
        try:
            if self._async is None:
                self._async = await psycopg.AsyncConnection.connect(self._url, autocommit=True)
            conn = self._async
            async with conn.transaction():
                if not self._ready_async:
                    await conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_id(),))
                    await conn.execute(self._schema)
                row = await (await conn.execute(sql, params)).fetchone()
            self._ready_async = True
            return None if row is None else tuple(row)
        except psycopg.Error as exc:
            raise self._failed(exc) from None


def _import(module: str, what: str) -> Any:
    import importlib

    extra = "redis" if module.startswith("redis") else "postgres"
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ParameterError(
            f"{what} needs the {extra} extra: pip install 'sports-posts[{extra}]'"
        ) from None


def runner_for(url_or_client: Any, *, what: str, schema: str) -> Any:
    """A ``RedisRunner`` or ``PostgresRunner``, chosen by URL scheme or client type."""
    if isinstance(url_or_client, str):
        scheme = url_or_client.split(":", 1)[0].lower()
        if scheme in ("redis", "rediss", "unix"):
            return RedisRunner(url_or_client, what=what)
        if scheme in ("postgresql", "postgres"):
            return PostgresRunner(url_or_client, what=what, schema=schema)
        raise ParameterError(
            f"{what}: expected a redis:// or postgresql:// URL, got {redact_url(url_or_client)!r}"
        )
    module = type(url_or_client).__module__
    if module.startswith("psycopg"):
        return PostgresRunner(url_or_client, what=what, schema=schema)
    return RedisRunner(url_or_client, what=what)
