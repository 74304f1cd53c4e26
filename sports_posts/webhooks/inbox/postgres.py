"""The PostgreSQL inbox (extra ``postgres``), drained by workers on many machines at once.

Coordination is PostgreSQL's own: ``SELECT ... FOR UPDATE SKIP LOCKED`` for the queue (as
River, Oban, good_job and Que do). Every method has an ``a``-prefixed async twin running the
same statements on psycopg's ``AsyncConnection``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Optional

from ... import _utils
from ..._errors import ParameterError
from ..._stores.postgres import NOW, PostgresTarget, Result, Statement
from ..._stores.quoted import Quoted, Template
from .. import _store
from .._store import DEFAULT_LEASE, DEFAULT_TTL, InboxPolicy, PostgresStore, check_body, check_key
from ._entry import DEFAULT_BACKOFF, InboxEntry, InProgress, holder_of, lease_token

__all__ = ["PostgresInbox"]

logger: logging.Logger = logging.getLogger("sports_posts.webhooks")

_ENTRY_COLUMNS = "key, body, delivery_id, attempts, state, last_error, token"

_PUT = Template(
    "INSERT INTO sports_posts_inbox (key, body, delivery_id, state, due_at, received_at)"
    f" VALUES (%(key)s, %(body)s, %(delivery)s, 'pending', {NOW}, {NOW})"
    " ON CONFLICT (key) DO NOTHING"
)


_DONE = Template(
    "UPDATE sports_posts_inbox SET state = 'done', attempts = attempts + 1, body = '',"
    f" due_at = {NOW} + %(retention)s, last_error = NULL"
    " WHERE key = %(key)s AND token = %(token)s AND state = 'processing'"
)


def _entries(rows: Sequence[tuple[Any, ...]]) -> list[InboxEntry]:
    return [InboxEntry(row[0], bytes(row[1]), *row[2:]) for row in rows]


class PostgresInbox(PostgresStore, InboxPolicy):
    """A durable inbox in a PostgreSQL table, drained by workers on many machines at once.

    Same interface and states as ``SQLiteInbox``. Workers lease rows with
    ``SELECT ... FOR UPDATE SKIP LOCKED`` (no two take the same row, none waits for
    another); a row whose worker died is taken again when its ``lease`` ends, and a row
    leased ``max_attempts`` times without an outcome (a handler that kills its process,
    say) goes ``dead`` instead of looping forever.
    """

    def __init__(self, url_or_connection: PostgresTarget, *, max_attempts: int = 10,
                 backoff: Sequence[float] = DEFAULT_BACKOFF, lease: float = DEFAULT_LEASE,
                 retention: float = DEFAULT_TTL, clock: _store.PostgresClock = None,
                 connect_timeout: float = 10.0, statement_timeout: float = 30.0, auto_migrate: bool = True,
                 pool_size: Optional[int] = None) -> None:
        self._set_policy(max_attempts, backoff, retention, lease)
        super().__init__(url_or_connection, clock=clock, connect_timeout=connect_timeout,
                         statement_timeout=statement_timeout, auto_migrate=auto_migrate,
                         pool_size=pool_size)

    def __repr__(self) -> str:
        return f"PostgresInbox({self._db!r}, max_attempts={self.max_attempts})"

    # -- statements and their meaning (shared by sync and async) ------------------------

    def _put_sql(self, key: str, body: bytes, delivery_id: Optional[str]) -> Quoted:
        # Quoted: one statement whose rowcount alone counts, its values quoted by libpq
        return Quoted(_PUT, {"key": check_key(key), "body": check_body(body), "delivery": delivery_id,
                             "now": self._now()})

    def _take_sql(self, limit: int) -> list[Statement]:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ParameterError("limit must be a positive integer", parameter="limit")
        # SKIP LOCKED: rows another worker is leasing right now are skipped, not waited for.
        # A row leased max_attempts times without an outcome is a crash loop: dead.
        return [(
            "WITH due AS (SELECT key FROM sports_posts_inbox"
            f" WHERE state IN ('pending', 'processing') AND due_at <= {NOW}"
            " ORDER BY due_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED)"
            " UPDATE sports_posts_inbox AS i SET"
            " state = CASE WHEN i.deliveries >= %(max)s THEN 'dead' ELSE 'processing' END,"
            " last_error = CASE WHEN i.deliveries >= %(max)s"
            "   THEN 'leased ' || i.deliveries || ' times without an outcome (workers died)'"
            "   ELSE i.last_error END,"
            f" deliveries = i.deliveries + 1, token = %(token)s, due_at = {NOW} + %(lease)s"
            f" FROM due WHERE i.key = due.key RETURNING i.key, i.body, i.delivery_id, i.attempts,"
            " i.state, i.last_error, i.token",
            {"limit": limit, "max": self.max_attempts, "token": lease_token(),
             "lease": self.lease, "now": self._now()},
        )]

    @staticmethod
    def _taken(results: list[Result]) -> list[InboxEntry]:
        entries = _entries(results[0][1])
        for entry in entries:
            if entry.state == "dead":
                logger.error("inbox entry %s is dead: %s", entry.key, entry.last_error)
        return [entry for entry in entries if entry.state == "processing"]

    def _get_sql(self, key: str) -> list[Statement]:
        return [(f"SELECT {_ENTRY_COLUMNS} FROM sports_posts_inbox WHERE key = %(key)s", {"key": key})]

    def _done_sql(self, entry: InboxEntry) -> Sequence[Statement]:
        values = {"retention": self.retention, "key": entry.key, "token": entry.token, "now": self._now()}
        if not self._sweep_due():
            return Quoted(_DONE, values)  # one statement whose rowcount alone counts
        return [(_DONE.sql, values),
                (f"DELETE FROM sports_posts_inbox WHERE state = 'done' AND due_at <= {NOW}", {"now": self._now()})]

    def _done_many_sql(self, entries: Sequence[InboxEntry]) -> list[Statement]:
        # One statement for the batch, the lease checked per entry: a row counts as done
        # only with the token of its current lease and while it is still processing.
        statements: list[Statement] = [(
            "UPDATE sports_posts_inbox AS i SET state = 'done', attempts = i.attempts + 1, body = '',"
            f" due_at = {NOW} + %(retention)s, last_error = NULL"
            " FROM unnest(%(keys)s::text[], %(tokens)s::text[]) AS d(key, token)"
            " WHERE i.key = d.key AND i.token = d.token AND i.state = 'processing'"
            " RETURNING i.key",
            {"retention": self.retention, "keys": [entry.key for entry in entries],
             "tokens": [entry.token for entry in entries], "now": self._now()},
        )]
        if self._sweep_due():
            statements.append((f"DELETE FROM sports_posts_inbox WHERE state = 'done' AND due_at <= {NOW}",
                               {"now": self._now()}))
        return statements

    @staticmethod
    def _fenced(entry: InboxEntry, results: list[Result]) -> None:
        if results[0][0] == 0:
            logger.warning("inbox entry %s finished after its lease lapsed; its new lease holder decides", entry.key)

    @staticmethod
    def _fenced_many(entries: Sequence[InboxEntry], results: list[Result]) -> int:
        recorded = {row[0] for row in results[0][1]}
        for entry in entries:
            if entry.key not in recorded:
                logger.warning("inbox entry %s finished after its lease lapsed; its new lease holder decides",
                               entry.key)
        return len(recorded)

    def _failed_sql(self, entry: InboxEntry, error: str, permanent: bool) -> tuple[str, list[Statement]]:
        attempts = entry.attempts + 1
        state = "dead" if permanent or attempts >= self.max_attempts else "pending"
        delay = self.backoff[min(attempts - 1, len(self.backoff) - 1)]
        return state, [(
            "UPDATE sports_posts_inbox SET state = %(state)s, attempts = %(attempts)s,"
            f" due_at = {NOW} + %(delay)s, last_error = %(error)s"
            " WHERE key = %(key)s AND token = %(token)s AND state = 'processing'",
            {"state": state, "attempts": attempts, "delay": delay, "error": error[:2000],
             "key": entry.key, "token": entry.token, "now": self._now()},
        )]

    _NEXT_DUE_SQL: Statement = (
        "SELECT MIN(due_at) FROM sports_posts_inbox WHERE state IN ('pending', 'processing')", {}
    )
    _COUNTS_SQL: Statement = ("SELECT state, COUNT(*) FROM sports_posts_inbox GROUP BY state", {})
    _DEAD_SQL: Statement = (
        f"SELECT {_ENTRY_COLUMNS} FROM sports_posts_inbox WHERE state = 'dead' ORDER BY received_at", {}
    )

    @staticmethod
    def _next(results: list[Result]) -> Optional[float]:
        rows = results[0][1]
        return None if not rows or rows[0][0] is None else float(rows[0][0])

    @staticmethod
    def _counted(results: list[Result]) -> dict[str, int]:
        counts = dict.fromkeys(("pending", "processing", "done", "dead"), 0)
        counts.update({state: int(count) for state, count in results[0][1]})
        return counts

    def _requeue_sql(self, key: str) -> list[Statement]:
        return [(
            f"UPDATE sports_posts_inbox SET state = 'pending', attempts = 0, deliveries = 0, due_at = {NOW}"
            " WHERE key = %(key)s AND state = 'dead'",
            {"key": key, "now": self._now()},
        )]

    _PURGE_SQL: Statement = ("DELETE FROM sports_posts_inbox WHERE state = 'dead'", {})

    # -- sync ----------------------------------------------------------------------------

    def put(self, key: str, body: bytes, delivery_id: Optional[str] = None) -> bool:
        """Commit an event; false when ``key`` is already stored (a retry of a stored story)."""
        return self._db.run(self._put_sql(key, body, delivery_id))[0][0] == 1

    def take_due(self, limit: int = 16) -> list[InboxEntry]:
        """Lease up to ``limit`` due rows, including rows of a worker that died."""
        return self._taken(self._db.run(self._take_sql(limit)))

    def get(self, key: str) -> Optional[InboxEntry]:
        """The stored row of ``key``, whatever its state."""
        entries = _entries(self._db.run(self._get_sql(key))[0][1])
        return entries[0] if entries else None

    def mark_done(self, entry: InboxEntry) -> None:
        """The handler succeeded: keep the row as ``done`` (body dropped) until ``retention`` passes."""
        self._fenced(entry, self._db.run(self._done_sql(entry)))

    def mark_done_many(self, entries: Sequence[InboxEntry]) -> int:
        """``mark_done`` for a batch in one statement, each entry's lease checked on its own:
        an entry whose lease lapsed (taken again since) is left to its new holder. Returns how
        many were recorded."""
        entries = list(entries)
        if not entries:
            return 0
        return self._fenced_many(entries, self._db.run(self._done_many_sql(entries)))

    def mark_failed(self, entry: InboxEntry, error: str, *, permanent: bool = False) -> str:
        """The handler raised: retry after the backoff, or ``dead``; returns the state."""
        state, statements = self._failed_sql(entry, error, permanent)
        self._fenced(entry, self._db.run(statements))
        return state

    def next_due(self) -> Optional[float]:
        """When the earliest pending or leased row falls due (epoch seconds), or ``None``."""
        return self._next(self._db.run([self._NEXT_DUE_SQL]))

    def counts(self) -> dict[str, int]:
        """Rows per state: ``pending``, ``processing``, ``done``, ``dead``."""
        return self._counted(self._db.run([self._COUNTS_SQL]))

    def dead(self) -> list[InboxEntry]:
        """Rows that failed ``max_attempts`` times, oldest first: nothing is dropped silently."""
        return _entries(self._db.run([self._DEAD_SQL])[0][1])

    @property
    def queue(self) -> str:
        """The queue's name in metrics and logs: the same in every process that drains it."""
        return f"postgres {self._db.where()} sports_posts_inbox"

    def latency(self) -> float:
        """Seconds the oldest due entry has waited for a worker (0 when none waits): the
        queue's latency, as Sidekiq names it."""
        rows = self._db.run([(
            f"SELECT GREATEST(0, {NOW} - MIN(due_at)) FROM sports_posts_inbox"
            f" WHERE state = 'pending' AND due_at <= {NOW}", {"now": self._now()},
        )])[0][1]
        return float(rows[0][0]) if rows and rows[0][0] is not None else 0.0

    def in_progress(self, limit: int = 100) -> list[InProgress]:
        """The rows workers hold now, the lease ending soonest first (``sports-posts inbox active``)."""
        rows = self._db.run([(
            f"SELECT key, token, attempts, deliveries, due_at - {NOW} FROM sports_posts_inbox"
            " WHERE state = 'processing' ORDER BY due_at LIMIT %(limit)s",
            {"limit": _utils.positive_int("limit", limit), "now": self._now()},
        )])[0][1]
        return [InProgress(row[0], holder_of(row[1]), int(row[2]), int(row[3]), float(row[4])) for row in rows]

    def requeue(self, key: str) -> bool:
        """Give a dead row a fresh set of attempts, due now."""
        return self._db.run(self._requeue_sql(key))[0][0] == 1

    def purge_dead(self) -> int:
        """Delete every dead row (after inspecting them); returns how many were deleted."""
        return int(self._db.run([self._PURGE_SQL])[0][0])

    # -- async ---------------------------------------------------------------------------

    async def aput(self, key: str, body: bytes, delivery_id: Optional[str] = None) -> bool:
        """``put`` on an async connection."""
        return (await self._db.arun(self._put_sql(key, body, delivery_id)))[0][0] == 1

    async def atake_due(self, limit: int = 16) -> list[InboxEntry]:
        """``take_due`` on an async connection."""
        return self._taken(await self._db.arun(self._take_sql(limit)))

    async def aget(self, key: str) -> Optional[InboxEntry]:
        """``get`` on an async connection."""
        entries = _entries((await self._db.arun(self._get_sql(key)))[0][1])
        return entries[0] if entries else None

    async def amark_done(self, entry: InboxEntry) -> None:
        """``mark_done`` on an async connection."""
        self._fenced(entry, await self._db.arun(self._done_sql(entry)))

    async def amark_done_many(self, entries: Sequence[InboxEntry]) -> int:
        """``mark_done_many`` on an async connection."""
        entries = list(entries)
        if not entries:
            return 0
        return self._fenced_many(entries, await self._db.arun(self._done_many_sql(entries)))

    async def amark_failed(self, entry: InboxEntry, error: str, *, permanent: bool = False) -> str:
        """``mark_failed`` on an async connection."""
        state, statements = self._failed_sql(entry, error, permanent)
        self._fenced(entry, await self._db.arun(statements))
        return state

    async def anext_due(self) -> Optional[float]:
        """``next_due`` on an async connection."""
        return self._next(await self._db.arun([self._NEXT_DUE_SQL]))

    async def acounts(self) -> dict[str, int]:
        """``counts`` on an async connection."""
        return self._counted(await self._db.arun([self._COUNTS_SQL]))

    async def adead(self) -> list[InboxEntry]:
        """``dead`` on an async connection."""
        return _entries((await self._db.arun([self._DEAD_SQL]))[0][1])

    async def arequeue(self, key: str) -> bool:
        """``requeue`` on an async connection."""
        return (await self._db.arun(self._requeue_sql(key)))[0][0] == 1

    async def apurge_dead(self) -> int:
        """``purge_dead`` on an async connection."""
        return int((await self._db.arun([self._PURGE_SQL]))[0][0])
