"""``client.ids``: GET /ids, one endpoint for every id lookup."""

from __future__ import annotations

from typing_extensions import Unpack

from .. import _endpoints
from .._config import RequestOptions
from .._params import Entity, IdsLookup, LeagueCode
from .._transport import AsyncRequester, SyncRequester
from ..models.ids import IdList, TeamList
from ._base import Resource, same

__all__ = ["AsyncIds", "Ids", "IdsLookupOptions"]


class IdsLookupOptions(IdsLookup, RequestOptions, total=False):
    """The lookup of GET /ids and the options of one call."""


class Ids(Resource[SyncRequester]):
    """``client.ids``: look up teams and other entities by league."""

    def teams(self, /, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]) -> TeamList:
        """Every team of a league, alphabetical by location, or the one matching ``lookup``."""
        return self._client._result(_endpoints.ids_teams(league, **lookup), same)

    def list(
        self, /, entity: Entity, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]
    ) -> IdList:
        """Ids of players, leagues or posts (or teams, untyped); items keep every field."""
        return self._client._result(_endpoints.ids_list(entity, league, **lookup), same)


class AsyncIds(Resource[AsyncRequester]):
    """``aclient.ids``: look up teams and other entities by league, awaited."""

    async def teams(self, /, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]) -> TeamList:
        """Every team of a league, alphabetical by location, or the one matching ``lookup``."""
        return await self._client._result(_endpoints.ids_teams(league, **lookup), same)

    async def list(
        self, /, entity: Entity, league: LeagueCode, **lookup: Unpack[IdsLookupOptions]
    ) -> IdList:
        """Ids of players, leagues or posts (or teams, untyped); items keep every field."""
        return await self._client._result(_endpoints.ids_list(entity, league, **lookup), same)
