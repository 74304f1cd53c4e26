"""The one store layer: every Redis, PostgreSQL and SQLite store of the SDK runs on it.

``errors`` (the ``StoreError`` family, URLs without passwords), ``postgres`` (connections,
timeouts, reconnection, the one schema and ``migrate()``), ``redis`` (clients, timeouts,
scripts) and ``sqlite`` (per-thread WAL connections). Stores build their statements and read
the answers; nothing here knows what a lease, a budget or an inbox is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

from .._errors import ParameterError
from .errors import CoordinationError, StoreError, StoreUnavailableError, redact_url, scrub

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool
    import redis
    import redis.asyncio
    import redis.cluster

__all__ = [
    "CoordinationError",
    "StoreError",
    "StoreTarget",
    "StoreUnavailableError",
    "redact_url",
    "runner_for",
    "scrub",
]

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
    if isinstance(store, str):
        scheme = store.split(":", 1)[0].lower()
        if scheme in ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster", "redis+sentinel", "rediss+sentinel"):
            from .redis import Redis

            return Redis(owner, store, error=CoordinationError, parameter=parameter,
                         connect_timeout=connect_timeout, socket_timeout=statement_timeout)
        if scheme in ("postgresql", "postgres"):
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
