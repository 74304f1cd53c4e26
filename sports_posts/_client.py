"""``SportsPosts`` and ``AsyncSportsPosts``: configuration plus two thin I/O shells.

Request building, parsing, error mapping and the retry decision live in
``_transport.py``; the shells below only send a request and sleep between attempts.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Generic, Optional, TypeVar, Union

import httpx
from tenacity import AsyncRetrying, Retrying
from typing_extensions import Self

from ._errors import APIConnectionError, APITimeoutError, ParameterError
from ._transport import (
    _UNSET,
    APICall,
    AuthScheme,
    ClientConfig,
    build_request,
    parse_response,
    redacted_headers,
    retry_policy,
)
from .models.post import Post, PostsResponse
from .pagination import SyncPage
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


class _CallCounter:
    """Requests sent by a client and every client derived from it by ``with_options``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self) -> None:
        with self._lock:
            self.value += 1


def _translate(exc: httpx.HTTPError, request: httpx.Request) -> APIConnectionError:
    """A transport failure as the SDK's typed error (the message names no secret)."""
    where = f"{request.method} {request.url.copy_with(query=None)}"
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(f"{where} timed out ({type(exc).__name__})", request=request)
    return APIConnectionError(f"{where} failed: {type(exc).__name__}: {exc}", request=request)


H = TypeVar("H", httpx.Client, httpx.AsyncClient)


class _ClientBase(Generic[H]):
    """Settings, the pool and the call counter, shared by both clients; no I/O."""

    _config: ClientConfig
    _calls: _CallCounter
    _http: H
    _owns_http: bool

    def _init_config(
        self,
        *,
        api_key: Optional[str],
        base_url: Optional[str],
        timeout: Union[float, httpx.Timeout],
        max_retries: int,
        auth_scheme: str,
        default_headers: Optional[Mapping[str, str]],
        http_client: Optional[H],
        http_type: type[H],
    ) -> None:
        self._config = ClientConfig.resolve(
            api_key=api_key,
            base_url=base_url,
            auth_scheme=auth_scheme,
            timeout=timeout,
            max_retries=max_retries,
            default_headers=default_headers,
        )
        if http_client is not None and not isinstance(http_client, http_type):
            raise ParameterError(
                f"http_client must be an {http_type.__module__}.{http_type.__name__}", parameter="http_client"
            )
        self._calls = _CallCounter()
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else http_type(follow_redirects=False)
        self._bind()

    def _bind(self) -> None:
        raise NotImplementedError

    def with_options(
        self, *, timeout: Union[float, httpx.Timeout] = _UNSET, max_retries: Optional[int] = None
    ) -> Self:
        """A client with another timeout or retry count that shares this one's pool and
        call counter; closing the copy leaves the pool open. An argument left out keeps
        this client's value."""
        clone = object.__new__(type(self))
        clone._config = self._config.with_options(timeout=timeout, max_retries=max_retries)
        clone._calls = self._calls
        clone._http = self._http
        clone._owns_http = False
        clone._bind()
        return clone

    @property
    def base_url(self) -> str:
        """The service address requests go to, ending in ``/v1``."""
        return self._config.base_url

    @property
    def timeout(self) -> httpx.Timeout:
        """The timeout of every request, as an ``httpx.Timeout`` (connect at most 10 s)."""
        return self._config.timeout

    @property
    def max_retries(self) -> int:
        """How many times a transient failure is retried after the first attempt."""
        return self._config.max_retries

    @property
    def auth_scheme(self) -> AuthScheme:
        """``"bearer"`` (``Authorization: Bearer <key>``) or ``"bare"`` (the key alone)."""
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

    def _log_request(self, request: httpx.Request) -> None:
        if log.isEnabledFor(logging.DEBUG):
            log.debug("request %s %s headers=%s", request.method, request.url, redacted_headers(request.headers))

    def _log_response(self, request: httpx.Request, response: httpx.Response, started: float) -> None:
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "response %s %s -> %d in %.1f ms",
                request.method,
                request.url.copy_with(query=None),
                response.status_code,
                (time.perf_counter() - started) * 1000,
            )


class SportsPosts(_ClientBase[httpx.Client]):
    """The synchronous client of the Sports Posts service.

    One connection pool per client, shared by every ``with_options`` copy. Close it with
    ``close()`` or use it as a context manager.
    """

    posts: Posts
    """GET /posts: ``list``, the mode helpers and ``poll``."""
    account: Account
    """Account information and the compliance list."""
    ids: Ids
    """Id lookups of GET /ids."""

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout: Union[float, httpx.Timeout] = 30.0,
        max_retries: int = 2,
        auth_scheme: AuthScheme = "bearer",
        http_client: Optional[httpx.Client] = None,
        default_headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        self._init_config(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            auth_scheme=auth_scheme,
            default_headers=default_headers,
            http_client=http_client,
            http_type=httpx.Client,
        )

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

    def _send(self, request: httpx.Request) -> httpx.Response:
        self._log_request(request)
        started = time.perf_counter()
        self._calls.add()
        try:
            response = self._http.send(request)
        except httpx.HTTPError as exc:
            raise _translate(exc, request) from exc
        self._log_response(request, response, started)
        return response

    def _request(self, call: APICall[T]) -> T:
        """Send a call with the retry policy and return its parsed answer."""
        request = build_request(self._config, call)
        for attempt in Retrying(**retry_policy(self._config.max_retries, _sleep)):
            with attempt:
                return parse_response(call, self._send(request))
        raise AssertionError("unreachable: tenacity re-raises the last error")  # pragma: no cover

    def _get_page(self, call: APICall[PostsResponse]) -> SyncPage[Post]:
        return SyncPage(self, call, self._request(call))


class AsyncSportsPosts(_ClientBase[httpx.AsyncClient]):
    """The asynchronous client: the same calls, awaited.

    Close it explicitly with ``await aclose()`` or ``async with``; it never closes itself
    in ``__del__`` (by then the event loop may be gone).
    """

    posts: AsyncPosts
    """GET /posts: ``list``, the mode helpers and ``poll``."""
    account: AsyncAccount
    """Account information and the compliance list."""
    ids: AsyncIds
    """Id lookups of GET /ids."""

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout: Union[float, httpx.Timeout] = 30.0,
        max_retries: int = 2,
        auth_scheme: AuthScheme = "bearer",
        http_client: Optional[httpx.AsyncClient] = None,
        default_headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        self._init_config(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            auth_scheme=auth_scheme,
            default_headers=default_headers,
            http_client=http_client,
            http_type=httpx.AsyncClient,
        )

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

    async def _send(self, request: httpx.Request) -> httpx.Response:
        self._log_request(request)
        started = time.perf_counter()
        self._calls.add()
        try:
            response = await self._http.send(request)
        except httpx.HTTPError as exc:
            raise _translate(exc, request) from exc
        self._log_response(request, response, started)
        return response

    async def _request(self, call: APICall[T]) -> T:
        """Send a call with the retry policy and return its parsed answer."""
        request = build_request(self._config, call)
        async for attempt in AsyncRetrying(**retry_policy(self._config.max_retries, _async_sleep)):
            with attempt:
                return parse_response(call, await self._send(request))
        raise AssertionError("unreachable: tenacity re-raises the last error")  # pragma: no cover
