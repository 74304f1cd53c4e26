"""GET /posts as pure functions: parameter validation, mode inference, filters, sort and paging.

Orderings: ``recent`` is newest first; ``top`` is by engagement score; ``trending`` is the
score damped by age (``score / (1 + whole_hours_old / 24)``). Every ordering breaks ties by
created_at, then id, both descending, so pages never overlap or skip. Without ``sort`` the
trending and league modes sort by trending, the other modes by recent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from itertools import islice
from typing import Any, Callable, Optional, Union

from .._vocabulary import (
    ASPECT_RATIOS,
    LIMIT_DEFAULT,
    MAX_LIMIT,
    MAX_PLAYERS,
    MAX_RADIUS_KM,
    MAX_TEAMS,
    RADIUS_DEFAULT_KM,
    SORTS,
)
from ._teams import COUNTRY_CODES
from .errors import ApiError, invalid
from .profile import MODE_PARAMETERS, combined_modes
from .world import GAME_LENGTH, ID_TYPES, PREGAME, SPORTS, Game, Player, Post, Team, World

__all__ = [
    "ASPECT_RATIOS",
    "LIMIT_DEFAULT",
    "MAX_PLAYERS",
    "MAX_TEAMS",
    "MEDIA_TYPES",
    "SORTS",
    "PostsQuery",
    "PostsResult",
    "parse_bool",
    "parse_datetime",
    "parse_posts_query",
    "refuse_combined_modes",
    "run_posts_query",
    "single_values",
]

MEDIA_TYPES: dict[str, frozenset[str]] = {
    "image": frozenset({"image", "photo"}),
    "photo": frozenset({"image", "photo"}),
    "video": frozenset({"video"}),
    "gif": frozenset({"gif", "animated_gif"}),
    "animated_gif": frozenset({"gif", "animated_gif"}),
    "none": frozenset({"none"}),
}
"""Filter values of both documented forms; synonyms (image/photo, gif/animated_gif) match each other."""

SPORT_ALIASES = {"soccer": "football"}
_COUNTRIES = frozenset(code.lower() for code in COUNTRY_CODES)

_DATETIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
    r"(?:([Zz])|([+\- ])(\d{2}):?(\d{2}))?$",
    re.ASCII,
)
_INTEGER = re.compile(r"^ *[+-]?[0-9]+ *$")
_NUMBER = re.compile(r"^ *[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)? *$")
"""Numbers as the document's types say (ASCII digits, spaces around): not Python's wider
``int()``/``float()`` syntax (underscores, other scripts' digits, inf, nan)."""


def parse_datetime(parameter: str, raw: str) -> datetime:
    """ISO 8601 date-time; no offset means UTC; a '+' turned into a space by URL decoding is tolerated."""
    m = _DATETIME.match(raw.strip(" "))
    if not m:
        raise invalid(parameter, f"'{raw}' is not an ISO 8601 date-time")
    year, month, day, hour, minute = (int(m.group(i)) for i in range(1, 6))
    second = int(m.group(6) or 0)
    micro = int((m.group(7) or "0")[:6].ljust(6, "0"))
    tz = timezone.utc
    try:
        if m.group(9):
            sign = -1 if m.group(9) == "-" else 1
            tz = timezone(sign * timedelta(hours=int(m.group(10)), minutes=int(m.group(11))))
        return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz).astimezone(timezone.utc)
    except ValueError as exc:  # a day, hour or offset out of range
        raise invalid(parameter, f"'{raw}' is not a valid date-time ({exc})") from None
    except OverflowError:  # an offset that moves the first or last instant out of the calendar
        raise invalid(parameter, f"'{raw}' in UTC falls outside the calendar (years 1 to 9999)") from None


def shifted(parameter: str, value: datetime, delta: timedelta) -> datetime:
    """``value + delta``, or 400 naming ``parameter`` when that leaves the calendar (years 1 to 9999)."""
    try:
        return value + delta
    except OverflowError:
        raise invalid(parameter, "its window runs past the limits of the calendar (years 1 to 9999)") from None


def parse_bool(parameter: str, raw: str) -> bool:
    """true/false (also 1/0, yes/no), case-insensitive."""
    value = raw.strip(" ").lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise invalid(parameter, f"'{raw}' is not a boolean (true or false)")


def _number(parameter: str, raw: str) -> float:
    value = float(raw) if _NUMBER.match(raw) else math.nan
    if math.isnan(value) or math.isinf(value):
        raise invalid(parameter, f"'{raw}' is not a finite number")
    return value


