"""The PostgreSQL dedupe store (extra ``postgres``), with an exactly-once form.

Coordination is PostgreSQL's own: a primary key and ``INSERT ... ON CONFLICT`` for claims.
Every method has an ``a``-prefixed async twin running the same statements on psycopg's
``AsyncConnection``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Optional

from ..._stores.given import check_in_transaction
from ..._stores.postgres import NOW, PostgresTarget, Result, Statement
from ..._stores.quoted import Quoted, Template
from .._store import (
    DEFAULT_LEASE,
    DEFAULT_TTL,
    ClaimStatus,
    ClaimTokens,
    PostgresClock,
    PostgresStore,
    check_key,
    check_ttl_and_lease,
)

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresDedupeStore"]

logger: logging.Logger = logging.getLogger("sports_posts.webhooks")

# One upsert: a new claim, or a takeover of one whose lease or ttl has passed. The primary key
# makes concurrent claims of one key wait for each other: one wins.
_CLAIM = Template(
    "INSERT INTO sports_posts_claims (key, token, expires_at)"
    f" VALUES (%(key)s, %(token)s, {NOW} + %(lease)s)"
    " ON CONFLICT (key) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at"
    f" WHERE sports_posts_claims.expires_at <= {NOW}"
)


class PostgresDedupeStore(PostgresStore):
    """Dedupe claims in a PostgreSQL table, shared by every host of a fleet.

    ``claim``/``complete``/``release``/``is_complete`` are the ``DedupeStore`` protocol
    (at-least-once plus dedupe, like the SQLite and Redis stores). ``claim_in`` is the
    stronger form: the claim is a row written inside *your* transaction, so your writes and
    the "done" mark commit or roll back together (an exactly-once effect).

    ``url_or_connection`` is a ``postgresql://`` URL or a ``psycopg`` (Async)Connection in
    autocommit mode; ``clock=None`` reads the server's clock, one clock for all machines.
    """

    def __init__(
        self,
        url_or_connection: PostgresTarget,
        *,
        ttl: float = DEFAULT_TTL,
        lease: float = DEFAULT_LEASE,
        clock: PostgresClock = None,
        connect_timeout: float = 10.0,
        statement_timeout: float = 30.0,
        auto_migrate: bool = True,
        pool_size: Optional[int] = None,
    ) -> None:
        self.ttl: float
        self.lease: float
        self.ttl, self.lease = check_ttl_and_lease(ttl, lease)
        super().__init__(url_or_connection, clock=clock, connect_timeout=connect_timeout,
                         statement_timeout=statement_timeout, auto_migrate=auto_migrate,
                         pool_size=pool_size)
        self._tokens: dict[str, str] = {}
        self._new_token = ClaimTokens()
        self._tokens_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"PostgresDedupeStore({self._db!r}, ttl={self.ttl:g}, lease={self.lease:g})"

    # -- statements and their meaning (shared by sync and async) ------------------------

    def _claim_sql(self, key: str, token: str) -> Sequence[Statement]:
        values = {"key": check_key(key), "token": token, "lease": self.lease, "now": self._now()}
        if not self._sweep_due():
            # Quoted: one statement whose rowcount alone counts, its values quoted by libpq
            return Quoted(_CLAIM, values)
        return [(_CLAIM.sql, values),
                (f"DELETE FROM sports_posts_claims WHERE expires_at <= {NOW}", {"now": self._now()})]

    def _claimed(self, key: str, token: str, results: list[Result]) -> bool:
        claimed = results[0][0] == 1
        if claimed:
            with self._tokens_lock:
                self._tokens[key] = token
        return claimed

    def _complete_sql(self, key: str) -> tuple[str, list[Statement]]:
        with self._tokens_lock:
            token = self._tokens.pop(key, "")
        # Done wins over any claim; the old token (read in the same statement) tells whether
        # this worker's lease lapsed meanwhile.
        return token, [(
            "WITH prior AS (SELECT token FROM sports_posts_claims WHERE key = %(key)s)"
            f" INSERT INTO sports_posts_claims (key, token, expires_at) VALUES (%(key)s, '', {NOW} + %(ttl)s)"
            " ON CONFLICT (key) DO UPDATE SET token = '', expires_at = excluded.expires_at"
            " RETURNING (SELECT token FROM prior)",
            {"key": key, "ttl": self.ttl, "now": self._now()},
        )]

    @staticmethod
    def _completed(key: str, token: str, results: list[Result]) -> None:
        prior = results[0][1][0][0] if results[0][1] else None
        if token and prior != token:
            logger.warning("completed %s after its lease lapsed; another worker may process it too", key)

    def _release_sql(self, key: str) -> list[Statement]:
        with self._tokens_lock:
            token = self._tokens.pop(key, "")
        return [(
            "DELETE FROM sports_posts_claims WHERE key = %(key)s AND token != ''"
            " AND (%(token)s = '' OR token = %(token)s)",
            {"key": key, "token": token},
        )]

    def _is_complete_sql(self, key: str) -> list[Statement]:
        return [(
            f"SELECT 1 FROM sports_posts_claims WHERE key = %(key)s AND token = '' AND expires_at > {NOW}",
            {"key": key, "now": self._now()},
        )]

    def _claim_in_sql(self, key: str) -> list[Statement]:
        # Inside the caller's transaction: the primary key makes a second transaction with the
        # same key wait for the first, then see its committed row (False) or, if it rolled
        # back, insert its own (True). A row older than the ttl is taken over.
        return [(
            f"INSERT INTO sports_posts_effects (key, done_at) VALUES (%(key)s, {NOW})"
            " ON CONFLICT (key) DO UPDATE SET done_at = excluded.done_at"
            f" WHERE sports_posts_effects.done_at <= {NOW} - %(ttl)s RETURNING 1",
            {"key": check_key(key), "ttl": self.ttl, "now": self._now()},
        )]

    def _claim_in_statements(self, key: str) -> list[Statement]:
        # Now and then the expired rows go too, in the same transaction: claim_in runs on the
        # caller's connection only (behind a pooler, a second one may be all there is).
        statements = self._claim_in_sql(key)
        if self._sweep_due():
            statements.insert(0, (f"DELETE FROM sports_posts_effects WHERE done_at <= {NOW} - %(ttl)s",
                                  {"ttl": self.ttl, "now": self._now()}))
        return statements

    # -- sync ----------------------------------------------------------------------------

    def claim(self, key: str) -> bool:
        """Claim ``key`` for ``lease`` seconds; true only for the first claimant (or after a lapse)."""
        token = self._new_token()
        return self._claimed(key, token, self._db.run(self._claim_sql(key, token)))

    def complete(self, key: str) -> None:
        """Mark ``key`` done for ``ttl`` seconds."""
        token, statements = self._complete_sql(key)
        self._completed(key, token, self._db.run(statements))

    def release(self, key: str) -> None:
        """Free this worker's claim so that the next retry is processed."""
        self._db.run(self._release_sql(key))

    def is_complete(self, key: str) -> bool:
        """Whether ``key`` is done."""
        return bool(self._db.run(self._is_complete_sql(key))[0][1])

    def claim_status(self, key: str) -> ClaimStatus:
        """The story's claim as it stands (``sports-posts claim status``), a ``claim_in``
        effect included; reads, changes nothing."""
        results = self._db.run([
            (f"SELECT token, expires_at - {NOW} FROM sports_posts_claims WHERE key = %(key)s AND expires_at > {NOW}",
             {"key": key, "now": self._now()}),
            (f"SELECT done_at + %(ttl)s - {NOW} FROM sports_posts_effects WHERE key = %(key)s"
             f" AND done_at > {NOW} - %(ttl)s", {"key": key, "ttl": self.ttl, "now": self._now()}),
        ])
        claims, effects = results[0][1], results[1][1]
        if claims:
            token, left = claims[0]
            return ClaimStatus(key, "claimed" if token else "done", float(left))
        if effects:
            return ClaimStatus(key, "done", float(effects[0][0]))
        return ClaimStatus(key, "none")

    def claim_in(self, connection: psycopg.Connection[Any], key: str) -> bool:
        """Claim ``key`` inside your open transaction on ``connection``: true the first time.

        Do your writes after a true answer, in the same transaction. If it commits, ``key``
        is done with them; if it rolls back or the process dies first, neither happened and
        the next attempt claims again. False: a committed transaction already did the work.
        """
        check_in_transaction(type(self).__name__, connection)
        return bool(self._db.run(self._claim_in_statements(key), connection=connection)[-1][1])

    # -- async ---------------------------------------------------------------------------

    async def aclaim(self, key: str) -> bool:
        """``claim`` on an async connection."""
        token = self._new_token()
        return self._claimed(key, token, await self._db.arun(self._claim_sql(key, token)))

    async def acomplete(self, key: str) -> None:
        """``complete`` on an async connection."""
        token, statements = self._complete_sql(key)
        self._completed(key, token, await self._db.arun(statements))

    async def arelease(self, key: str) -> None:
        """``release`` on an async connection."""
        await self._db.arun(self._release_sql(key))

    async def ais_complete(self, key: str) -> bool:
        """``is_complete`` on an async connection."""
        return bool((await self._db.arun(self._is_complete_sql(key)))[0][1])

    async def aclaim_in(self, connection: psycopg.AsyncConnection[Any], key: str) -> bool:
        """``claim_in`` inside your transaction on a ``psycopg.AsyncConnection``."""
        check_in_transaction(type(self).__name__, connection)
        return bool((await self._db.arun(self._claim_in_statements(key), connection=connection))[-1][1])
