"""The SQLite inbox: events committed to one file before they are acknowledged."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Callable, Optional, Union

from ... import _utils
from ..._errors import ParameterError
from ..._stores.sqlite import thread_connection, typed_errors
from .._store import DEFAULT_LEASE, DEFAULT_TTL, InboxPolicy
from ._entry import DEFAULT_BACKOFF, InboxEntry, InProgress, holder_of, lease_token

if TYPE_CHECKING:
    from os import PathLike

__all__ = ["SQLiteInbox"]

logger: logging.Logger = logging.getLogger("sports_posts.webhooks")


def _lenient_text(data: bytes) -> str:
    """A TEXT column as ``str``, even one another program wrote in bytes that are not UTF-8
    (each such byte a lone surrogate, as ``os.fsdecode`` does): a dead letter still lists."""
    return data.decode("utf-8", "surrogateescape")


class SQLiteInbox(InboxPolicy):
    """Events committed to a SQLite file (WAL, ``synchronous=FULL``) before they are acknowledged.

    Rows are keyed by the dedupe key, so the same story is stored once. Several processes
    may share one file: a worker takes a row with a lease, and a row whose worker died is
    taken again once its lease passes; a row leased ``max_attempts`` times without an
    outcome (a handler that kills its process, say) goes ``dead`` instead of looping.
    """

    @typed_errors
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
        self.path: str = os.fspath(path)
        if self.path == ":memory:":
            raise ParameterError("an inbox must be a file to survive a crash", parameter="path")
        self._set_policy(max_attempts, backoff, retention, lease)
        _utils.seconds("busy_timeout", busy_timeout)
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
        columns = {row[1] for row in conn.execute("PRAGMA table_info(webhook_inbox)")}
        if "deliveries" not in columns:  # a file made by an older version: leases were not counted
            try:
                conn.execute("ALTER TABLE webhook_inbox ADD COLUMN deliveries INTEGER NOT NULL DEFAULT 0")
            except sqlite3.OperationalError as exc:  # another process added it first
                if "duplicate column" not in str(exc).lower():
                    raise

    def __repr__(self) -> str:
        return f"SQLiteInbox({self.path!r}, max_attempts={self.max_attempts})"

    def _connect(self) -> sqlite3.Connection:
        # FULL: the 2xx promises the row is on disk.
        conn = thread_connection(self._local, self.path, self._busy_timeout, "FULL")
        if conn.text_factory is not _lenient_text:
            conn.text_factory = _lenient_text
        return conn

    @typed_errors
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

    @typed_errors
    def take_due(self, limit: int = 16) -> list[InboxEntry]:
        """Lease up to ``limit`` rows that are due, including rows of a worker that died."""
        now = self._clock()
        token = lease_token()
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
            # A row leased max_attempts times without an outcome is a crash loop: dead.
            conn.executemany(
                "UPDATE webhook_inbox SET"
                " state = CASE WHEN deliveries >= ? THEN 'dead' ELSE 'processing' END,"
                " last_error = CASE WHEN deliveries >= ?"
                "   THEN 'leased ' || deliveries || ' times without an outcome (workers died)'"
                "   ELSE last_error END,"
                " deliveries = deliveries + 1, token = ?, due_at = ? WHERE key = ?",
                [(self.max_attempts, self.max_attempts, token, now + self.lease, key) for key in keys],
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        entries = [entry for entry in (self.get(key) for key in keys) if entry is not None]
        for entry in entries:
            if entry.state == "dead":
                logger.error("inbox entry %s is dead: %s", entry.key, entry.last_error)
        return [entry for entry in entries if entry.state == "processing"]

    @typed_errors
    def get(self, key: str) -> Optional[InboxEntry]:
        """The stored row of ``key``, whatever its state."""
        row = self._connect().execute(
            "SELECT key, body, delivery_id, attempts, state, last_error, token"
            " FROM webhook_inbox WHERE key = ?",
            (key,),
        ).fetchone()
        return None if row is None else InboxEntry(row[0], bytes(row[1]), *row[2:])

    @typed_errors
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

    @typed_errors
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

    @typed_errors
    def next_due(self) -> Optional[float]:
        """When the earliest pending or leased row falls due (clock time), or ``None``."""
        row = self._connect().execute(
            "SELECT MIN(due_at) FROM webhook_inbox WHERE state IN ('pending', 'processing')"
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    @typed_errors
    def counts(self) -> dict[str, int]:
        """Rows per state: ``pending``, ``processing``, ``done``, ``dead``."""
        counts = dict.fromkeys(("pending", "processing", "done", "dead"), 0)
        for state, count in self._connect().execute(
            "SELECT state, COUNT(*) FROM webhook_inbox GROUP BY state"
        ):
            counts[state] = count
        return counts

    @typed_errors
    def dead(self) -> list[InboxEntry]:
        """Events that failed ``max_attempts`` times: nothing is dropped silently."""
        rows = self._connect().execute(
            "SELECT key, body, delivery_id, attempts, state, last_error, token"
            " FROM webhook_inbox WHERE state = 'dead' ORDER BY received_at"
        ).fetchall()
        return [InboxEntry(row[0], bytes(row[1]), *row[2:]) for row in rows]

    @property
    def queue(self) -> str:
        """The queue's name in metrics and logs: the same in every process that drains it."""
        return f"sqlite {os.path.abspath(self.path)}"

    @typed_errors
    def latency(self) -> float:
        """Seconds the oldest due entry has waited for a worker (0 when none waits)."""
        now = self._clock()
        row = self._connect().execute(
            "SELECT MIN(due_at) FROM webhook_inbox WHERE state = 'pending' AND due_at <= ?", (now,),
        ).fetchone()
        return max(0.0, now - float(row[0])) if row is not None and row[0] is not None else 0.0

    @typed_errors
    def in_progress(self, limit: int = 100) -> list[InProgress]:
        """The rows workers hold now, the lease ending soonest first (``sports-posts inbox active``)."""
        now = self._clock()
        rows = self._connect().execute(
            "SELECT key, token, attempts, deliveries, due_at FROM webhook_inbox"
            " WHERE state = 'processing' ORDER BY due_at LIMIT ?", (_utils.positive_int("limit", limit),),
        ).fetchall()
        return [InProgress(row[0], holder_of(row[1]), int(row[2]), int(row[3]), float(row[4]) - now) for row in rows]

    @typed_errors
    def requeue(self, key: str) -> bool:
        """Give a dead event a fresh set of attempts, due now."""
        cursor = self._connect().execute(
            "UPDATE webhook_inbox SET state = 'pending', attempts = 0, deliveries = 0, due_at = ?"
            " WHERE key = ? AND state = 'dead'",
            (self._clock(), key),
        )
        return cursor.rowcount == 1

    @typed_errors
    def purge_dead(self) -> int:
        """Delete every dead event (after inspecting them); returns how many were deleted."""
        return int(self._connect().execute("DELETE FROM webhook_inbox WHERE state = 'dead'").rowcount)

    def close(self) -> None:
        """Close this thread's connection."""
        conn: Optional[sqlite3.Connection] = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