def _integer(parameter: str, raw: str) -> int:
    if not _INTEGER.match(raw):
        raise invalid(parameter, f"'{raw}' is not an integer")
    return int(raw)


def _csv(parameter: str, raw: str, at_most: Optional[int] = None, what: str = "values") -> list[str]:
    """Comma-separated values, spaces around each ignored; none may be empty."""
    values = [v.strip(" ") for v in raw.split(",")]
    if not all(values):
        raise invalid(parameter, "must not be empty" if len(values) == 1 else "has an empty value between commas")
    if at_most is not None and len(values) > at_most:
        raise invalid(parameter, f"at most {at_most} {what} per request, got {len(values)}")
    return values


def choice(parameter: str, raw: str, choices: Collection[str], known: str = "") -> str:
    """``raw`` lower-cased if it is one of ``choices``; else 400 listing them (or ``known``)."""
    value = raw.strip(" ").lower()
    # Only ASCII folds to the documented forms: 'ſ'.upper() is 'S', which the document would reject.
    if not value.isascii() or value not in choices:
        raise invalid(parameter, f"'{raw}' is not one of {known or ', '.join(choices)}")
    return value


_Range = tuple[Callable[[str, str], Any], Callable[[Any], bool], str]
_RANGES: dict[str, _Range] = {
    "lat": (_number, lambda v: -90.0 <= v <= 90.0, "must be between -90 and 90"),
    "lng": (_number, lambda v: -180.0 <= v <= 180.0, "must be between -180 and 180"),
    "radius_km": (_number, lambda v: 0.0 < v <= MAX_RADIUS_KM, f"must be greater than 0 and at most {MAX_RADIUS_KM:g}"),
    "min_score": (_number, lambda v: 0.0 <= v <= 9.0, "must be between 0 and 9"),
    "min_duration": (_integer, lambda v: v >= 0, "must be a non-negative number of milliseconds"),
    "limit": (_integer, lambda v: 1 <= v <= MAX_LIMIT, f"must be between 1 and {MAX_LIMIT}"),
    "page": (_integer, lambda v: v >= 1, "must be 1 or greater"),
}
"""The numeric parameters: how each parses and the range it must fall in."""

LIST_PARAMETERS = frozenset({"leagues", "league", "sports", "teams", "players", "media_type"})
"""Comma-separated parameters: given more than once, their values combine as if comma-joined."""


def single_values(items: Iterable[tuple[str, str]], lists: Collection[str] = LIST_PARAMETERS) -> dict[str, str]:
    """The query as one value per name: repeats of a list parameter join with commas, others are 400."""
    merged: dict[str, str] = {}
    for name, value in items:
        if name not in merged:
            merged[name] = value
        elif name in lists:
            merged[name] = f"{merged[name]},{value}"
        else:
            raise invalid(name, "given more than once (only comma-separated list parameters may repeat)")
    return merged


def parse_leagues(parameter: str, raw: str, known: Mapping[str, Any]) -> frozenset[str]:
    """Comma-separated league codes or ALL, case-insensitive."""
    codes: set[str] = set()
    for value in _csv(parameter, raw):
        code = value.upper() if value.isascii() else value
        if code == "ALL":
            codes.update(known)
        elif code in known:
            codes.add(code)
        else:
            raise invalid(parameter, f"unknown league code '{value}' (known: {', '.join(known)}, ALL)")
    return frozenset(codes)


def parse_sports(raw: str) -> frozenset[str]:
    """Comma-separated parent sports, case-insensitive, soccer an alias of football; returns league codes."""
    codes: set[str] = set()
    for value in _csv("sports", raw):
        word = value.lower() if value.isascii() else value
        sport = SPORT_ALIASES.get(word, word)
        if sport not in SPORTS:
            raise invalid("sports", f"unknown sport '{value}' (known: {', '.join(SPORTS)}, soccer)")
        codes.update(SPORTS[sport])
    return frozenset(codes)


@dataclass
class PostsQuery:
    """A validated GET /posts request."""

    mode: str
    leagues: Optional[frozenset[str]] = None
    teams: Optional[list[str]] = None
    players: Optional[list[str]] = None
    id_type: Optional[str] = None
    match: Optional[tuple[str, str]] = None
    start_time: Optional[datetime] = None
    include_pregame: bool = False
    lat: Optional[float] = None
    lng: Optional[float] = None
    radius_km: float = RADIUS_DEFAULT_KM
    media_type: Optional[frozenset[str]] = None
    aspect_ratio: Optional[str] = None
    min_score: Optional[float] = None
    min_duration: Optional[int] = None
    highlight: bool = False
    has_player: bool = False
    custom_sources: bool = False
    user_location: Optional[str] = None
    sort: Optional[str] = None
    since: Optional[datetime] = None
    since_id: Optional[str] = None
    limit: int = LIMIT_DEFAULT
    page: int = 1
    all_leagues: bool = False
    window: Optional[tuple[datetime, datetime]] = None
    """The game mode's created_at window [start, end): pregame included if asked."""

    @property
    def effective_sort(self) -> str:
        """``sort`` if given, else trending in the trending and league modes, recent otherwise."""
        if self.sort:
            return self.sort
        return "trending" if self.mode in ("trending", "league") else "recent"


