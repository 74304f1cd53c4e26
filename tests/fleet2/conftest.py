"""Fleet fixtures: a fresh key per test, and the budget/lease store on each engine."""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture
def key() -> str:
    """A key no other test uses (the session's Redis and PostgreSQL are shared)."""
    return f"test:{uuid.uuid4().hex}"


@pytest.fixture(params=["redis", "postgres"])
def store_url(request: pytest.FixtureRequest) -> str:
    """The session's Redis or PostgreSQL, by URL: every fleet object runs on both."""
    name = "redis_url" if request.param == "redis" else "postgres_url"
    return str(request.getfixturevalue(name))
