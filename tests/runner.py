"""Call the SDK the same way through ``SportsPosts`` or ``AsyncSportsPosts``: one test, two clients."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Iterator
from typing import Any, Callable

from sports_posts import AsyncPage, AsyncSportsPosts, SportsPosts, SyncPage
from tests.stacks import default_stack


class Runner:
    """``run(fn)`` calls ``fn(client)`` on a fresh client of the given kind (on the given HTTP
    stack) and returns the
    result, awaited when async; a page or an iterator comes back as the list of what it
    iterates, collected while the client is open."""

    def __init__(self, kind: str, *, stack: str = "httpx", **defaults: Any) -> None:
        self.kind = kind
        self.stack = stack
        self.defaults = defaults

    def client(self, **kwargs: Any) -> Any:
        kwargs = {**self.defaults, **kwargs}
        with default_stack(self.stack):
            return SportsPosts(**kwargs) if self.kind == "sync" else AsyncSportsPosts(**kwargs)

    def run(self, fn: Callable[[Any], Any], **client_kwargs: Any) -> Any:
        if self.kind == "sync":
            with self.client(**client_kwargs) as c:
                result = fn(c)
                return list(result) if isinstance(result, (SyncPage, Iterator)) else result

        async def main() -> Any:
            async with self.client(**client_kwargs) as c:
                result = fn(c)
                if isinstance(result, (AsyncPage, AsyncIterator)):
                    return [item async for item in result]
                if inspect.isawaitable(result):
                    result = await result
                return result

        return asyncio.run(main())
