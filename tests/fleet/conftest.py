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


def _pgbouncer(postgres_url: str, pool_mode: str) -> Iterator[str]:
    from support.servers import ServerError, private_pgbouncer

    try:
        with private_pgbouncer(postgres_url, pool_mode) as url:
            yield url
    except ServerError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def pgbouncer_transaction_url(postgres_url: str) -> Iterator[str]:
    """A PgBouncer with its default settings, transaction pooling, before the session's server."""
    yield from _pgbouncer(postgres_url, "transaction")


@pytest.fixture(scope="session")
def pgbouncer_session_url(postgres_url: str) -> Iterator[str]:
    """A PgBouncer with its default settings, session pooling, before the session's server."""
    yield from _pgbouncer(postgres_url, "session")


@pytest.fixture(params=["direct", "pgbouncer-transaction", "pgbouncer-session"])
def deployment(request: pytest.FixtureRequest, pg: str) -> str:
    """The URL the stores are given: the server itself, or a PgBouncer before it (one each per run)."""
    if request.param == "direct":
        return pg
    return str(request.getfixturevalue(request.param.replace("-", "_") + "_url"))
