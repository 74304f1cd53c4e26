"""Run each core test against the sync and the async client over the same respx mock."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import respx

from sports_posts.testing import RetryWaits
from tests.runner import Runner
from tests.wire import spec_page, spec_post

BASE_URL = "https://api.test/v1"
API_KEY = "sk_live_SECRET_7f3a9c1e5b"


def post(id: str = "1", created_at: str = "2024-05-01T12:00:00Z", **extra: Any) -> dict[str, Any]:
    """A spec-complete post in the flat shape of the machine-readable description."""
    return spec_post(id, created_at, **extra)


def page(items: list[dict[str, Any]], *, page: int = 1, has_next: bool = False, limit: int = 20) -> dict[str, Any]:
    return spec_page(items, page=page, has_next=has_next, limit=limit)


@pytest.fixture(params=["sync", "async"])
def runner(request: pytest.FixtureRequest, retry_waits: RetryWaits) -> Runner:
    return Runner(request.param, waits=retry_waits, api_key=API_KEY, base_url=BASE_URL)


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        yield router
