"""``client.posts``: GET /posts, and helpers that make its inferred mode explicit.

The service picks the mode from the parameters; the helpers only choose which parameters
are sent, so they cost the same single call as ``list``. They are written once, in
``PostModes``, for both clients: only ``list`` differs (a fetched page or an
awaitable one).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Callable, Final, Generic, Optional, TypeVar, Union, cast

from typing_extensions import ParamSpec, Unpack

from .. import _endpoints
from .._config import RequestOptions
from .._params import CSV, DateTimeLike, IdType, Number, PollFilters, PostFilters, PostsListParams
from .._transport import RawResponse
from ..models.post import Post
from ..pagination import AsyncPage, SyncPage
from ..polling import DEFAULT_LOOKBACK, AsyncPoller, Checkpoint, Lease, Poller
from ._base import Resource

if TYPE_CHECKING:
    from .._base_client import AsyncAPIClient, SyncAPIClient

__all__ = [
    "AsyncPosts",
    "AsyncPostsWithRawResponse",
    "PostFiltersOptions",
    "PostModes",
    "PostModesWithRawResponse",
    "Posts",
    "PostsListOptions",
    "PostsWithRawResponse",
]

C = TypeVar("C", "SyncAPIClient", "AsyncAPIClient")
PageT = TypeVar("PageT", SyncPage[Post], AsyncPage[Post])
PollerT = TypeVar("PollerT", Poller, AsyncPoller)
RawPageT = TypeVar("RawPageT")
P = ParamSpec("P")


class PostsListOptions(PostsListParams, RequestOptions, total=False):
    """Every query parameter of GET /posts, and the options of one call."""


class PostFiltersOptions(PostFilters, RequestOptions, total=False):
    """The narrowing parameters of GET /posts, and the options of one call."""


class PostModes(Resource[C], Generic[C, PageT, PollerT]):
    """GET /posts and its mode helpers, for either client."""

    _poller: Callable[..., PollerT]

    def list(self, /, **params: Unpack[PostsListOptions]) -> PageT:
        """Posts matching ``params``; iterate to page on.

        Takes every query parameter of GET /posts as a keyword, plus the per-call options
        ``extra_headers``, ``extra_query`` and ``timeout``: see
        [Parameters of `posts.list`][posts-list-parameters]."""
        raise NotImplementedError

    def trending(self, /, **filters: Unpack[PostFiltersOptions]) -> PageT:
        """Trending posts (``sort=trending`` unless another sort is given)."""
        filters.setdefault("sort", "trending")
        return self.list(**filters)

    def by_league(self, leagues: CSV, /, **filters: Unpack[PostFiltersOptions]) -> PageT:
        """League mode: posts of one or more league codes (or ``"ALL"``)."""
        filters["leagues"] = leagues
        return self.list(**filters)

    def by_sport(self, sports: CSV, /, **filters: Unpack[PostFiltersOptions]) -> PageT:
        """Posts across every league of the given parent sports (``soccer`` = ``football``)."""
        filters["sports"] = sports
        return self.list(**filters)

    def by_team(
        self, /, teams: CSV, *, id_type: IdType, **filters: Unpack[PostFiltersOptions]
    ) -> PageT:
        """Team mode: up to 10 team ids in the ``id_type`` id system."""
        return self.list(teams=teams, id_type=id_type, **filters)

    def by_player(
        self, /, players: CSV, *, id_type: IdType, **filters: Unpack[PostFiltersOptions]
    ) -> PageT:
        """Player mode: up to 100 player ids in the ``id_type`` id system."""
        return self.list(players=players, id_type=id_type, **filters)

    def nearby(
        self,
        /,
        lat: Number,
        lng: Number,
        *,
        radius_km: Optional[Number] = None,
        **filters: Unpack[PostFiltersOptions],
    ) -> PageT:
        """Nearby mode: posts geotagged within ``radius_km`` of a point."""
        return self.list(lat=lat, lng=lng, radius_km=radius_km, **filters)

    def for_game(
        self,
        /,
        match: CSV,
        start_time: DateTimeLike,
        *,
        include_pregame: Optional[bool] = None,
        id_type: Optional[IdType] = None,
        **filters: Unpack[PostFiltersOptions],
    ) -> PageT:
        """Game mode: posts of one game, given its two team ids (in the ``id_type`` id
        system, when given) and its start time."""
        return self.list(
            match=match, start_time=start_time, include_pregame=include_pregame, id_type=id_type,
            **filters,
        )

    def poll(
        self,
        /,
        *,
        since: Optional[DateTimeLike] = None,
        interval: Union[float, timedelta] = 60.0,
        checkpoint: Optional[Checkpoint] = None,
        lookback: Union[float, timedelta] = DEFAULT_LOOKBACK,
        max_calls_per_day: Optional[int] = None,
        clock: Optional[Callable[[], datetime]] = None,
        lease: Optional[Lease] = None,
        **filters: Unpack[PollFilters],
    ) -> PollerT:
        """New posts matching ``filters``, each once, in batches oldest first:
        ``for batch in poller`` (async: ``async for``). ``clock`` and ``lease`` are the
        poller's own options: the current time, and one live poller per feed in a fleet."""
        return self._poller(
            self._client,
            since=since,
            interval=interval,
            checkpoint=checkpoint,
            lookback=lookback,
            max_calls_per_day=max_calls_per_day,
            clock=clock,
            lease=lease,
            filters=filters,
        )


