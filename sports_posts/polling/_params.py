"""The filters a poller carries to every request: GET /posts parameters minus its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional, Union

from typing_extensions import TypedDict

from .._params import CSV, AspectRatio, DateTimeLike, IdType, MediaTypeFilter, Number

__all__ = ["PollFilters"]


class PollFilters(TypedDict, total=False):
    """Every parameter of spec 4.1 except ``since``, ``since_id``, ``page`` and ``sort``,
    which the poller sets itself (passing them is a :class:`ParameterError`)."""

    leagues: Optional[CSV]
    league: Optional[CSV]
    sports: Optional[CSV]
    teams: Optional[CSV]
    players: Optional[CSV]
    id_type: Optional[IdType]
    match: Optional[Union[str, Sequence[Union[str, int]]]]
    start_time: Optional[DateTimeLike]
    include_pregame: Optional[bool]
    lat: Optional[Number]
    lng: Optional[Number]
    radius_km: Optional[Number]
    media_type: Optional[MediaTypeFilter]
    aspect_ratio: Optional[AspectRatio]
    min_score: Optional[Number]
    min_duration: Optional[int]
    highlight: Optional[bool]
    has_player: Optional[bool]
    custom_sources: Optional[bool]
    user_location: Optional[str]
    limit: Optional[int]
