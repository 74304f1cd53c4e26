"""An in-process dedupe store, for one worker process and tests."""

from __future__ import annotations

import functools
import logging
import threading
import time
import weakref
from typing import TYPE_CHECKING, Callable

from ... import _scoped
from .._store import DEFAULT_LEASE, DEFAULT_TTL, check_ttl_and_lease

if TYPE_CHECKING:
    pass

logger: logging.Logger = logging.getLogger("sports_posts.webhooks")

Clock = Callable[[], float]

__all__ = ["MemoryDedupeStore"]


class MemoryDedupeStore:
    """In-process store for one worker process and tests; forgets everything on restart.

    Per process: a forked child (gunicorn ``--preload``, Celery prefork) starts with a copy of
    the keys its parent held at the fork and goes on alone; neither sees the other's later
    claims. Several processes that must not handle a story twice share a SQLite, Redis or
    PostgreSQL store instead."""

    def __init__(
        self, *, ttl: float = DEFAULT_TTL, lease: float = DEFAULT_LEASE, clock: Clock = time.time
    ) -> None:
        self.ttl: float
        self.lease: float
        self.ttl, self.lease = check_ttl_and_lease(ttl, lease)
        self._clock = clock
        self._lock = threading.Lock()
        # A parent's thread may have held the lock at a fork: the child makes its own.
        self._fork_handle = _scoped.on_fork(functools.partial(_new_lock, weakref.ref(self)))
        self._entries: dict[str, tuple[str, float]] = {}  # key -> ("p" or "", expires_at)
        self._next_sweep = 0.0

    def __repr__(self) -> str:
        return f"MemoryDedupeStore(ttl={self.ttl:g}, lease={self.lease:g}, keys={len(self._entries)})"

    def claim(self, key: str) -> bool:
        now = self._clock()
        with self._lock:
            if now >= self._next_sweep:
                self._sweep(now)
            entry = self._entries.get(key)
            if entry is not None and entry[1] > now:
                return False
            # "p" marks a claim in flight ("" a done key); release() compares nothing more,
            # so a per-claim token would cost without protecting anything here.
            self._entries[key] = ("p", now + self.lease)
            return True

    def complete(self, key: str) -> None:
        with self._lock:
            self._entries[key] = ("", self._clock() + self.ttl)

    def release(self, key: str) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0]:  # only a claim in flight, never a done key
                del self._entries[key]

    def is_complete(self, key: str) -> bool:
        with self._lock:
            entry = self._entries.get(key)
            return entry is not None and entry[0] == "" and entry[1] > self._clock()

    # Memory never blocks: the async path is the sync one, without a thread hop.

    async def aclaim(self, key: str) -> bool:
        """``claim``, for ``WebhookReceiver.handle_async``."""
        return self.claim(key)

    async def acomplete(self, key: str) -> None:
        """``complete``, for ``WebhookReceiver.handle_async``."""
        self.complete(key)

    async def arelease(self, key: str) -> None:
        """``release``, for ``WebhookReceiver.handle_async``."""
        self.release(key)

    async def ais_complete(self, key: str) -> bool:
        """``is_complete``, for ``WebhookReceiver.handle_async``."""
        return self.is_complete(key)

    def _sweep(self, now: float) -> None:
        self._next_sweep = now + min(self.lease, 60.0)
        for key in [k for k, (_, expires) in self._entries.items() if expires <= now]:
            del self._entries[key]



def _new_lock(store: weakref.ref[MemoryDedupeStore]) -> None:
    owner = store()
    if owner is not None:
        owner._lock = threading.Lock()
