"""The dedupe protocols, in a module of their own: the package's ``__init__`` imports no store
module at load time (a thread importing ``dedupe.memory`` first would wait for the package
that waits for it: a deadlock of the import locks)."""

from __future__ import annotations

from typing_extensions import Protocol, runtime_checkable

__all__ = ["AsyncDedupeStore", "DedupeStore"]


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
