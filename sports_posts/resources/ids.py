"""``client.ids``: GET /ids, one endpoint for every id lookup."""

from __future__ import annotations

import functools
from typing import Final

from typing_extensions import Unpack

from .. import _endpoints
from .._config import RequestOptions
from .._params import Entity, IdsLookup, LeagueCode
from ..models.ids import IdList, TeamList
from ._base import (
    AsyncResource,
    SyncResource,
    async_to_raw_response_wrapper,
    same,
    to_raw_response_wrapper,
)

__all__ = ["AsyncIds", "AsyncIdsWithRawResponse", "Ids", "IdsLookupOptions", "IdsWithRawResponse"]


class IdsLookupOptions(IdsLookup, RequestOptions, total=False):
    """The lookup of GET /ids and the options of one call."""


class Ids(SyncResource):
    """``client.ids``: look up teams and other entities by league."""

    def teams(self, /, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]) -> TeamList:
        """Every team of a league, alphabetical by location, or the one matching ``lookup``."""
        return self._client._result(_endpoints.ids_teams(league, **lookup), same)

    def list(
        self, /, entity: Entity, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]
    ) -> IdList:
        """Ids of players, leagues or posts (or teams, untyped); items keep every field."""
        return self._client._result(_endpoints.ids_list(entity, league, **lookup), same)

    @functools.cached_property
    def with_raw_response(self) -> IdsWithRawResponse:
        """These methods, each answering a ``RawResponse``."""
        return IdsWithRawResponse(self._raw_twin())


class AsyncIds(AsyncResource):
    """``aclient.ids``: look up teams and other entities by league, awaited."""

    async def teams(self, /, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]) -> TeamList:
        """Every team of a league, alphabetical by location, or the one matching ``lookup``."""
        return await self._client._result(_endpoints.ids_teams(league, **lookup), same)

    async def list(
        self, /, entity: Entity, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]
    ) -> IdList:
        """Ids of players, leagues or posts (or teams, untyped); items keep every field."""
        return await self._client._result(_endpoints.ids_list(entity, league, **lookup), same)

    @functools.cached_property
    def with_raw_response(self) -> AsyncIdsWithRawResponse:
        """These methods, each awaited for a ``RawResponse``."""
        return AsyncIdsWithRawResponse(self._raw_twin())


class IdsWithRawResponse:
    """``client.with_raw_response.ids``: ``teams`` and ``list``, raw."""

    def __init__(self, ids: Ids) -> None:
        self.teams: Final = to_raw_response_wrapper(ids.teams)
        self.list: Final = to_raw_response_wrapper(ids.list)


class AsyncIdsWithRawResponse:
    """``aclient.with_raw_response.ids``: ``teams`` and ``list``, raw."""

    def __init__(self, ids: AsyncIds) -> None:
        self.teams: Final = async_to_raw_response_wrapper(ids.teams)
        self.list: Final = async_to_raw_response_wrapper(ids.list)
