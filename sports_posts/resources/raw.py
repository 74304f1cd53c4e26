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

from typing_extensions import ParamSpec, TypedDict, Unpack

if TYPE_CHECKING:
    from .._config import RequestOptions
    from .._http import Timeout
    from .._params import CSV, DateTimeLike, Entity, IdType, LeagueCode, Number
    from .._transport import RawResponse
    from ..models.account import AccountInformation, ComplianceList
    from ..models.ids import IdList, TeamList
    from ..models.post import Post
    from ..pagination import AsyncPage, SyncPage
    from .account import Account, AsyncAccount
    from .ids import AsyncIds, Ids, IdsLookupOptions
    from .posts import AsyncPosts, PostFiltersOptions, Posts, PostsListOptions

__all__ = [
    "AccountWithRawResponse",
    "AsyncAccountWithRawResponse",
    "AsyncIdsWithRawResponse",
    "AsyncPostsWithRawResponse",
    "AsyncSportsPostsWithRawResponse",
    "ClientOptions",
    "IdsWithRawResponse",
    "PostsWithRawResponse",
    "SportsPostsWithRawResponse",
    "async_page_to_raw_response_wrapper",
    "async_to_raw_response_wrapper",
    "to_raw_response_wrapper",
]

P = ParamSpec("P")
R = TypeVar("R")


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


class ClientOptions(TypedDict, total=False):
    """What ``with_options`` changes on a client: its bounds."""

    timeout: Union[float, Timeout]
    max_retries: int
    total_timeout: Optional[float]
    max_response_bytes: int


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
            # Members of the client the view does not type (calls, base_url, close, what the
            # poller calls) answer through it, untyped.
            if name == "_client":  # not set yet (a copy being built): no recursion
                raise AttributeError(name)
            return getattr(self._client, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._client!r})"


class PostsWithRawResponse:
    """``client.with_raw_response.posts``: ``list`` and the mode helpers, each answering
    ``RawResponse[SyncPage[Post]]``."""

    def __init__(self, posts: Posts) -> None:
        self._posts = posts

    def list(self, /, **params: Unpack[PostsListOptions]) -> RawResponse[SyncPage[Post]]:
        """``client.posts.list``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._posts.list)(**params)

    def trending(self, /, **filters: Unpack[PostFiltersOptions]) -> RawResponse[SyncPage[Post]]:
        """``client.posts.trending``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._posts.trending)(**filters)

    def by_league(
        self, leagues: CSV, /, **filters: Unpack[PostFiltersOptions]
    ) -> RawResponse[SyncPage[Post]]:
        """``client.posts.by_league``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._posts.by_league)(leagues, **filters)

    def by_sport(
        self, sports: CSV, /, **filters: Unpack[PostFiltersOptions]
    ) -> RawResponse[SyncPage[Post]]:
        """``client.posts.by_sport``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._posts.by_sport)(sports, **filters)

    def by_team(
        self, /, teams: CSV, *, id_type: IdType, **filters: Unpack[PostFiltersOptions]
    ) -> RawResponse[SyncPage[Post]]:
        """``client.posts.by_team``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._posts.by_team)(teams, id_type=id_type, **filters)

    def by_player(
        self, /, players: CSV, *, id_type: IdType, **filters: Unpack[PostFiltersOptions]
    ) -> RawResponse[SyncPage[Post]]:
        """``client.posts.by_player``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._posts.by_player)(players, id_type=id_type, **filters)

    def nearby(
        self, /, lat: Number, lng: Number, *, radius_km: Optional[Number] = None,
        **filters: Unpack[PostFiltersOptions],
    ) -> RawResponse[SyncPage[Post]]:
        """``client.posts.nearby``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._posts.nearby)(lat, lng, radius_km=radius_km, **filters)

    def for_game(
        self, /, match: CSV, start_time: DateTimeLike, *, include_pregame: Optional[bool] = None,
        id_type: Optional[IdType] = None, **filters: Unpack[PostFiltersOptions],
    ) -> RawResponse[SyncPage[Post]]:
        """``client.posts.for_game``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._posts.for_game)(
            match, start_time, include_pregame=include_pregame, id_type=id_type, **filters
        )


