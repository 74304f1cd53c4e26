"""Run each core test against the sync and the async client over the same respx mock."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from typing import Any, Callable

import pytest
import respx

from sports_posts import AsyncPage, AsyncSportsPosts, SportsPosts, SyncPage

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


class Runner:
    """Calls the SDK the same way through ``SportsPosts`` or ``AsyncSportsPosts``."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def client(self, **kwargs: Any) -> Any:
        kwargs.setdefault("api_key", API_KEY)
        kwargs.setdefault("base_url", BASE_URL)
        return SportsPosts(**kwargs) if self.kind == "sync" else AsyncSportsPosts(**kwargs)

    def run(self, fn: Callable[[Any], Any], **client_kwargs: Any) -> Any:
        """``fn(client)``; awaited if it returns an awaitable; pages collected into lists."""
        if self.kind == "sync":
            with self.client(**client_kwargs) as c:
                result = fn(c)
                return list(result) if isinstance(result, SyncPage) else result

        async def main() -> Any:
            async with self.client(**client_kwargs) as c:
                result = fn(c)
                if isinstance(result, AsyncPage):
                    return [item async for item in result]
                if inspect.isawaitable(result):
                    result = await result
                return result

        return asyncio.run(main())


@pytest.fixture(params=["sync", "async"])
def runner(request: pytest.FixtureRequest) -> Runner:
    return Runner(request.param)


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        yield router