class Posts(PostModes["SyncAPIClient", SyncPage[Post], Poller]):
    """GET /posts for the sync client: each page is fetched when reached."""

    _poller = Poller

    def list(self, /, **params: Unpack[PostsListOptions]) -> SyncPage[Post]:
        """Posts matching ``params``; iterate to page on.

        Takes every query parameter of GET /posts as a keyword, plus the per-call options
        ``extra_headers``, ``extra_query`` and ``timeout``: see
        [Parameters of `posts.list`][posts-list-parameters]."""
        call = _endpoints.posts_list(params)
        return self._client._result(
            call, lambda first: SyncPage(self._client._request, call, first)
        )

    @functools.cached_property
    def with_raw_response(self) -> PostsWithRawResponse:
        """``list`` and the mode helpers, each answering a ``RawResponse``."""
        return PostsWithRawResponse(self._raw_twin())


class AsyncPosts(PostModes["AsyncAPIClient", AsyncPage[Post], AsyncPoller]):
    """GET /posts for the async client; pages are awaitable and async-iterable."""

    _poller = AsyncPoller

    def list(self, /, **params: Unpack[PostsListOptions]) -> AsyncPage[Post]:
        """Posts matching ``params``; ``await`` for one page or ``async for`` every post.

        Takes the same keywords as the sync ``list``: see
        [Parameters of `posts.list`][posts-list-parameters]."""
        call = _endpoints.posts_list(params)
        if self._client._raw:  # the first page is fetched now, for its raw answer
            raw: AsyncPage[Post] = self._client._result(  # type: ignore[assignment]
                call, lambda first: AsyncPage(self._client._request, call, first)
            )
            return raw
        return AsyncPage(self._client._request, call)

    @functools.cached_property
    def with_raw_response(self) -> AsyncPostsWithRawResponse:
        """``list`` and the mode helpers, each awaited for a ``RawResponse`` (the first
        page is fetched at once)."""
        return AsyncPostsWithRawResponse(self._raw_twin())


class PostModesWithRawResponse(Generic[RawPageT]):
    """``list`` and the mode helpers, each answering ``RawPageT``: written once for both
    clients, as ``PostModes`` is (``poll`` makes many calls: it is left off)."""

    def __init__(self, posts: PostModes[Any, Any, Any]) -> None:
        self.list: Final = raw_page(posts.list, self)
        self.trending: Final = raw_page(posts.trending, self)
        self.by_league: Final = raw_page(posts.by_league, self)
        self.by_sport: Final = raw_page(posts.by_sport, self)
        self.by_team: Final = raw_page(posts.by_team, self)
        self.by_player: Final = raw_page(posts.by_player, self)
        self.nearby: Final = raw_page(posts.nearby, self)
        self.for_game: Final = raw_page(posts.for_game, self)


def raw_page(method: Callable[P, object], view: PostModesWithRawResponse[RawPageT]) -> Callable[P, RawPageT]:
    """A raw twin's method, typed as answering the view's raw page and keeping every
    parameter. The async client's raw ``list`` fetches the first page at once, so it
    answers an awaitable ``RawResponse`` of the ``AsyncPage``."""
    return cast("Callable[P, RawPageT]", method)


class PostsWithRawResponse(PostModesWithRawResponse[RawResponse[SyncPage[Post]]]):
    """``client.with_raw_response.posts``: each method answering ``RawResponse[SyncPage[Post]]``."""


class AsyncPostsWithRawResponse(PostModesWithRawResponse[Awaitable[RawResponse[AsyncPage[Post]]]]):
    """``aclient.with_raw_response.posts``: each method awaited for a
    ``RawResponse[AsyncPage[Post]]`` (the first page is fetched at once)."""
