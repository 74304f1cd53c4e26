"""Hostile-server tests: each client kind against a raw loopback socket server, and hostile
answers of a mocked service tried on the sync and the async client (the `api` and `runner`
fixtures of tests/client/conftest.py)."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest

import sports_posts as sp
from sports_posts.testing import RetryWaits

API_KEY = "sk_live_HOSTILE_4d1e8b0c2a"


def call(kind: str, base_url: str, fn: Callable[[Any], Any], **options: Any) -> Any:
    """``fn(client)`` on a fresh sync or async client of ``base_url`` (awaited if async); its
    waits between retries are recorded, never slept."""
    options.setdefault("max_retries", 0)
    waits = RetryWaits()
    options.setdefault("sleep", waits.sleep if kind == "sync" else waits.async_sleep)
    if kind == "sync":
        with sp.SportsPosts(api_key=API_KEY, base_url=base_url, **options) as client:
            return fn(client)

    async def main() -> Any:
        async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=base_url, **options) as client:
            return await fn(client)

    return asyncio.run(main())


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)
