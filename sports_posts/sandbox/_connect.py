"""A client for the real service when the environment names one, else for an embedded sandbox.

What the examples, the CLI and a new user's first script want: the same code runs against
production (``SPORTS_POSTS_API_KEY`` and ``SPORTS_POSTS_BASE_URL`` set) and, with no
account and no network, against a local sandbox started for the duration.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any, Optional, TextIO

from .._client import AsyncSportsPosts, SportsPosts

__all__ = ["aconnect", "connect"]


def _from_environment() -> Optional[tuple[str, str]]:
    key = os.environ.get("SPORTS_POSTS_API_KEY")
    url = os.environ.get("SPORTS_POSTS_BASE_URL")
    return (key, url) if key and url else None


@contextlib.contextmanager
def _target(log: Optional[TextIO], sandbox_options: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(api_key, base_url) of the real service or of a sandbox running inside the block."""
    env = _from_environment()
    if env is not None:
        if log is not None:
            print(f"sports-posts: using the service at {env[1]} (SPORTS_POSTS_BASE_URL)", file=log)
        yield env
        return
    from .server import Sandbox

    with Sandbox(**sandbox_options) as sb:
        if log is not None:
            print(
                "sports-posts: SPORTS_POSTS_API_KEY / SPORTS_POSTS_BASE_URL not set: "
                f"using an embedded sandbox at {sb.base_url}",
                file=log,
            )
        yield sb.api_key, sb.base_url


@contextlib.contextmanager
def connect(*, log: Optional[TextIO] = sys.stderr, **sandbox_options: Any) -> Iterator[SportsPosts]:
    """``with connect() as client:`` a [`SportsPosts`][sports_posts.SportsPosts] of the service or of a sandbox.

    ``sandbox_options`` go to [`Sandbox`][sports_posts.sandbox.Sandbox] when one is started (``seed=``,
    ``posts_per_minute=``, ...); ``log`` receives one line saying which it is.
    """
    with _target(log, sandbox_options) as (key, url), SportsPosts(api_key=key, base_url=url) as client:
        yield client


@contextlib.asynccontextmanager
async def aconnect(*, log: Optional[TextIO] = sys.stderr, **sandbox_options: Any) -> AsyncIterator[AsyncSportsPosts]:
    """``async with aconnect() as client:`` the async twin of [`connect`][sports_posts.sandbox.connect]."""
    with _target(log, sandbox_options) as (key, url):
        async with AsyncSportsPosts(api_key=key, base_url=url) as client:
            yield client
