"""``PostgresCheckpoint``: a poller's state in a PostgreSQL row, fenced like ``RedisCheckpoint``."""

from __future__ import annotations

from typing import Any, Optional

from .._stores import CoordinationError
from .._stores.postgres import Postgres
from ._lease import LeaseLostError, fenced_out
from ._state import CheckpointError, PollState
from .checkpoints import CheckpointConflictError

__all__ = ["PostgresCheckpoint"]

_LOAD = "SELECT state, generation FROM sports_posts_checkpoints WHERE key = %(key)s"
# A compare-and-set on the generation the saver loaded, refused as well when the row has
# seen a newer fencing token: one statement, so no other save can slip in between.
_SAVE = """
INSERT INTO sports_posts_checkpoints AS c (key, state, generation, fence)
VALUES (%(key)s, %(state)s, %(next)s, %(fence)s)
ON CONFLICT (key) DO UPDATE SET state = EXCLUDED.state, generation = EXCLUDED.generation
WHERE c.generation = %(generation)s AND c.fence <= EXCLUDED.fence
RETURNING generation
"""
_FENCE = """
INSERT INTO sports_posts_checkpoints AS c (key, fence) VALUES (%(key)s, %(fence)s)
ON CONFLICT (key) DO UPDATE SET fence = EXCLUDED.fence WHERE c.fence <= EXCLUDED.fence
RETURNING fence
"""
_STORED_FENCE = "SELECT fence FROM sports_posts_checkpoints WHERE key = %(key)s"


class PostgresCheckpoint:
    """A checkpoint in the table ``sports_posts_checkpoints`` (created on first use), for
    fleets of workers (extra ``postgres``).

    Like ``sports_posts.RedisCheckpoint``: ``save`` is a compare-and-set on a
    generation (``CheckpointConflictError`` when another worker saved since this one
    loaded), and after ``fence`` every save carries the lease's fencing token, refused
    with ``LeaseLostError`` once a newer token has been seen. ``url_or_connection`` is
    a ``postgresql://`` URL or a ``psycopg.Connection`` (not closed by this class);
    a call ends within ``connect_timeout + statement_timeout`` seconds (4 s by default, as a
    ``Lease``'s, under its ``ttl / 3``).
    """

    def __init__(
        self,
        url_or_connection: Any,
        *,
        key: str = "sports_posts:poll",
        connect_timeout: float = 2.0,
        statement_timeout: float = 2.0,
    ) -> None:
        if not isinstance(key, str) or not key:
            raise CheckpointError("PostgresCheckpoint: key must be a non-empty string")
        self.key = key
        self._runner = Postgres(
            f"PostgresCheckpoint {key!r}", url_or_connection, error=CoordinationError,
            parameter="url_or_connection", connect_timeout=connect_timeout,
            statement_timeout=statement_timeout,
        )
        self._generation = 0
        self._fence = 0

    def __repr__(self) -> str:
        return f"PostgresCheckpoint({self._runner!r}, key={self.key!r})"

    def load(self) -> Optional[PollState]:
        row = self._runner.execute(_LOAD, (), {"key": self.key})
        state, self._generation = (None, 0) if row is None else (row[0], int(row[1]))
        if state is None:
            return None
        try:
            return PollState.from_json(state)
        except CheckpointError as exc:
            raise CheckpointError(f"checkpoint row {self.key!r}: {exc}; delete the row to start over") from None

    def save(self, state: PollState) -> None:
        nxt = self._generation + 1
        params = {"key": self.key, "state": state.to_json(), "next": nxt,
                  "generation": self._generation, "fence": self._fence}
        if self._runner.execute(_SAVE, (), params) is None:
            stored = self._runner.execute(_STORED_FENCE, (), {"key": self.key})
            if stored is not None and int(stored[0]) > self._fence:
                raise LeaseLostError(f"checkpoint row {self.key!r}: {fenced_out(self._fence)}")
            raise CheckpointConflictError(
                f"checkpoint row {self.key!r} was saved by another worker; two pollers share one checkpoint"
            )
        self._generation = nxt

    def fence(self, token: int) -> None:
        """Carry ``token`` on every later save, and make the row refuse older ones from now
        on (``LeaseLostError`` if it has already seen a newer one)."""
        if self._runner.execute(_FENCE, (), {"key": self.key, "fence": token}) is None:
            raise LeaseLostError(f"checkpoint row {self.key!r}: {fenced_out(token)}")
        self._fence = token

    def close(self) -> None:
        """Close the connection made from a URL."""
        self._runner.close()
