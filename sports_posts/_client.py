"""``SportsPosts`` and ``AsyncSportsPosts``: the shells of ``_base_client.py`` and their
resources, one property each, and ``with_raw_response``, the same resources answering a
``RawResponse``.

The resources are built, and their modules imported, on first use: importing the client
stays cheap (the models and the poller load with the first call).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from typing_extensions import Unpack

from ._base_client import AsyncAPIClient, SyncAPIClient

if TYPE_CHECKING:
    from .resources._base import ClientOptions
    from .resources.account import (
        Account,
        AccountWithRawResponse,
        AsyncAccount,
        AsyncAccountWithRawResponse,
    )
    from .resources.ids import AsyncIds, AsyncIdsWithRawResponse, Ids, IdsWithRawResponse
    from .resources.posts import AsyncPosts, AsyncPostsWithRawResponse, Posts, PostsWithRawResponse

__all__ = ["AsyncSportsPosts", "AsyncSportsPostsWithRawResponse", "SportsPosts", "SportsPostsWithRawResponse"]

C = TypeVar("C", "SportsPosts", "AsyncSportsPosts")


class SportsPosts(SyncAPIClient):
    """The synchronous client of the Sports Posts service.

    One connection pool per client, shared by every ``with_options`` copy. Close it with
    ``close()`` or use it as a context manager.
    """

    @functools.cached_property
    def posts(self) -> Posts:
        """GET /posts: ``list``, the mode helpers and ``poll``."""
        from .resources.posts import Posts

        return Posts(self)

    @functools.cached_property
    def account(self) -> Account:
        """Account information and the compliance list."""
        from .resources.account import Account

        return Account(self)

    @functools.cached_property
    def ids(self) -> Ids:
        """Id lookups of GET /ids."""
        from .resources.ids import Ids

        return Ids(self)

    @property
    def with_raw_response(self) -> SportsPostsWithRawResponse:
        """This client's calls, each answering a ``RawResponse``: ``.status_code``,
        ``.headers``, ``.http_request`` and ``.parse()`` for what the method returns."""
        return SportsPostsWithRawResponse(self._copy(self._config, raw=True))


class AsyncSportsPosts(AsyncAPIClient):
    """The asynchronous client: the same calls, awaited.

    Close it explicitly with ``await aclose()`` or ``async with``; it never closes itself
    in ``__del__`` (by then the event loop may be gone).
    """

    @functools.cached_property
    def posts(self) -> AsyncPosts:
        """GET /posts: ``list``, the mode helpers and ``poll``."""
        from .resources.posts import AsyncPosts

        return AsyncPosts(self)

    @functools.cached_property
    def account(self) -> AsyncAccount:
        """Account information and the compliance list."""
        from .resources.account import AsyncAccount

        return AsyncAccount(self)

    @functools.cached_property
    def ids(self) -> AsyncIds:
        """Id lookups of GET /ids."""
        from .resources.ids import AsyncIds

        return AsyncIds(self)

    @property
    def with_raw_response(self) -> AsyncSportsPostsWithRawResponse:
        """This client's calls, each awaited for a ``RawResponse``: ``.status_code``,
        ``.headers``, ``.http_request`` and ``.parse()`` for what the method returns."""
        return AsyncSportsPostsWithRawResponse(self._copy(self._config, raw=True))


class _RawView(Generic[C]):
    """A raw copy of a client (it shares the pool and the call counter), whose resources
    are each resource's raw view; ``poll`` and the compliance sweep are left off (many
    calls: no one answer to hand back raw)."""

    def __init__(self, client: C) -> None:
        self._client: C = client

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            # Members of the client the view does not type (calls, base_url, close, what the
            # poller calls) answer through it, untyped.
            if name == "_client":  # not set yet (a copy being built): no recursion
                raise AttributeError(name)
            return getattr(self._client, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._client!r})"


class SportsPostsWithRawResponse(_RawView[SportsPosts]):
    """``client.with_raw_response``: the client's calls, each answering a ``RawResponse``."""

    def with_options(self, **options: Unpack[ClientOptions]) -> SportsPostsWithRawResponse:
        """A raw view of ``client.with_options(...)``: other bounds, still raw."""
        return SportsPostsWithRawResponse(self._client.with_options(**options))

    @functools.cached_property
    def posts(self) -> PostsWithRawResponse:
        """GET /posts and its mode helpers."""
        return self._client.posts.with_raw_response

    @functools.cached_property
    def account(self) -> AccountWithRawResponse:
        """Account information and the compliance list."""
        return self._client.account.with_raw_response

    @functools.cached_property
    def ids(self) -> IdsWithRawResponse:
        """Id lookups of GET /ids."""
        return self._client.ids.with_raw_response


class AsyncSportsPostsWithRawResponse(_RawView[AsyncSportsPosts]):
    """``aclient.with_raw_response``: the client's calls, each awaited for a ``RawResponse``."""

    def with_options(self, **options: Unpack[ClientOptions]) -> AsyncSportsPostsWithRawResponse:
        """A raw view of ``aclient.with_options(...)``: other bounds, still raw."""
        return AsyncSportsPostsWithRawResponse(self._client.with_options(**options))

    @functools.cached_property
    def posts(self) -> AsyncPostsWithRawResponse:
        """GET /posts and its mode helpers."""
        return self._client.posts.with_raw_response

    @functools.cached_property
    def account(self) -> AsyncAccountWithRawResponse:
        """Account information and the compliance list."""
        return self._client.account.with_raw_response

    @functools.cached_property
    def ids(self) -> AsyncIdsWithRawResponse:
        """Id lookups of GET /ids."""
        return self._client.ids.with_raw_response
