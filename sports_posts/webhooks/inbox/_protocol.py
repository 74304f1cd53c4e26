"""The ``Inbox`` protocol, in a module of its own: the package's ``__init__`` imports no inbox
module at load time (a thread importing ``inbox.sqlite`` first would wait for the package
that waits for it: a deadlock of the import locks)."""

from __future__ import annotations

from typing import Optional

from typing_extensions import Protocol, runtime_checkable

from ._entry import InboxEntry

__all__ = ["Inbox"]


@runtime_checkable
class Inbox(Protocol):
    """A durable queue of verified events: stored before the 2xx, drained with leases and retries.

    ``take_due`` leases entries to one worker; ``mark_done``/``mark_failed`` only count for
    the worker whose lease (``InboxEntry.token``) is still current.
    """

    def put(self, key: str, body: bytes, delivery_id: Optional[str] = None) -> bool:
        """Store an event; false when ``key`` is already stored."""
        ...

    def take_due(self, limit: int = 16) -> list[InboxEntry]:
        """Lease up to ``limit`` due entries, including those of a worker that died."""
        ...

    def get(self, key: str) -> Optional[InboxEntry]:
        """The stored entry of ``key``, whatever its state."""
        ...

    def mark_done(self, entry: InboxEntry) -> None:
        """The handler succeeded."""
        ...

    def mark_failed(self, entry: InboxEntry, error: str, *, permanent: bool = False) -> str:
        """The handler raised: retry later or ``dead``; returns the new state."""
        ...

    def next_due(self) -> Optional[float]:
        """When (epoch seconds) the earliest entry falls due, or ``None``."""
        ...

    def counts(self) -> dict[str, int]:
        """Entries per state: ``pending``, ``processing``, ``done``, ``dead``."""
        ...

    def dead(self) -> list[InboxEntry]:
        """Entries that failed too often, for a person to inspect."""
        ...

    def requeue(self, key: str) -> bool:
        """Give a dead entry a fresh set of attempts."""
        ...

    def purge_dead(self) -> int:
        """Delete every dead entry; returns how many."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
