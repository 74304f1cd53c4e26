"""A durable SQLite inbox: an event is stored before the 2xx, then drained with retries.

Answering 2xx ends the service's retries (spec 6.5), so a receiver that acknowledges and
then crashes would lose the event. With an inbox the 2xx only follows a committed row, and
a worker drains rows with its own backoff; rows that keep failing become ``dead`` and stay
inspectable (``SQLiteInbox.dead``) and replayable (``SQLiteInbox.requeue``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Union

from .._errors import ParameterError
from ._sqlite import thread_connection
from .dedupe import DEFAULT_LEASE, DEFAULT_TTL

if TYPE_CHECKING:
    from os import PathLike

__all__ = ["DEFAULT_BACKOFF", "InboxEntry", "SQLiteInbox"]

DEFAULT_BACKOFF: tuple[float, ...] = (1.0, 5.0, 30.0, 120.0, 600.0, 1800.0)
"""Seconds before attempt 2, 3, ...; the last value repeats until ``max_attempts``."""


@dataclass(frozen=True)
class InboxEntry:
    """One stored event: the verified raw body, so nothing is lost to a model change."""

    key: str
    body: bytes
    delivery_id: Optional[str]
    attempts: int
    state: str
    last_error: Optional[str]
    token: str = ""


class SQLiteInbox:
    """Events committed to a SQLite file (WAL, ``synchronous=FULL``) before they are acknowledged.

    Rows are keyed by the dedupe key, so the same story is stored once. Several processes
    may share one file: a worker takes a row with a lease, and a row whose worker died is
    taken again once its lease passes.
    """

    def __init__(
        self,
        path: Union[str, PathLike[str]],
        *,
        max_attempts: int = 10,
        backoff: Sequence[float] = DEFAULT_BACKOFF,
        lease: float = DEFAULT_LEASE,
        retention: float = DEFAULT_TTL,
        clock: Callable[[], float] = time.time,
        busy_timeout: float = 30.0,
    ) -> None:
        self.path = os.fspath(path)
        if self.path == ":memory:":
            raise ParameterError("an inbox must be a file to survive a crash", parameter="path")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ParameterError("max_attempts must be a positive integer", parameter="max_attempts")
        if not backoff or any(not isinstance(b, (int, float)) or b < 0 for b in backoff):
            raise ParameterError("backoff must be non-negative seconds", parameter="backoff")
        self.max_attempts = max_attempts
        self.backoff = tuple(float(b) for b in backoff)
        self.lease = float(lease)
        self.retention = float(retention)
        self._clock = clock
        self._busy_timeout = busy_timeout
        self._local = threading.local()
        conn = self._connect()
        conn.execute(
            "CREATE TABLE IF NOT EXISTS webhook_inbox ("
            " key TEXT PRIMARY KEY, body BLOB NOT NULL, delivery_id TEXT,"
            " state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
            " due_at REAL NOT NULL, token TEXT NOT NULL DEFAULT '',"
            " received_at REAL NOT NULL, last_error TEXT)"
        )
        conn.execute("CREATE INDEX IF NOT EXISTS webhook_inbox_due ON webhook_inbox (state, due_at)")

    def __repr__(self) -> str:
        return f"SQLiteInbox({self.path!r}, max_attempts={self.max_attempts})"

    def _connect(self) -> sqlite3.Connection:
        # FULL: the 2xx promises the row is on disk.
        return thread_connection(self._local, self.path, self._busy_timeout, "FULL")

    def put(self, key: str, body: bytes, delivery_id: Optional[str] = None) -> bool:
        """Commit an event; false when ``key`` is already stored (a retry of a stored story)."""
        now = self._clock()
        cursor = self._connect().execute(
            "INSERT OR IGNORE INTO webhook_inbox"
            " (key, body, delivery_id, state, attempts, due_at, received_at)"
            " VALUES (?, ?, ?, 'pending', 0, ?, ?)",
            (key, bytes(body), delivery_id, now, now),
        )
        return cursor.rowcount == 1

    def take_due(self, limit: int = 16) -> list[InboxEntry]:
        """Lease up to ``limit`` rows that are due, including rows of a worker that died."""
        now = self._clock()
        token = uuid.uuid4().hex
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            rows = conn.execute(
                "SELECT key FROM webhook_inbox"
                " WHERE state IN ('pending', 'processing') AND due_at <= ?"
                " ORDER BY due_at LIMIT ?",
                (now, limit),
            ).fetchall()
            keys = [row[0] for row in rows]
            conn.executemany(
                "UPDATE webhook_inbox SET state = 'processing', token = ?, due_at = ? WHERE key = ?",
                [(token, now + self.lease, key) for key in keys],
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return [entry for entry in (self.get(key) for key in keys) if entry is not None]

    def get(self, key: str) -> Optional[InboxEntry]:
        """The stored row of ``key``, whatever its state."""
        row = self._connect().execute(
            "SELECT key, body, delivery_id, attempts, state, last_error, token"
            " FROM webhook_inbox WHERE key = ?",
            (key,),
        ).fetchone()
        return None if row is None else InboxEntry(row[0], bytes(row[1]), *row[2:])

    def mark_done(self, entry: InboxEntry) -> None:
        """The handler succeeded: keep the row as ``done`` until ``retention`` passes."""
        conn = self._connect()
        conn.execute(
            "UPDATE webhook_inbox SET state = 'done', attempts = attempts + 1, body = X'',"
            " due_at = ?, last_error = NULL WHERE key = ? AND token = ?",
            (self._clock() + self.retention, entry.key, entry.token),
        )
        conn.execute(
            "DELETE FROM webhook_inbox WHERE state = 'done' AND due_at <= ?", (self._clock(),)
        )

    def mark_failed(self, entry: InboxEntry, error: str, *, permanent: bool = False) -> str:
        """The handler raised: schedule a retry, or ``dead`` after ``max_attempts``; returns the state."""
        attempts = entry.attempts + 1
        dead = permanent or attempts >= self.max_attempts
        delay = self.backoff[min(attempts - 1, len(self.backoff) - 1)]
        state = "dead" if dead else "pending"
        self._connect().execute(
            "UPDATE webhook_inbox SET state = ?, attempts = ?, due_at = ?, last_error = ?"
            " WHERE key = ? AND token = ?",
            (state, attempts, self._clock() + delay, error[:2000], entry.key, entry.token),
        )
        return state

    def next_due(self) -> Optional[float]:
        """When the earliest pending or leased row falls due (clock time), or ``None``."""
        row = self._connect().execute(
            "SELECT MIN(due_at) FROM webhook_inbox WHERE state IN ('pending', 'processing')"
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def counts(self) -> dict[str, int]:
        """Rows per state: ``pending``, ``processing``, ``done``, ``dead``."""
        counts = dict.fromkeys(("pending", "processing", "done", "dead"), 0)
        for state, count in self._connect().execute(
            "SELECT state, COUNT(*) FROM webhook_inbox GROUP BY state"
        ):
            counts[state] = count
        return counts

    def dead(self) -> list[InboxEntry]:
        """Events that failed ``max_attempts`` times: nothing is dropped silently."""
        keys = [row[0] for row in self._connect().execute(
            "SELECT key FROM webhook_inbox WHERE state = 'dead' ORDER BY received_at"
        )]
        return [entry for entry in (self.get(key) for key in keys) if entry is not None]

    def requeue(self, key: str) -> bool:
        """Give a dead event a fresh set of attempts, due now."""
        cursor = self._connect().execute(
            "UPDATE webhook_inbox SET state = 'pending', attempts = 0, due_at = ?"
            " WHERE key = ? AND state = 'dead'",
            (self._clock(), key),
        )
        return cursor.rowcount == 1

    def purge_dead(self) -> int:
        """Delete every dead event (once inspected, or fixed and requeued); how many."""
        return self._connect().execute("DELETE FROM webhook_inbox WHERE state = 'dead'").rowcount

    def close(self) -> None:
        """Close this thread's connection."""
        conn: Optional[sqlite3.Connection] = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
