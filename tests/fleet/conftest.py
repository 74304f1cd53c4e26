"""Fleet fixtures: clean PostgreSQL tables per test, a clock moved by hand, a fresh key per
test, and the budget/lease store on each engine."""

from __future__ import annotations

import uuid
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


@pytest.fixture
def key() -> str:
    """A key no other test uses (the session's Redis and PostgreSQL are shared)."""
    return f"test:{uuid.uuid4().hex}"


@pytest.fixture(params=["redis", "postgres"])
def store_url(request: pytest.FixtureRequest) -> str:
    """The session's Redis or PostgreSQL, by URL: every fleet object runs on both."""
    name = "redis_url" if request.param == "redis" else "postgres_url"
    return str(request.getfixturevalue(name))
