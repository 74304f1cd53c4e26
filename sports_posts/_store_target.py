"""What the fleet objects (``CallBudget``, ``Lease``) accept as their store: a URL or a
client the customer already has. The drivers are optional extras, so their types are named
for type checkers only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    import psycopg
    import redis
    import redis.asyncio
    import redis.cluster

__all__ = ["StoreTarget"]

StoreTarget = Union[
    str,
    "redis.Redis",
    "redis.asyncio.Redis",
    "redis.cluster.RedisCluster",
    "psycopg.Connection[Any]",
    "psycopg.AsyncConnection[Any]",
]
"""A ``redis://`` / ``rediss://`` / ``unix://`` or ``postgresql://`` URL, a ``redis.Redis``,
``redis.asyncio.Redis`` or ``redis.cluster.RedisCluster``, or a ``psycopg.Connection`` /
``psycopg.AsyncConnection``."""