def _parse_selection(p: Mapping[str, str], q: PostsQuery, known_leagues: Mapping[str, Any]) -> None:
    """leagues/league/sports, teams/players with id_type, match with start_time."""
    leagues: Optional[frozenset[str]] = None
    for name in ("leagues", "league"):
        if name in p:
            parsed = parse_leagues(name, p[name], known_leagues)
            q.all_leagues = q.all_leagues or "ALL" in (v.strip(" ").upper() for v in p[name].split(","))
            leagues = parsed if leagues is None else leagues | parsed
    if "sports" in p:
        by_sport = parse_sports(p["sports"])
        leagues = by_sport if leagues is None else leagues | by_sport
    q.leagues = leagues

    if "id_type" in p:
        q.id_type = choice("id_type", p["id_type"], ID_TYPES)
    for name, at_most in (("teams", MAX_TEAMS), ("players", MAX_PLAYERS)):
        if name in p:
            setattr(q, name, _csv(name, p[name], at_most, f"{name[:-1]} ids"))
            if q.id_type is None:
                raise invalid("id_type", f"required when {name} is given")

    if "start_time" in p:
        q.start_time = parse_datetime("start_time", p["start_time"])
    if "match" in p:
        ids = [v.strip(" ") for v in p["match"].split(",")]
        if len(ids) != 2 or not all(ids):
            raise invalid("match", "must be exactly two team ids: teamA,teamB")
        q.match = (ids[0], ids[1])
        if q.start_time is None:
            raise invalid("start_time", "required when match is given")
    if "include_pregame" in p:
        q.include_pregame = parse_bool("include_pregame", p["include_pregame"])
    if q.match is not None and q.start_time is not None:
        first = shifted("start_time", q.start_time, -PREGAME) if q.include_pregame else q.start_time
        q.window = (first, shifted("start_time", q.start_time, GAME_LENGTH))


def refuse_combined_modes(names: Collection[str]) -> None:
    """400 when parameters of several modes (or ``start_time`` without ``match``) are given.

    The specification does not show what the service does with such a request, so the strict
    profile answers none of the possible ways: a client must not come to rely on one.
    """
    modes = combined_modes(names)
    if len(modes) > 1:
        sent = ", ".join(n for mode in modes for n in MODE_PARAMETERS[mode] if n in names)
        second = next(n for n in MODE_PARAMETERS[modes[1]] if n in names)
        raise invalid(second, f"parameters of several modes combined ({sent}: the {' and '.join(modes)} modes); "
                      "the service's behaviour for such a combination is not defined, "
                      "send the parameters of one mode per request")
    if "start_time" in names and "match" not in names:
        raise invalid("start_time", "given without match; its behaviour alone is not defined "
                      "(match and start_time together select game mode)")


def parse_posts_query(
    params: Mapping[str, str], known_leagues: Mapping[str, Any], *, strict: bool = False
) -> PostsQuery:
    """Validate every parameter of spec 4.1 and infer the mode; raises 400 INVALID_PARAMETER.

    ``strict`` refuses what the strict profile refuses (``refuse_combined_modes``).
    """
    p = dict(params.items())
    if strict:
        refuse_combined_modes(p.keys())
    q = PostsQuery(mode="trending")
    _parse_selection(p, q, known_leagues)

    for name, (parse, in_range, rule) in _RANGES.items():
        if name in p:
            value = parse(name, p[name])
            if not in_range(value):
                raise invalid(name, rule)
            setattr(q, name, value)
    if (q.lat is None) != (q.lng is None):
        raise invalid("lng" if q.lng is None else "lat", "lat and lng must be given together")

    if "media_type" in p:
        kinds: set[str] = set()
        for value in _csv("media_type", p["media_type"]):
            kinds |= MEDIA_TYPES[choice("media_type", value, MEDIA_TYPES)]
        q.media_type = frozenset(kinds)
    if "aspect_ratio" in p:
        q.aspect_ratio = choice("aspect_ratio", p["aspect_ratio"], ASPECT_RATIOS)
    for flag in ("highlight", "has_player", "custom_sources"):
        if flag in p:
            setattr(q, flag, parse_bool(flag, p[flag]))
    if "user_location" in p:
        q.user_location = choice("user_location", p["user_location"], _COUNTRIES,
                                  "an ISO 3166-1 alpha-2 country code").upper()
    if "sort" in p:
        q.sort = choice("sort", p["sort"], SORTS)
    if "since" in p:
        q.since = parse_datetime("since", p["since"])
    if "since_id" in p:
        q.since_id = p["since_id"].strip(" ")
        if not q.since_id:
            raise invalid("since_id", "must not be empty")

    if q.teams is not None:
        q.mode = "team"
    elif q.players is not None:
        q.mode = "player"
    elif q.lat is not None:
        q.mode = "nearby"
    elif q.match is not None:
        q.mode = "game"
    elif q.sort == "trending" or q.leagues is None:
        q.mode = "trending"
    else:
        q.mode = "league"
    return q


