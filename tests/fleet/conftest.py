"""Fleet fixtures: clean PostgreSQL tables and a Redis database per test, and a manual clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


class ManualClock:
    """Epoch seconds that move only when a test says so."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def pg(postgres_url: str) -> Iterator[str]:
    """The session server with the stores' tables created and emptied."""
    import psycopg

    from sports_posts.webhooks._pg import schema_sql

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(schema_sql())
        conn.execute("TRUNCATE sports_posts_inbox, sports_posts_claims, sports_posts_effects")
        conn.execute("DROP TABLE IF EXISTS story_effects")
    yield postgres_url
