"""Dedupe stores: process each story once although the service retries a delivery up to 6 times.

A key is claimed (``processing``) for a short *lease*, then completed (``done``) for a long
*ttl*. The lease is what makes a claim held by a worker that died expire, so that a later
retry is processed; the ttl outlives the whole retry horizon (spec 6.5: about 31 minutes
over 6 attempts; the default keeps keys for 48 hours, so a dashboard re-send is caught too).

Each store remembers the token of the claims it made, so a worker whose lease expired
cannot complete or release a claim that another worker now holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._utils import attach

if TYPE_CHECKING:  # the same names, as explicit re-exports (`X as X`) that every checker accepts
    from .._store import DEFAULT_LEASE as DEFAULT_LEASE
    from .._store import DEFAULT_TTL as DEFAULT_TTL
    from ._protocol import AsyncDedupeStore as AsyncDedupeStore
    from ._protocol import DedupeStore as DedupeStore
    from .memory import MemoryDedupeStore as MemoryDedupeStore
    from .redis import RedisDedupeStore as RedisDedupeStore
    from .sqlite import SQLiteDedupeStore as SQLiteDedupeStore

__all__ = [
    "AsyncDedupeStore",
    "DEFAULT_LEASE",
    "DEFAULT_TTL",
    "DedupeStore",
    "MemoryDedupeStore",
    "RedisDedupeStore",
    "SQLiteDedupeStore",
]

# Each public name and the module that defines it: the package imports none of its own
# modules at load time (tests/test_import_threads.py), so that a thread importing
# ``dedupe.memory`` first never waits for a package that waits for it.
_LAZY = {
    "DEFAULT_LEASE": ".._store",
    "DEFAULT_TTL": ".._store",
    "AsyncDedupeStore": "._protocol",
    "DedupeStore": "._protocol",
    "MemoryDedupeStore": ".memory",
    "RedisDedupeStore": ".redis",
    "SQLiteDedupeStore": ".sqlite",
}

if not TYPE_CHECKING:  # at run time only: a checker reads the imports above
    __getattr__, __dir__ = attach(__name__, _LAZY, __all__)
