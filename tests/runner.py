"""Call the SDK the same way through ``SportsPosts`` or ``AsyncSportsPosts``: one test, two clients."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Iterator
from typing import Any, Callable, Optional

from sports_posts import AsyncPage, AsyncSportsPosts, SportsPosts, SyncPage
from sports_posts.testing import RetryWaits
from tests.stacks import default_stack


class Runner:
    """``run(fn)`` calls ``fn(client)`` on a fresh client of the given kind (on the given HTTP
    stack) and returns the
    result, awaited when async; a page or an iterator comes back as the list of what it
    iterates, collected while the client is open.

    Its clients wait between retries on ``waits`` (recorded, never slept) unless a call
    passes its own ``sleep=``."""

    def __init__(
        self, kind: str, *, stack: str = "httpx", waits: Optional[RetryWaits] = None, **defaults: Any
    ) -> None:
        self.kind = kind
        self.stack = stack
        self.waits = waits if waits is not None else RetryWaits()
        self.defaults = defaults

    def client(self, **kwargs: Any) -> Any:
        sleep = self.waits.sleep if self.kind == "sync" else self.waits.async_sleep
        kwargs = {"sleep": sleep, **self.defaults, **kwargs}
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