class PostsResult:
    """A page of posts and the pagination object of spec 2.4."""

    def __init__(self, items: list[Post], page: int, limit: int, has_next: bool, count: Callable[[], int]) -> None:
        self.items = items
        self.page = page
        self.limit = limit
        self.has_next = has_next
        self.has_prev: bool = page > 1
        self._count = count

    @property
    def total(self) -> int:
        """Every post the query matches (walks them all: for tests, not for answers)."""
        return self._count()

    def pagination(self) -> dict[str, Any]:
        """The pagination object of the answer."""
        return {"page": self.page, "limit": self.limit, "has_next": self.has_next, "has_prev": self.has_prev}


def _haversine_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    r = 6371.0088
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(min(1.0, math.sqrt(a)))


def _forbidden(leagues: set[str]) -> ApiError:
    names = ", ".join(sorted(leagues))
    return ApiError(403, "FORBIDDEN", f"League not included in your plan: {names}")


def _resolve(
    world: World, kind: str, id_type: Optional[str], ids: list[str], within: Optional[frozenset[str]]
) -> list[Any]:
    """The teams or players that ``ids`` name, only those of the leagues ``within`` if given."""
    finder: Callable[[str, str], list[Any]] = world.find_teams if kind == "teams" else world.find_players
    found: dict[int, Any] = {}
    for value in ids:
        for id_system in [id_type] if id_type else list(ID_TYPES):
            for entity in finder(id_system, value):
                found[entity.service_id] = entity
    return [e for e in found.values() if within is None or e.league in within]


def _leagues_of(entities: Sequence[Union[Team, Player]], allowed: frozenset[str]) -> frozenset[str]:
    """The leagues of the tagged ``entities``; 403 if one of them is not on the plan."""
    leagues = frozenset(e.league for e in entities)
    if leagues - allowed:
        raise _forbidden(set(leagues - allowed))
    return leagues


def _filter(
    q: PostsQuery, now: datetime, teams: Optional[list[Team]], players: Optional[list[Player]],
    reference: Optional[Post], window: Optional[tuple[datetime, datetime]],
    games: Optional[list[Game]] = None,
) -> Callable[[Post], bool]:
    """Whether a post matches ``q`` at ``now``: visible, then only the checks ``q`` asks for.

    Each check is built once per query and only when its parameter is given, so a post is
    not put through a dozen "is this filter set?" tests (a page reads tens to hundreds).
    """
    checks: list[Callable[[Post], bool]] = []
    add = checks.append
    if games is not None:
        of_games = {id(g) for g in games}
        add(lambda post: post.game is not None and id(post.game) in of_games)
    elif teams is not None:
        team_ids = {t.service_id for t in teams}
        add(lambda post: any(t.service_id in team_ids for t in post.teams))
    if players is not None:
        player_ids = {p.service_id for p in players}
        add(lambda post: any(p.service_id in player_ids for p in post.players))
    if window is not None:
        first, end = window
        add(lambda post: first <= post.created_at < end)
    if q.mode == "nearby":
        lat, lng, radius = q.lat, q.lng, q.radius_km
        if lat is None or lng is None:
            return lambda post: False
        add(lambda post: post.geo is not None and _haversine_km(lat, lng, post.geo[0], post.geo[1]) <= radius)
    if q.media_type is not None:
        kinds = q.media_type
        add(lambda post: post.media_type in kinds)
    if q.aspect_ratio is not None:
        ratio = q.aspect_ratio
        add(lambda post: post.aspect_ratio == ratio)
    if q.min_score is not None:
        min_score = q.min_score
        add(lambda post: post.score >= min_score)
    if q.min_duration is not None:
        min_duration = q.min_duration
        add(lambda post: post.media_type != "none" and post.max_duration_ms >= min_duration)
    if q.highlight:
        add(lambda post: post.highlight)
    if q.has_player:
        add(lambda post: bool(post.players))
    if not q.custom_sources:
        add(lambda post: not post.author.custom)
    if q.user_location is not None:
        country = q.user_location
        add(lambda post: country in post.author.regions)
    if q.since is not None:
        since = q.since
        add(lambda post: post.created_at > since)
    if reference is not None:
        after = reference.key
        add(lambda post: post.key > after)

    def keep(post: Post) -> bool:
        if not post.visible_at(now):
            return False
        for check in checks:  # noqa: SIM110 - all() would build a generator per post
            if not check(post):
                return False
        return True

    return keep


