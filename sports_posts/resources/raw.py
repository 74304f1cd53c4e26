"""``client.with_raw_response``: the same methods, typed to answer a ``RawResponse``.

Shaped as openai-python shapes it: the view's resources hold the methods of a raw copy of
the client (whose answers already are ``RawResponse``), re-typed by ParamSpec wrappers
that keep every parameter and change only the answer's type. ``poll`` and the compliance
sweep are left off: each makes many calls, so there is no one answer to hand back raw.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol, TypeVar, Union, cast

from typing_extensions import ParamSpec

if TYPE_CHECKING:
    from .._http import Timeout
    from .._transport import RawResponse
    from .account import Account, AsyncAccount
    from .ids import AsyncIds, Ids
    from .posts import AsyncPosts, Posts

__all__ = [
    "AccountWithRawResponse",
    "AsyncAccountWithRawResponse",
    "AsyncIdsWithRawResponse",
    "AsyncPostsWithRawResponse",
    "AsyncSportsPostsWithRawResponse",
    "IdsWithRawResponse",
    "PostsWithRawResponse",
    "SportsPostsWithRawResponse",
    "async_page_to_raw_response_wrapper",
    "async_to_raw_response_wrapper",
    "to_raw_response_wrapper",
]

P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C")
V = TypeVar("V")


# The wrappers cost nothing per call: the method they are given belongs to a raw client,
# which already answers the RawResponse; only its declared answer changes.
def to_raw_response_wrapper(func: Callable[P, R]) -> Callable[P, RawResponse[R]]:
    """A raw client's method, typed as answering the ``RawResponse`` around ``R``."""
    return cast("Callable[P, RawResponse[R]]", func)


def async_to_raw_response_wrapper(
    func: Callable[P, Awaitable[R]],
) -> Callable[P, Awaitable[RawResponse[R]]]:
    """A raw async client's coroutine method, typed as awaiting the ``RawResponse``."""
    return cast("Callable[P, Awaitable[RawResponse[R]]]", func)


def async_page_to_raw_response_wrapper(func: Callable[P, R]) -> Callable[P, Awaitable[RawResponse[R]]]:
    """``aclient.posts.list`` and its helpers on a raw client: they fetch the first page
    at once, so they answer an awaitable ``RawResponse`` of the ``AsyncPage``."""
    return cast("Callable[P, Awaitable[RawResponse[R]]]", func)


def _viewed(func: Callable[P, C], view: Callable[[C], V]) -> Callable[P, V]:
    """``func`` (``with_options``) with its answer wrapped in ``view``: same parameters."""

    @functools.wraps(func)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> V:
        return view(func(*args, **kwargs))

    return wrapped


# The clients as the views need them: protocols, so that this module never imports the
# client module (which imports it), as resources reach the client through a requester.
class _SyncClient(Protocol):
    @property
    def posts(self) -> Posts: ...
    @property
    def account(self) -> Account: ...
    @property
    def ids(self) -> Ids: ...
    def with_options(
        self, *, timeout: Union[float, Timeout] = ..., max_retries: int = ...,
        total_timeout: Optional[float] = ..., max_response_bytes: int = ...,
    ) -> _SyncClient: ...


class _AsyncClient(Protocol):
    @property
    def posts(self) -> AsyncPosts: ...
    @property
    def account(self) -> AsyncAccount: ...
    @property
    def ids(self) -> AsyncIds: ...
    def with_options(
        self, *, timeout: Union[float, Timeout] = ..., max_retries: int = ...,
        total_timeout: Optional[float] = ..., max_response_bytes: int = ...,
    ) -> _AsyncClient: ...


class _View:
    """What both client views share: the raw copy they show, and today's other members."""

    def __init__(self, client: Any) -> None:
        self._client = client

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            # The view used to be the raw client itself: its other members (calls, base_url,
            # close, what the poller calls) still answer, untyped.
            if name == "_client":  # not set yet (a copy being built): no recursion
                raise AttributeError(name)
            return getattr(self._client, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._client!r})"


class PostsWithRawResponse:
    """``client.with_raw_response.posts``: ``list`` and the mode helpers, each answering
    ``RawResponse[SyncPage[Post]]``."""

    def __init__(self, posts: Posts) -> None:
        self.list = to_raw_response_wrapper(posts.list)
        self.trending = to_raw_response_wrapper(posts.trending)
        self.by_league = to_raw_response_wrapper(posts.by_league)
        self.by_sport = to_raw_response_wrapper(posts.by_sport)
        self.by_team = to_raw_response_wrapper(posts.by_team)
        self.by_player = to_raw_response_wrapper(posts.by_player)
        self.nearby = to_raw_response_wrapper(posts.nearby)
        self.for_game = to_raw_response_wrapper(posts.for_game)


