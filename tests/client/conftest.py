"""Run each core test against the sync and the async client over the same respx mock."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import respx

from tests.runner import Runner

BASE_URL = "https://api.test/v1"
API_KEY = "sk_live_SECRET_7f3a9c1e5b"


def post(id: str = "1", created_at: str = "2024-05-01T12:00:00Z", **extra: Any) -> dict[str, Any]:
    """A post in the flat shape of the machine-readable description."""
    return {
        "id": id,
        "post_url": f"https://x.example/p/{id}",
        "text": f"post {id}",
        "created_at": created_at,
        "author_username": "nflnews",
        "author_id": "42",
        "league": "NFL",
        "like_count": 10,
        "retweet_count": 2,
        "reply_count": 1,
        "quote_count": 0,
        "media_type": "video",
        "highlight": False,
        "teams": [],
        "players": [],
        "media": [],
        **extra,
    }


def page(items: list[dict[str, Any]], *, page: int = 1, has_next: bool = False, limit: int = 20) -> dict[str, Any]:
    return {
        "pagination": {"page": page, "limit": limit, "has_next": has_next, "has_prev": page > 1},
        "items": items,
    }


@pytest.fixture(params=["sync", "async"])
def runner(request: pytest.FixtureRequest) -> Runner:
    return Runner(request.param, api_key=API_KEY, base_url=BASE_URL)


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        yield router
