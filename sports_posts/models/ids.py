"""Id lookups of GET /ids (spec 2.8): teams, and the entities whose shape is not shown."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Optional

from pydantic import Field, ValidationInfo, model_validator

from ._base import SportsPostsModel

__all__ = ["IdItem", "IdList", "Team", "TeamList"]

_NOT_SHOWN = (
    "Not required: spec 2.8 gives the envelope for entity=teams only; the answers for players, "
    "leagues and posts are not shown (spec 4.4)."
)


def _reference_from(data: Any, info: ValidationInfo) -> Any:
    # The reference column's key equals the reference_id the caller passed, so only the
    # request knows where to look; the parser passes it in the validation context.
    if isinstance(data, dict) and "reference" not in data:
        key = (info.context or {}).get("reference_id")
        if key and key in data:
            value = data[key]
            data = {**data, "reference": None if value is None else str(value)}
    return data


class Team(SportsPostsModel):
    """A team of a league; ``reference`` is the column named by ``reference_id``, if asked."""

    service_id: int
    """The service's own team id (``id_type="service"``)."""

    location: str
    """City or region; the list is sorted by it."""

    name: str
    """Team name without its location."""

    league: str
    """League code, such as ``NBA``."""

    conference: Optional[str]
    """Conference, or ``None`` where the league has none (spec 2.8: string or null)."""

    division: Optional[str]
    """Division, or ``None`` where the league has none (spec 2.8: string or null)."""

    reference: Optional[str] = None
    """The id in the system named by ``reference_id``, when one was asked for."""

    _reference = model_validator(mode="before")(_reference_from)


class TeamList(SportsPostsModel):
    """The envelope of GET /ids?entity=teams; iterating it iterates ``items``."""

    ok: bool
    """Always true on a successful answer."""

    count: int
    """Number of teams returned."""

    items: list[Team]  # required: a body without items is not an empty league
    """The teams, alphabetical by location."""

    def __iter__(self) -> Iterator[Team]:  # type: ignore[override]
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


class IdItem(SportsPostsModel):
    """An item of GET /ids for players, leagues or posts: their shape is not documented, so
    every field is kept (``model_extra``, or attribute access); ``reference`` as for teams."""

    reference: Optional[str] = None
    """The id in the system named by ``reference_id``, when one was asked for."""

    _reference = model_validator(mode="before")(_reference_from)


class IdList(SportsPostsModel):
    """The envelope of GET /ids for any entity."""

    ok: bool = Field(True, description=_NOT_SHOWN)
    """Always true on a successful answer."""

    count: Optional[int] = Field(None, description=_NOT_SHOWN)
    """Number of items returned."""

    items: list[IdItem]
    """The items; each keeps every field the service sent."""

    def __iter__(self) -> Iterator[IdItem]:  # type: ignore[override]
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)