class AsyncPostsWithRawResponse:
    """``aclient.with_raw_response.posts``: ``list`` and the mode helpers, each awaited
    for a ``RawResponse[AsyncPage[Post]]``."""

    def __init__(self, posts: AsyncPosts) -> None:
        self.list = async_page_to_raw_response_wrapper(posts.list)
        self.trending = async_page_to_raw_response_wrapper(posts.trending)
        self.by_league = async_page_to_raw_response_wrapper(posts.by_league)
        self.by_sport = async_page_to_raw_response_wrapper(posts.by_sport)
        self.by_team = async_page_to_raw_response_wrapper(posts.by_team)
        self.by_player = async_page_to_raw_response_wrapper(posts.by_player)
        self.nearby = async_page_to_raw_response_wrapper(posts.nearby)
        self.for_game = async_page_to_raw_response_wrapper(posts.for_game)


class AccountWithRawResponse:
    """``client.with_raw_response.account``: ``information`` and ``x_ids``, raw."""

    def __init__(self, account: Account) -> None:
        self.information = to_raw_response_wrapper(account.information)
        self.x_ids = to_raw_response_wrapper(account.x_ids)


class AsyncAccountWithRawResponse:
    """``aclient.with_raw_response.account``: ``information`` and ``x_ids``, raw."""

    def __init__(self, account: AsyncAccount) -> None:
        self.information = async_to_raw_response_wrapper(account.information)
        self.x_ids = async_to_raw_response_wrapper(account.x_ids)


class IdsWithRawResponse:
    """``client.with_raw_response.ids``: ``teams`` and ``list``, raw."""

    def __init__(self, ids: Ids) -> None:
        self.teams = to_raw_response_wrapper(ids.teams)
        self.list = to_raw_response_wrapper(ids.list)


class AsyncIdsWithRawResponse:
    """``aclient.with_raw_response.ids``: ``teams`` and ``list``, raw."""

    def __init__(self, ids: AsyncIds) -> None:
        self.teams = async_to_raw_response_wrapper(ids.teams)
        self.list = async_to_raw_response_wrapper(ids.list)


class SportsPostsWithRawResponse(_View):
    """``client.with_raw_response``: the client's calls, each answering a ``RawResponse``;
    it shares the client's pool and call counter."""

    _client: _SyncClient

    def __init__(self, client: _SyncClient) -> None:
        super().__init__(client)
        self.with_options = _viewed(client.with_options, SportsPostsWithRawResponse)
        """A raw view of ``client.with_options(...)``: other bounds, still raw."""

    @functools.cached_property
    def posts(self) -> PostsWithRawResponse:
        """GET /posts and its mode helpers (``poll`` is not one call: it is left off)."""
        return PostsWithRawResponse(self._client.posts)

    @functools.cached_property
    def account(self) -> AccountWithRawResponse:
        """Account information and the compliance list (not the sweep: many calls)."""
        return AccountWithRawResponse(self._client.account)

    @functools.cached_property
    def ids(self) -> IdsWithRawResponse:
        """Id lookups of GET /ids."""
        return IdsWithRawResponse(self._client.ids)


class AsyncSportsPostsWithRawResponse(_View):
    """``aclient.with_raw_response``: the client's calls, each awaited for a
    ``RawResponse``; it shares the client's pool and call counter."""

    _client: _AsyncClient

    def __init__(self, client: _AsyncClient) -> None:
        super().__init__(client)
        self.with_options = _viewed(client.with_options, AsyncSportsPostsWithRawResponse)
        """A raw view of ``aclient.with_options(...)``: other bounds, still raw."""

    @functools.cached_property
    def posts(self) -> AsyncPostsWithRawResponse:
        """GET /posts and its mode helpers (``poll`` is not one call: it is left off)."""
        return AsyncPostsWithRawResponse(self._client.posts)

    @functools.cached_property
    def account(self) -> AsyncAccountWithRawResponse:
        """Account information and the compliance list (not the sweep: many calls)."""
        return AsyncAccountWithRawResponse(self._client.account)

    @functools.cached_property
    def ids(self) -> AsyncIdsWithRawResponse:
        """Id lookups of GET /ids."""
        return AsyncIdsWithRawResponse(self._client.ids)
