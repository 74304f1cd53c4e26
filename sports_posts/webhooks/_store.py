"""What every webhook store shares: the default durations, the checks of what a store is given,
claim tokens, and ``StoreError`` where it was always imported.

The plumbing (connections, error translation, schema) is the store layer's, ``sports_posts._stores``.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

from .. import _utils
from .._errors import ParameterError
from .._stores.errors import StoreError

if TYPE_CHECKING:
    from .._stores.postgres import Postgres, PostgresTarget

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_TTL",
    "MAX_TTL",
    "ClaimStatus",
    "ClaimTokens",
    "InboxPolicy",
    "PostgresClock",
    "PostgresStore",
    "StoreError",
    "check_body",
    "check_key",
    "check_retries",
    "check_ttl_and_lease",
    "lease_of",
]

DEFAULT_TTL = 48 * 3600.0
"""Seconds a completed key is remembered: far beyond the ~31 minute retry horizon."""
DEFAULT_LEASE = 300.0
"""Seconds a claim survives without ``complete``/``release``: a dead worker's claim then lapses.

Shorter than the gaps between the later retries (4, 8, 16 minutes), so a retry after a crash
is still processed; longer than a receiver needs between claim and answer.
"""


def check_key(key: object) -> str:
    """A key both engines store as given: a non-empty string of UTF-8 text without NUL."""
    if not isinstance(key, str) or not key or "\x00" in key:
        raise ParameterError("a store key must be a non-empty string without NUL", parameter="key")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise ParameterError("a store key must be valid UTF-8 text", parameter="key") from None
    return key


def check_body(body: object) -> bytes:
    """The raw body as bytes (``bytes``, ``bytearray`` or ``memoryview``)."""
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise ParameterError("an inbox body must be bytes", parameter="body")
    return bytes(body)


def check_retries(max_attempts: object, backoff: Sequence[object]) -> tuple[int, tuple[float, ...]]:
    """An inbox's retry policy: a positive attempt count and non-negative waits in seconds."""
    attempts = _utils.positive_int("max_attempts", max_attempts, maximum=MAX_ATTEMPTS_LIMIT)
    if isinstance(backoff, (str, bytes)) or not isinstance(backoff, Sequence) or not backoff:
        raise ParameterError("backoff must be a non-empty sequence of seconds", parameter="backoff")
    return attempts, tuple(_utils.seconds("backoff", b, allow_zero=True) for b in backoff)


MAX_ATTEMPTS_LIMIT = 1000
"""The most attempts an inbox makes of one event (its backoff's last wait repeats)."""


@dataclass(frozen=True)
class ClaimStatus:
    """A story's claim as a dedupe store holds it, for an operator (``sports-posts claim``):
    ``state`` is ``"none"`` (nothing: the next delivery is processed), ``"claimed"`` (a
    worker holds it; redeliveries are answered 409 until it completes, releases or its lease
    ends in ``expires_in`` seconds) or ``"done"`` (processed; redeliveries are duplicates
    for ``expires_in`` more seconds)."""

    key: str
    state: str
    expires_in: Optional[float] = None


class ClaimTokens:
    """Claim tokens unique across processes and hosts: one random prefix per store, then a
    counter (a uuid4 per claim costs a system call on the hot path)."""

    def __init__(self) -> None:
        self._prefix = uuid.uuid4().hex[:16]
        self._counter = itertools.count(1)

    def __call__(self) -> str:
        return f"{self._prefix}{next(self._counter):x}"


MAX_TTL = 366 * 86400.0
"""The longest ``ttl``/``retention``: a year; a lease is at most a day (``_utils.ONE_DAY``)."""


def check_ttl_and_lease(ttl: float, lease: float, *, ttl_name: str = "ttl") -> tuple[float, float]:
    """A store's memory and lease in seconds: finite, above 0, bounded (nan, inf refused)."""
    return _utils.seconds(ttl_name, ttl, maximum=MAX_TTL), _utils.seconds("lease", lease)


class InboxPolicy:
    """What every inbox is given to retry and remember its events, checked the same way by each engine."""

    max_attempts: int
    """The most handler runs (or leases without an outcome) of one event before it goes ``dead``."""
    backoff: tuple[float, ...]
    """Seconds before attempt 2, 3, ...; the last value repeats until ``max_attempts``."""
    retention: float
    """Seconds a done entry is kept before it is deleted."""
    lease: float
    """Seconds a worker holds an entry before another may take it."""

    def _set_policy(self, max_attempts: int, backoff: Sequence[float], retention: float, lease: float) -> None:
        self.max_attempts, self.backoff = check_retries(max_attempts, backoff)
        self.retention, self.lease = check_ttl_and_lease(retention, lease, ttl_name="retention")


def lease_of(store: object) -> float:
    """Seconds an entry or claim stays with its worker: the store's ``lease``, else a minute."""
    lease = getattr(store, "lease", None)
    if isinstance(lease, (int, float)) and not isinstance(lease, bool) and lease > 0:
        return float(lease)
    return 60.0


PostgresClock = Optional[Callable[[], float]]
"""A PostgreSQL store's clock in epoch seconds; ``None`` reads the server's, one clock for all machines."""

_SWEEP_EVERY = 1000  # claims or completions between two deletes of expired rows


class PostgresStore:
    """Connection, clock, sweep cadence, ``migrate`` and ``close`` shared by the PostgreSQL dedupe store and inbox."""

    _db: Postgres

    def __init__(
        self,
        url_or_connection: PostgresTarget,
        *,
        clock: PostgresClock,
        connect_timeout: float,
        statement_timeout: float,
        auto_migrate: bool,
        pool_size: Optional[int] = None,
    ) -> None:
        from .._stores.postgres import (
            Postgres,  # psycopg's plumbing loads with a PostgreSQL store only
        )

        self._db = Postgres(
            type(self).__name__, url_or_connection, connect_timeout=connect_timeout,
            statement_timeout=statement_timeout, auto_migrate=auto_migrate, pool_size=pool_size,
        )
        self._clock = clock
        self._ops = 0
        self._ops_lock = threading.Lock()

    def _now(self) -> Optional[float]:
        return None if self._clock is None else self._clock()

    def _sweep_due(self) -> bool:
        with self._ops_lock:
            self._ops += 1
            return self._ops % _SWEEP_EVERY == 0

    def migrate(self) -> None:
        """Create every table of the SDK's stores if missing (``sports_posts/_stores/schema.sql``
        holds the same SQL)."""
        self._db.migrate()

    async def amigrate(self) -> None:
        """``migrate`` on an async connection."""
        await self._db.amigrate()

    def close(self) -> None:
        """Close this process's own pool of connections (a pool or connection you passed
        stays open); a later call opens a new one."""
        self._db.close()

    async def aclose(self) -> None:
        """Close this event loop's own pool of async connections (and this process's sync one)."""
        await self._db.aclose()
