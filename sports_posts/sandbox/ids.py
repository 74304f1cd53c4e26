"""GET /ids as a pure function: teams per spec 2.8, players, leagues and posts in the same envelope."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Optional

from .errors import ApiError, invalid
from .query import choice
from .world import REFERENCE_IDS, World, isoformat

__all__ = ["ENTITIES", "MAX_ITEMS", "ids_response"]

ENTITIES = ("teams", "players", "leagues", "posts")
MAX_ITEMS = 1000
"""Spec 4.4: up to 1,000 items per call."""


def _key(references: Mapping[str, Optional[str]], reference_id: Optional[str], service_id: int) -> str:
    """What ``lookup`` is matched against: the reference column if given (None never matches), else service_id."""
    if reference_id is None:
        return str(service_id)
    value = references.get(reference_id)
    return "\x00" if value is None else value


def _add_reference(item: dict[str, Any], references: Mapping[str, Optional[str]], reference_id: Optional[str]) -> None:
    """The reference column, a string (spec 2.8); an entity without that id has no such key, never null."""
    if reference_id is not None:
        value = references.get(reference_id)
        if value is not None:
            item[reference_id] = value


def ids_response(
    world: World, params: Mapping[str, str], now: datetime, allowed: Optional[frozenset[str]] = None
) -> dict[str, Any]:
    """The envelope ``ok``/``count``/``items`` for one entity of one league."""
    if not params.get("entity", "").strip(" "):
        raise invalid("entity", f"required (one of {', '.join(ENTITIES)})")
    entity = choice("entity", params["entity"], ENTITIES)
    raw_league = params.get("league", params.get("leagues", "")).strip(" ")
    if not raw_league:
        raise invalid("league", "required")
    raw_league = raw_league.upper() if raw_league.isascii() else raw_league
    allowed = world.league_codes if allowed is None else allowed
    if raw_league == "ALL" and entity == "leagues":
        leagues = sorted(allowed)
    elif raw_league not in world.leagues:
        raise invalid("league", f"unknown league code '{params.get('league')}'")
    elif raw_league not in allowed:
        raise ApiError(403, "FORBIDDEN", f"League not included in your plan: {raw_league}")
    else:
        leagues = [raw_league]
    reference_id = params.get("reference_id")
    if reference_id is not None and reference_id not in REFERENCE_IDS:
        raise invalid("reference_id", f"unknown reference column '{reference_id}' (known: {', '.join(REFERENCE_IDS)})")
    lookup = params.get("lookup")

    items: list[dict[str, Any]] = []
    keys: list[str] = []
    if entity == "teams":
        for team in sorted(world.league_teams(leagues[0]), key=lambda t: (t.location, t.name)):
            item: dict[str, Any] = {
                "service_id": team.service_id, "location": team.location, "name": team.name,
                "conference": team.conference, "division": team.division, "league": team.league,
            }
            _add_reference(item, team.references, reference_id)
            items.append(item)
            keys.append(_key(team.references, reference_id, team.service_id))
    elif entity == "players":
        for player in sorted(world.league_players(leagues[0]), key=lambda p: (p.name, p.service_id)):
            item = {
                "service_id": player.service_id, "provider1_guid_id": player.provider1_guid,
                "name": player.name, "position": player.position, "league": player.league,
                "team_service_id": player.team.service_id if player.team else None,
                "team_name": player.team.full_name if player.team else None,
            }
            _add_reference(item, player.references, reference_id)
            items.append(item)
            keys.append(_key(player.references, reference_id, player.service_id))
    elif entity == "leagues":
        for code in leagues:
            league = world.leagues[code]
            items.append({
                "code": code, "name": league.name, "sport": league.sport,
                "team_count": len(world.league_teams(code)),
                "player_count": len(world.league_players(code)),
            })
            keys.append(code)
    else:
        posts = world.visible_posts(now, league=leagues[0])
        for post in reversed(posts[-MAX_ITEMS:]):
            items.append({"id": post.id, "league": post.league, "created_at": isoformat(post.created_at),
                          "post_url": post.post_url})
            keys.append(post.id)

    if lookup is not None:
        wanted = lookup.strip(" ")
        items = [item for item, key in zip(items, keys) if key.lower() == wanted.lower()]
        if not items:
            raise ApiError(404, "NOT_FOUND", f"No {entity} matched lookup '{wanted}'")
    items = items[:MAX_ITEMS]
    return {"ok": True, "count": len(items), "items": items}
