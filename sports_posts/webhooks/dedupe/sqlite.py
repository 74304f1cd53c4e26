"""A dedupe store in one SQLite file (WAL): survives a restart, shared by threads and processes."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from typing import TYPE_CHECKING, Callable, Optional, Union

from ... import _utils
from ..._errors import ParameterError
from ..._stores.sqlite import thread_connection, typed_errors
from .._store import DEFAULT_LEASE, DEFAULT_TTL, ClaimStatus, ClaimTokens, check_ttl_and_lease

if TYPE_CHECKING:
    from os import PathLike

logger: logging.Logger = logging.getLogger("sports_posts.webhooks")

Clock = Callable[[], float]

__all__ = ["SQLiteDedupeStore"]


class SQLiteDedupeStore:
    """A store in one SQLite file (WAL): survives a restart, shared by threads and processes.

    Every operation is a single statement, so it is atomic across processes; one connection
    is opened per thread and per process (a forked child opens its own).
    """

    @typed_errors
    def __init__(
        self,
        path: Union[str, PathLike[str]],
        *,
        ttl: float = DEFAULT_TTL,
        lease: float = DEFAULT_LEASE,
        clock: Clock = time.time,
        busy_timeout: float = 30.0,
    ) -> None:
        self.ttl: float
        self.lease: float
        self.ttl, self.lease = check_ttl_and_lease(ttl, lease)
        _utils.seconds("busy_timeout", busy_timeout)
        self.path: str = os.fspath(path)
        if self.path == ":memory:":
            raise ParameterError(
                "SQLiteDedupeStore needs a file shared by its connections; use MemoryDedupeStore",
                parameter="path",
            )
        self._clock = clock
        self._busy_timeout = busy_timeout
        self._local = threading.local()
        self._tokens: dict[str, str] = {}
        self._new_token = ClaimTokens()
        self._tokens_lock = threading.Lock()
        self._claims_since_sweep = 0
        with self._connect() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS webhook_claims ("
                " key TEXT PRIMARY KEY, token TEXT NOT NULL, expires_at REAL NOT NULL)"
            )

    def __repr__(self) -> str:
        return f"SQLiteDedupeStore({self.path!r}, ttl={self.ttl:g}, lease={self.lease:g})"

    def _connect(self) -> sqlite3.Connection:
        return thread_connection(self._local, self.path, self._busy_timeout, "NORMAL")

    @typed_errors
    def claim(self, key: str) -> bool:
        now = self._clock()
        token = self._new_token()
        conn = self._connect()
        # One UPSERT: inserts a new claim, or takes over one whose lease or ttl has passed.
        cursor = conn.execute(
            "INSERT INTO webhook_claims (key, token, expires_at) VALUES (?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at"
            " WHERE webhook_claims.expires_at <= ?",
            (key, token, now + self.lease, now),
        )
        claimed = cursor.rowcount == 1
        if claimed:
            with self._tokens_lock:
                self._tokens[key] = token
            self._maybe_sweep(conn, now)
        return claimed

    @typed_errors
    def complete(self, key: str) -> None:
        token = self._pop_token(key)
        expires = self._clock() + self.ttl
        conn = self._connect()
        if token is None:
            conn.execute(
                "INSERT INTO webhook_claims (key, token, expires_at) VALUES (?, '', ?)"
                " ON CONFLICT (key) DO UPDATE SET token = '', expires_at = excluded.expires_at",
                (key, expires),
            )
            return
        cursor = conn.execute(
            "UPDATE webhook_claims SET token = '', expires_at = ? WHERE key = ? AND token = ?",
            (expires, key, token),
        )
        if cursor.rowcount == 0:
            logger.warning("completed %s after its lease lapsed; another worker may process it too", key)
            conn.execute(
                "INSERT INTO webhook_claims (key, token, expires_at) VALUES (?, '', ?)"
                " ON CONFLICT (key) DO UPDATE SET token = '', expires_at = excluded.expires_at",
                (key, expires),
            )

    @typed_errors
    def release(self, key: str) -> None:
        token = self._pop_token(key)
        conn = self._connect()
        if token is None:
            conn.execute("DELETE FROM webhook_claims WHERE key = ? AND token != ''", (key,))
        else:
            conn.execute("DELETE FROM webhook_claims WHERE key = ? AND token = ?", (key, token))

    @typed_errors
    def is_complete(self, key: str) -> bool:
        row = self._connect().execute(
            "SELECT 1 FROM webhook_claims WHERE key = ? AND token = '' AND expires_at > ?",
            (key, self._clock()),
        ).fetchone()
        return row is not None

    @typed_errors
    def claim_status(self, key: str) -> ClaimStatus:
        """The story's claim as it stands (``sports-posts claim status``); reads, changes nothing."""
        now = self._clock()
        row = self._connect().execute(
            "SELECT token, expires_at FROM webhook_claims WHERE key = ? AND expires_at > ?", (key, now),
        ).fetchone()
        if row is None:
            return ClaimStatus(key, "none")
        return ClaimStatus(key, "claimed" if row[0] else "done", float(row[1]) - now)

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        conn: Optional[sqlite3.Connection] = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _pop_token(self, key: str) -> Optional[str]:
        with self._tokens_lock:
            return self._tokens.pop(key, None)

    def _maybe_sweep(self, conn: sqlite3.Connection, now: float) -> None:
        self._claims_since_sweep += 1
        if self._claims_since_sweep >= 1000:
            self._claims_since_sweep = 0
            conn.execute("DELETE FROM webhook_claims WHERE expires_at <= ?", (now,))

