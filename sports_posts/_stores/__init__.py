"""The one store layer: every Redis, PostgreSQL and SQLite store of the SDK runs on it.

``errors`` (the ``StoreError`` family, URLs without passwords), ``postgres`` (connections,
timeouts, reconnection, the one schema and ``migrate()``), ``redis`` (clients, timeouts,
scripts) and ``sqlite`` (per-thread WAL connections). Stores build their statements and read
the answers; nothing here knows what a lease, a budget or an inbox is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

from .._errors import ParameterError

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool
    import redis
    import redis.asyncio
    import redis.asyncio.cluster
    import redis.cluster

    from .errors import SCHEMES as SCHEMES
    from .errors import CoordinationError as CoordinationError
    from .errors import PoolerUnreachableError as PoolerUnreachableError
    from .errors import StoreError as StoreError
    from .errors import StoreUnavailableError as StoreUnavailableError
    from .errors import redact_url as redact_url
    from .errors import scrub as scrub
    from .errors import store_kind as store_kind

__all__ = [
    "CoordinationError",
    "StoreError",
    "AsyncRedisClient",
    "RedisTarget",
    "StoreTarget",
    "StoreUnavailableError",
    "redact_url",
    "runner_for",
    "scrub",
    "store_kind",
]

RedisTarget = Union[
    str,
    "redis.Redis",
    "redis.asyncio.Redis",
    "redis.cluster.RedisCluster",
    "redis.asyncio.cluster.RedisCluster",
]
"""What a Redis store accepts: a ``redis://`` / ``rediss://`` / ``unix://`` /
``redis+cluster://`` / ``redis+sentinel://`` URL, or a redis-py client (sync or asyncio,
single server, Sentinel's ``master_for`` or cluster). The driver is an optional extra, so
its types are named for type checkers only."""

AsyncRedisClient = Union["redis.asyncio.Redis", "redis.asyncio.cluster.RedisCluster"]
"""A redis-py asyncio client (``async_client=`` of a store given a sync client)."""

StoreTarget = Union[
    str,
    "redis.Redis",
    "redis.asyncio.Redis",
    "redis.cluster.RedisCluster",
    "psycopg.Connection[Any]",
    "psycopg.AsyncConnection[Any]",
    "psycopg_pool.ConnectionPool[Any]",
    "psycopg_pool.AsyncConnectionPool[Any]",
]
"""What the fleet objects (``CallBudget``, ``Lease``) accept as their store: a
``redis://`` / ``rediss://`` / ``unix://`` or ``postgresql://`` URL, a ``redis.Redis``,
``redis.asyncio.Redis`` or ``redis.cluster.RedisCluster``, a ``psycopg.Connection`` /
``psycopg.AsyncConnection``, or a ``psycopg_pool.ConnectionPool`` / ``AsyncConnectionPool``. The drivers are optional extras, so their types are named for
type checkers only."""


# The error family loads on first use: this package imports none of its own modules at load
# time, so that a thread importing ``_stores.errors`` first (``webhooks.errors`` does) never
# waits for a package that waits for it (tests/test_import_threads.py).
_FROM_ERRORS = frozenset(("SCHEMES", "CoordinationError", "PoolerUnreachableError", "StoreError",
                          "StoreUnavailableError", "redact_url", "scrub", "store_kind"))

if not TYPE_CHECKING:  # at run time only: a checker reads the imports above

    def __getattr__(name: str) -> Any:
        if name not in _FROM_ERRORS:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from . import errors

        value = getattr(errors, name)
        globals()[name] = value
        return value


def runner_for(
    store: Any,
    *,
    owner: str,
    parameter: str = "store",
    connect_timeout: float = 5.0,
    statement_timeout: float = 5.0,
) -> Any:
    """A ``postgres.Postgres`` or ``redis.Redis`` chosen by URL scheme or client type, raising
    ``CoordinationError`` (the fleet objects' error) on a driver failure. On Redis,
    ``statement_timeout`` is the socket timeout of a client made here."""
    from .errors import CoordinationError, redact_url, store_kind

    if isinstance(store, str):
        kind = store_kind(store)
        if kind == "redis":
            from .redis import Redis

            return Redis(owner, store, error=CoordinationError, parameter=parameter,
                         connect_timeout=connect_timeout, socket_timeout=statement_timeout)
        if kind == "postgres":
            from .postgres import Postgres

            return Postgres(owner, store, error=CoordinationError, parameter=parameter,
                            connect_timeout=connect_timeout, statement_timeout=statement_timeout)
        raise ParameterError(
            f"{owner}: expected a redis:// or postgresql:// URL, got {redact_url(store)!r}",
            parameter=parameter,
        )
    if type(store).__module__.startswith("psycopg"):
        from .postgres import Postgres

        return Postgres(owner, store, error=CoordinationError, parameter=parameter,
                            connect_timeout=connect_timeout, statement_timeout=statement_timeout)
    from .redis import Redis

    return Redis(owner, store, error=CoordinationError, parameter=parameter,
                         connect_timeout=connect_timeout, socket_timeout=statement_timeout)
