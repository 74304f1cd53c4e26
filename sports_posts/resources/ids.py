"""``client.ids``: GET /ids, one endpoint for every id lookup."""

from __future__ import annotations

from typing import Literal, Optional, Union

from .. import _endpoints
from .._params import LeagueCode
from ..models.ids import IdList, TeamList
from ._base import AsyncResource, SyncResource

__all__ = ["AsyncIds", "Ids"]

Entity = Union[Literal["teams", "players", "leagues", "posts"], str]
ReferenceId = Union[
    Literal[
        "provider2_id", "provider1_id", "provider4_id", "nba_id", "provider5_id", "provider6_id",
        "grid_id", "code", "external_id",
    ],
    str,
]


class Ids(SyncResource):
    """``client.ids``: look up teams and other entities by league."""

    def teams(
        self, league: LeagueCode, *, reference_id: Optional[ReferenceId] = None, lookup: Optional[Union[str, int]] = None
    ) -> TeamList:
        """Every team of a league, alphabetical by location, or the one matching ``lookup``."""
        return self._client._request(_endpoints.ids_teams(league, reference_id, lookup))

    def list(
        self,
        entity: Entity,
        league: LeagueCode,
        *,
        reference_id: Optional[ReferenceId] = None,
        lookup: Optional[Union[str, int]] = None,
    ) -> IdList:
        """Ids of players, leagues or posts (or teams, untyped); items keep every field."""
        return self._client._request(_endpoints.ids_list(entity, league, reference_id, lookup))


class AsyncIds(AsyncResource):
    """``aclient.ids``: look up teams and other entities by league, awaited."""

    async def teams(
        self, league: LeagueCode, *, reference_id: Optional[ReferenceId] = None, lookup: Optional[Union[str, int]] = None
    ) -> TeamList:
        """Every team of a league, alphabetical by location, or the one matching ``lookup``."""
        return await self._client._request(_endpoints.ids_teams(league, reference_id, lookup))

    async def list(
        self,
        entity: Entity,
        league: LeagueCode,
        *,
        reference_id: Optional[ReferenceId] = None,
        lookup: Optional[Union[str, int]] = None,
    ) -> IdList:
        """Ids of players, leagues or posts (or teams, untyped); items keep every field."""
        return await self._client._request(_endpoints.ids_list(entity, league, reference_id, lookup))