def _games(world: World, teams: Sequence[Team], start_time: Optional[datetime]) -> list[Game]:
    """The scheduled games between two of ``teams`` (one per id in ``match``) that start at ``start_time``."""
    ids = {t.service_id for t in teams}
    return [g for g in world.games
            if g.start_time == start_time and g.home.service_id in ids and g.away.service_id in ids]


def run_posts_query(
    world: World, q: PostsQuery, now: datetime, allowed: Optional[frozenset[str]] = None,
    *, games_exact: bool = False,
) -> PostsResult:
    """Answer a validated query at sandbox time ``now`` for a key allowed ``allowed`` leagues.

    With ``games_exact``, game mode returns the posts of the game scheduled between the two
    teams at exactly ``start_time`` (none if no such game was played); without it, any post
    tagged with either team inside the game's time window.
    """
    every = world.league_codes
    allowed = every if allowed is None else allowed
    if q.leagues is not None:
        # ALL means every league of the plan; a league named explicitly must be on the plan.
        outside = set(q.leagues - allowed)
        if outside and not q.all_leagues:
            raise _forbidden(outside)
    leagues = (q.leagues if q.leagues is not None else every) & allowed

    teams: Optional[list[Team]] = None
    players: Optional[list[Player]] = None
    games: list[Game] = []
    if q.mode == "team" and q.teams is not None:
        teams = _resolve(world, "teams", q.id_type, q.teams, q.leagues)
        if not teams:
            raise ApiError(404, "NOT_FOUND", f"No teams matched the given ids ({q.id_type})")
        leagues = _leagues_of(teams, allowed)
    elif q.mode == "player" and q.players is not None:
        players = _resolve(world, "players", q.id_type, q.players, q.leagues)
        if not players:
            raise ApiError(404, "NOT_FOUND", f"No players matched the given ids ({q.id_type})")
        leagues = _leagues_of(players, allowed)
    elif q.mode == "game" and q.match is not None:
        teams = []
        for value in q.match:
            matched = _resolve(world, "teams", q.id_type, [value], q.leagues)
            if not matched:
                raise ApiError(404, "NOT_FOUND", f"No team matched the id '{value}' in match")
            teams.extend(matched)
        leagues = _leagues_of(teams, allowed)
        if games_exact:
            games = _games(world, teams, q.start_time)
            leagues = frozenset(g.league for g in games)

    reference: Optional[Post] = None
    if q.since_id is not None:
        reference = world.get_post(q.since_id)
        if reference is None or not reference.visible_at(now):
            raise ApiError(400, "SINCE_ID_NOT_FOUND",
                           f"The since_id post '{q.since_id}' is unavailable; drop since_id and retry")

    window = q.window if q.mode == "game" else None
    keep = _filter(q, now, teams, players, reference, window, games if games_exact and q.mode == "game" else None)
    # Posts created before `floor` can never match: the ordered streams stop (or skip) there.
    floors = [d for d in (q.since, reference.created_at if reference else None, window[0] if window else None) if d]
    floor = max(floors) if floors else None
    sort = q.effective_sort

    def ordered() -> Iterator[Post]:
        if sort == "top":
            return world.index.top_first(leagues, keep)
        if sort == "trending":
            return world.index.trending_first(leagues, keep, now, floor)
        return world.index.newest_first(leagues, keep, window[1] if window else None, floor, q.highlight)

    start = (q.page - 1) * q.limit
    with world.lock:
        world.sync(now)
        first = list(islice(ordered(), start + q.limit + 1))

    def count() -> int:
        with world.lock:
            return sum(1 for _ in ordered())

    return PostsResult(first[start:start + q.limit], q.page, q.limit, len(first) > start + q.limit, count)