class AsyncPostsWithRawResponse:
    """``aclient.with_raw_response.posts``: ``list`` and the mode helpers, each awaited
    for a ``RawResponse[AsyncPage[Post]]`` (the first page is fetched at once)."""

    def __init__(self, posts: AsyncPosts) -> None:
        self._posts = posts

    def list(self, /, **params: Unpack[PostsListOptions]) -> Awaitable[RawResponse[AsyncPage[Post]]]:
        """``aclient.posts.list``, awaited for its ``RawResponse``."""
        return async_page_to_raw_response_wrapper(self._posts.list)(**params)

    def trending(
        self, /, **filters: Unpack[PostFiltersOptions]
    ) -> Awaitable[RawResponse[AsyncPage[Post]]]:
        """``aclient.posts.trending``, awaited for its ``RawResponse``."""
        return async_page_to_raw_response_wrapper(self._posts.trending)(**filters)

    def by_league(
        self, leagues: CSV, /, **filters: Unpack[PostFiltersOptions]
    ) -> Awaitable[RawResponse[AsyncPage[Post]]]:
        """``aclient.posts.by_league``, awaited for its ``RawResponse``."""
        return async_page_to_raw_response_wrapper(self._posts.by_league)(leagues, **filters)

    def by_sport(
        self, sports: CSV, /, **filters: Unpack[PostFiltersOptions]
    ) -> Awaitable[RawResponse[AsyncPage[Post]]]:
        """``aclient.posts.by_sport``, awaited for its ``RawResponse``."""
        return async_page_to_raw_response_wrapper(self._posts.by_sport)(sports, **filters)

    def by_team(
        self, /, teams: CSV, *, id_type: IdType, **filters: Unpack[PostFiltersOptions]
    ) -> Awaitable[RawResponse[AsyncPage[Post]]]:
        """``aclient.posts.by_team``, awaited for its ``RawResponse``."""
        return async_page_to_raw_response_wrapper(self._posts.by_team)(teams, id_type=id_type, **filters)

    def by_player(
        self, /, players: CSV, *, id_type: IdType, **filters: Unpack[PostFiltersOptions]
    ) -> Awaitable[RawResponse[AsyncPage[Post]]]:
        """``aclient.posts.by_player``, awaited for its ``RawResponse``."""
        return async_page_to_raw_response_wrapper(self._posts.by_player)(players, id_type=id_type, **filters)

    def nearby(
        self, /, lat: Number, lng: Number, *, radius_km: Optional[Number] = None,
        **filters: Unpack[PostFiltersOptions],
    ) -> Awaitable[RawResponse[AsyncPage[Post]]]:
        """``aclient.posts.nearby``, awaited for its ``RawResponse``."""
        return async_page_to_raw_response_wrapper(self._posts.nearby)(lat, lng, radius_km=radius_km, **filters)

    def for_game(
        self, /, match: CSV, start_time: DateTimeLike, *, include_pregame: Optional[bool] = None,
        id_type: Optional[IdType] = None, **filters: Unpack[PostFiltersOptions],
    ) -> Awaitable[RawResponse[AsyncPage[Post]]]:
        """``aclient.posts.for_game``, awaited for its ``RawResponse``."""
        return async_page_to_raw_response_wrapper(self._posts.for_game)(
            match, start_time, include_pregame=include_pregame, id_type=id_type, **filters
        )


class AccountWithRawResponse:
    """``client.with_raw_response.account``: ``information`` and ``x_ids``, raw."""

    def __init__(self, account: Account) -> None:
        self._account = account

    def information(self, /, **options: Unpack[RequestOptions]) -> RawResponse[AccountInformation]:
        """``client.account.information``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._account.information)(**options)

    def x_ids(self, /, **options: Unpack[RequestOptions]) -> RawResponse[ComplianceList]:
        """``client.account.x_ids``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._account.x_ids)(**options)


class AsyncAccountWithRawResponse:
    """``aclient.with_raw_response.account``: ``information`` and ``x_ids``, raw."""

    def __init__(self, account: AsyncAccount) -> None:
        self._account = account

    def information(
        self, /, **options: Unpack[RequestOptions]
    ) -> Awaitable[RawResponse[AccountInformation]]:
        """``aclient.account.information``, awaited for its ``RawResponse``."""
        return async_to_raw_response_wrapper(self._account.information)(**options)

    def x_ids(self, /, **options: Unpack[RequestOptions]) -> Awaitable[RawResponse[ComplianceList]]:
        """``aclient.account.x_ids``, awaited for its ``RawResponse``."""
        return async_to_raw_response_wrapper(self._account.x_ids)(**options)


class IdsWithRawResponse:
    """``client.with_raw_response.ids``: ``teams`` and ``list``, raw."""

    def __init__(self, ids: Ids) -> None:
        self._ids = ids

    def teams(self, /, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]) -> RawResponse[TeamList]:
        """``client.ids.teams``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._ids.teams)(league, **lookup)

    def list(
        self, /, entity: Entity, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]
    ) -> RawResponse[IdList]:
        """``client.ids.list``, answering its ``RawResponse``."""
        return to_raw_response_wrapper(self._ids.list)(entity, league, **lookup)


class AsyncIdsWithRawResponse:
    """``aclient.with_raw_response.ids``: ``teams`` and ``list``, raw."""

    def __init__(self, ids: AsyncIds) -> None:
        self._ids = ids

    def teams(
        self, /, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]
    ) -> Awaitable[RawResponse[TeamList]]:
        """``aclient.ids.teams``, awaited for its ``RawResponse``."""
        return async_to_raw_response_wrapper(self._ids.teams)(league, **lookup)

    def list(
        self, /, entity: Entity, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]
    ) -> Awaitable[RawResponse[IdList]]:
        """``aclient.ids.list``, awaited for its ``RawResponse``."""
        return async_to_raw_response_wrapper(self._ids.list)(entity, league, **lookup)


class SportsPostsWithRawResponse(_View):
    """``client.with_raw_response``: the client's calls, each answering a ``RawResponse``;
    it shares the client's pool and call counter."""

    _client: _SyncClient

    def __init__(self, client: _SyncClient) -> None:
        super().__init__(client)

    def with_options(self, **options: Unpack[ClientOptions]) -> SportsPostsWithRawResponse:
        """A raw view of ``client.with_options(...)``: other bounds, still raw."""
        return SportsPostsWithRawResponse(self._client.with_options(**options))

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

    def with_options(self, **options: Unpack[ClientOptions]) -> AsyncSportsPostsWithRawResponse:
        """A raw view of ``aclient.with_options(...)``: other bounds, still raw."""
        return AsyncSportsPostsWithRawResponse(self._client.with_options(**options))

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
