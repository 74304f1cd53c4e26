"""Dedupe stores: process each story once although the service retries a delivery up to 6 times.

A key is claimed (``processing``) for a short *lease*, then completed (``done``) for a long
*ttl*. The lease is what makes a claim held by a worker that died expire, so that a later
retry is processed; the ttl outlives the whole retry horizon (spec 6.5: about 31 minutes
over 6 attempts; the default keeps keys for 48 hours, so a dashboard re-send is caught too).

Each store remembers the token of the claims it made, so a worker whose lease expired
cannot complete or release a claim that another worker now holds.
"""

from __future__ import annotations

from typing_extensions import Protocol, runtime_checkable

from .._store import DEFAULT_LEASE, DEFAULT_TTL

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_TTL",
    "AsyncDedupeStore",
    "DedupeStore",
    "MemoryDedupeStore",
    "RedisDedupeStore",
    "SQLiteDedupeStore",
]


@runtime_checkable
class DedupeStore(Protocol):
    """What [`WebhookReceiver`][sports_posts.webhooks.WebhookReceiver] needs from a store; write your own against this."""

    def claim(self, key: str) -> bool:
        """Atomically claim ``key``; true only for the first claimant (or after its lease lapsed)."""
        ...

    def complete(self, key: str) -> None:
        """Mark ``key`` done: every later claim fails until the ttl passes."""
        ...

    def release(self, key: str) -> None:
        """Free a claim whose processing failed, so that the next retry is processed."""
        ...

    def is_complete(self, key: str) -> bool:
        """Whether ``key`` is done (as opposed to claimed and still in flight)."""
        ...


@runtime_checkable
class AsyncDedupeStore(Protocol):
    """A store with a native async path: ``WebhookReceiver.handle_async`` awaits these
    instead of sending the sync methods to a thread. Stores whose I/O blocks (SQLite) leave
    them out and are offloaded."""

    async def aclaim(self, key: str) -> bool: ...

    async def acomplete(self, key: str) -> None: ...

    async def arelease(self, key: str) -> None: ...

    async def ais_complete(self, key: str) -> bool: ...



# The stores, importable from here as before (each module holds one engine).
from .memory import MemoryDedupeStore  # noqa: E402
from .redis import RedisDedupeStore  # noqa: E402
from .sqlite import SQLiteDedupeStore  # noqa: E402
