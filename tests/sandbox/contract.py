"""What the OpenAPI document must say about the closed lists, derived from the sandbox's own constants.

Used by the tests (the document and the code cannot drift apart) and, once, to write the
document's parameter schemas.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional

from sports_posts.sandbox._teams import COUNTRY_CODES, LEAGUES
from sports_posts.sandbox.ids import ENTITIES
from sports_posts.sandbox.query import (
    ASPECT_RATIOS,
    MAX_PLAYERS,
    MAX_TEAMS,
    MEDIA_TYPES,
    SORTS,
    SPORT_ALIASES,
)
from sports_posts.sandbox.world import ID_TYPES, REFERENCE_IDS, SPORTS

ERROR_CODES = ["INVALID_PARAMETER", "SINCE_ID_NOT_FOUND", "UNAUTHORIZED", "PAYMENT_REQUIRED", "FORBIDDEN",
               "NOT_FOUND", "METHOD_NOT_ALLOWED", "GONE", "RATE_LIMITED", "INTERNAL_ERROR", "SERVICE_UNAVAILABLE"]
"""Spec 7's codes, plus the ones the sandbox chose where the spec shows none (402, 405, 410, 503)."""

_ITEM = "[^ ,](?:[^,]*[^ ,])?"
"""An id in a comma-separated list: no comma, no space at either end."""


def any_case(word: str) -> str:
    """A regex matching ``word`` in any letter case (JSON Schema patterns have no flags)."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)


def one_of(words: Iterable[str]) -> str:
    """A regex for exactly one of ``words``, any letter case, spaces allowed around it."""
    return "^ *(?:" + "|".join(any_case(w) for w in words) + ") *$"


def comma_list(item: str, at_most: Optional[int] = None) -> str:
    """A regex for one or more ``item``, comma-separated, spaces allowed around each."""
    more = "*" if at_most is None else f"{{0,{at_most - 1}}}"
    return f"^ *(?:{item}) *(?:, *(?:{item}) *){more}$"


def parameter_schemas() -> dict[str, dict[str, Any]]:
    """The schema of every GET /posts and GET /ids parameter whose values the spec closes."""
    leagues = comma_list("|".join(any_case(code) for code in [*LEAGUES, "ALL"]))
    sports = comma_list("|".join(any_case(sport) for sport in [*SPORTS, *SPORT_ALIASES]))
    return {
        "leagues": {"type": "string", "minLength": 1, "pattern": leagues},
        "league": {"type": "string", "minLength": 1, "pattern": leagues},
        "sports": {"type": "string", "minLength": 1, "pattern": sports},
        "teams": {"type": "string", "minLength": 1, "pattern": comma_list(_ITEM, MAX_TEAMS)},
        "players": {"type": "string", "minLength": 1, "pattern": comma_list(_ITEM, MAX_PLAYERS)},
        "match": {"type": "string", "minLength": 3, "pattern": f"^ *{_ITEM} *, *{_ITEM} *$"},
        "id_type": {"type": "string", "minLength": 1, "pattern": one_of(ID_TYPES)},
        "media_type": {"type": "string", "minLength": 1,
                       "pattern": comma_list("|".join(any_case(m) for m in MEDIA_TYPES))},
        "aspect_ratio": {"type": "string", "minLength": 1, "pattern": one_of(ASPECT_RATIOS)},
        "sort": {"type": "string", "minLength": 1, "pattern": one_of(SORTS)},
        "user_location": {"type": "string", "minLength": 2, "pattern": one_of(sorted(COUNTRY_CODES))},
        "since_id": {"type": "string", "minLength": 1, "pattern": "[^ ]"},
        "ids.entity": {"type": "string", "minLength": 1, "pattern": one_of(ENTITIES)},
        "ids.league": {"type": "string", "minLength": 1, "pattern": one_of([*LEAGUES, "ALL"])},
        "ids.reference_id": {"type": "string", "enum": list(REFERENCE_IDS)},
        "ids.lookup": {"type": "string", "minLength": 1, "pattern": "[^ ]"},
    }
