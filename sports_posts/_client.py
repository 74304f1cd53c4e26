"""``SportsPosts`` and ``AsyncSportsPosts``: configuration plus two thin I/O shells.

Request building, parsing, error mapping and the retry decision live in
``_transport.call_flow``; each shell only drives that flow: it sends the requests the
flow yields and sleeps the waits it asks for.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import replace
from types import TracebackType
from typing import Generic, Optional, TypeVar, Union

from typing_extensions import Self

from ._budget import CallBudget
from ._errors import ParameterError
from ._http import AsyncClient, Client, HTTPError, Request, Response, Timeout
from ._transport import (
    _UNSET,
    APICall,
    AuthScheme,
    CallCounter,
    ClientConfig,
    Done,
    advance,
    call_flow,
)
from .resources.account import Account, AsyncAccount
from .resources.ids import AsyncIds, Ids
from .resources.posts import AsyncPosts, Posts

__all__ = ["AsyncSportsPosts", "SportsPosts"]

T = TypeVar("T")
log = logging.getLogger("sports_posts")


def _setup_logging_from_env() -> None:
    """``SPORTS_POSTS_LOG=debug`` (or ``info``) turns the SDK's logger on, to stderr."""
    level = os.environ.get("SPORTS_POSTS_LOG", "").strip().upper()
    if level in ("DEBUG", "INFO", "WARNING", "ERROR"):
        log.setLevel(level)
        if not log.handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
            log.addHandler(handler)


_setup_logging_from_env()


def _sleep(seconds: float) -> None:
    """Sleep between retries (tests patch this; the suite never sleeps for real)."""
    time.sleep(seconds)


async def _async_sleep(seconds: float) -> None:
    """Async sleep between retries (tests patch this)."""
    await asyncio.sleep(seconds)


H = TypeVar("H", Client, AsyncClient)


class _ClientBase(Generic[H]):
    """Settings, the pool and the call counter, shared by both clients; no I/O."""

    _config: ClientConfig
    _calls: CallCounter
    _http: H
    _owns_http: bool

    _http_type: type[H]

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout: Union[float, Timeout] = 30.0,
        max_retries: int = 2,
        auth_scheme: AuthScheme = "bearer",
        http_client: Optional[H] = None,
        default_headers: Optional[Mapping[str, str]] = None,
        budget: Optional[CallBudget] = None,
    ) -> None:
        self._config = ClientConfig.resolve(
            api_key=api_key,
            base_url=base_url,
            auth_scheme=auth_scheme,
            timeout=timeout,
            max_retries=max_retries,
            default_headers=default_headers,
        )
        if budget is not None:
            self._config = replace(self._config, budget=budget)
        http_type = self._http_type
        if http_client is not None and not isinstance(http_client, http_type):
            raise ParameterError(
                f"http_client must be an {http_type.__module__}.{http_type.__name__}", parameter="http_client"
            )
        self._calls = CallCounter()
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else http_type(follow_redirects=False)
        self._bind()

    def _bind(self) -> None:
        raise NotImplementedError

    def with_options(self, *, timeout: Union[float, Timeout] = _UNSET, max_retries: Optional[int] = None) -> Self:
        """A client with another timeout or retry count that shares this one's pool and
        call counter; closing the copy leaves the pool open."""
        clone = object.__new__(type(self))
        clone._config = self._config.with_options(timeout=timeout, max_retries=max_retries)
        clone._calls = self._calls
        clone._http = self._http
        clone._owns_http = False
        clone._bind()
        return clone

    @property
    def base_url(self) -> str:
        """The service's address, ending in ``/v1``."""
        return self._config.base_url

    @property
    def timeout(self) -> Timeout:
        """The timeout of each request."""
        return self._config.timeout

    @property
    def max_retries(self) -> int:
        """Retries after the first attempt of a call."""
        return self._config.max_retries

    @property
    def auth_scheme(self) -> AuthScheme:
        """How the key is sent: ``"bearer"`` or ``"bare"``."""
        return self._config.auth_scheme

    @property
    def calls(self) -> int:
        """Requests sent so far (retries included): what this client has spent."""
        return self._calls.value

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self._config.base_url!r}, api_key=<redacted>, "
            f"auth_scheme={self._config.auth_scheme!r}, max_retries={self._config.max_retries})"
        )


class SportsPosts(_ClientBase[Client]):
    """The synchronous client of the Sports Posts service.

    One connection pool per client, shared by every ``with_options`` copy. Close it with
    ``close()`` or use it as a context manager.
    """

    posts: Posts
    account: Account
    ids: Ids
    _http_type = Client

    def _bind(self) -> None:
        self.posts = Posts(self)
        self.account = Account(self)
        self.ids = Ids(self)

    def close(self) -> None:
        """Close the connection pool, unless it was passed in by the caller."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> SportsPosts:
        return self

    def __exit__(
        self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        self.close()

    def _send(self, request: Request, budget: Optional[CallBudget]) -> Union[Response, HTTPError]:
        if budget is not None:
            try:
                budget.acquire()  # a refusal raises here, before anything is sent
            except BaseException:
                self._calls.add(-1)  # counted by the flow as it asked, but never sent
                raise
        try:
            return self._http.send(request)
        except HTTPError as exc:
            return exc

    def _request(self, call: APICall[T]) -> T:
        """Make a call: send what its flow asks for, sleep its waits, return its answer."""
        flow = call_flow(self._config, call, self._calls)
        budget = None if call.free else self._config.budget
        step = advance(flow, None)
        while not isinstance(step, Done):
            if isinstance(step, float):
                _sleep(step)
                step = advance(flow, None)
            else:
                step = advance(flow, self._send(step, budget))
        return step.value


class AsyncSportsPosts(_ClientBase[AsyncClient]):
    """The asynchronous client: the same calls, awaited.

    Close it explicitly with ``await aclose()`` or ``async with``; it never closes itself
    in ``__del__`` (by then the event loop may be gone).
    """

    posts: AsyncPosts
    account: AsyncAccount
    ids: AsyncIds
    _http_type = AsyncClient

    def _bind(self) -> None:
        self.posts = AsyncPosts(self)
        self.account = AsyncAccount(self)
        self.ids = AsyncIds(self)

    async def aclose(self) -> None:
        """Close the connection pool, unless it was passed in by the caller."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncSportsPosts:
        return self

    async def __aexit__(
        self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        await self.aclose()

    async def _send(self, request: Request, budget: Optional[CallBudget]) -> Union[Response, HTTPError]:
        if budget is not None:
            try:
                await budget.acquire_async()  # a refusal raises here, before anything is sent
            except BaseException:
                self._calls.add(-1)  # counted by the flow as it asked, but never sent
                raise
        try:
            return await self._http.send(request)
        except HTTPError as exc:
            return exc

    async def _request(self, call: APICall[T]) -> T:
        """Make a call: send what its flow asks for, sleep its waits, return its answer."""
        flow = call_flow(self._config, call, self._calls)
        budget = None if call.free else self._config.budget
        step = advance(flow, None)
        while not isinstance(step, Done):
            if isinstance(step, float):
                await _async_sleep(step)
                step = advance(flow, None)
            else:
                step = advance(flow, await self._send(step, budget))
        return step.value
