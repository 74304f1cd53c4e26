"""Fleet fixtures: clean PostgreSQL tables per test, and a clock moved by hand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.webhooks.webhook_helpers import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    """Epoch seconds that move only when a test says so."""
    return FakeClock()


@pytest.fixture
def pg(postgres_url: str) -> Iterator[str]:
    """The session server with the stores' tables created and emptied."""
    import psycopg

    from sports_posts._stores.postgres import schema_sql

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(schema_sql())
        conn.execute("TRUNCATE sports_posts_inbox, sports_posts_claims, sports_posts_effects")
        conn.execute("DROP TABLE IF EXISTS story_effects")
    yield postgres_url
