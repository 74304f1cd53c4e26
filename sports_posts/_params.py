"""Query parameters of GET /posts: their types, how they encode, and the checks made
before anything is sent (API.md "Checked before anything is sent").

Pure functions: a bad argument raises ``ParameterError`` naming the parameter, and
no request exists yet, so nothing is spent.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Callable, Literal, Optional, Union

from pydantic_core import SchemaValidator, ValidationError, core_schema
from typing_extensions import TypedDict

from ._errors import ParameterError
from ._vocabulary import (
    ASPECT_RATIOS,
    COUNTRIES,
    ID_TYPES,
    LEAGUES,
    MAX_LIMIT,
    MAX_PLAYERS,
    MAX_RADIUS_KM,
    MAX_TEAMS,
    MEDIA_TYPES,
    MODE_PARAMETERS,
    RESERVED_COUNTRIES,
    SORTS,
    SPORTS,
    AspectRatio,
    IdType,
    LeagueCode,
    MediaTypeFilter,
    Sort,
    modes_given,
    near_id_type,
)

__all__ = [
    "ASPECT_RATIOS",
    "COUNTRIES",
    "CSV",
    "DateTimeLike",
    "IdType",
    "ID_TYPES",
    "Entity",
    "IdsLookup",
    "LeagueCode",
    "PollFilters",
    "PostFilters",
    "PostsListParams",
    "ReferenceId",
    "SORTS",
    "LEAGUES",
    "MEDIA_TYPES",
    "SPORTS",
    "Unchecked",
    "encode_datetime",
    "encode_ids_params",
    "encode_posts_params",
]



class Unchecked(str):
    """A value sent as given, past the SDK's list of known values: a league code, media
    type, ``id_type`` or ``user_location`` the service added after this release
    (``leagues=Unchecked("XFL")``, ``id_type=Unchecked("provider9")``).

    Only the vocabulary check is skipped: control characters and commas inside a list item
    are still refused, and a value the service does not know is a billed 400."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Unchecked({str.__repr__(self)})"

CSV = Union[str, Sequence[Union[str, int]]]
"""A comma-separated parameter: ``"NFL,NBA"`` or ``["NFL", "NBA"]``."""

DateTimeLike = Union[datetime, str]
"""An aware ``datetime`` or an ISO 8601 string with an offset; sent in UTC."""

Number = Union[int, float]


class _Narrowing(TypedDict, total=False):
    """Parameters that narrow any mode and that a poller also carries."""

    leagues: Optional[CSV]
    league: Optional[CSV]
    sports: Optional[CSV]
    media_type: Optional[MediaTypeFilter]
    aspect_ratio: Optional[AspectRatio]
    min_score: Optional[Number]
    min_duration: Optional[int]
    highlight: Optional[bool]
    has_player: Optional[bool]
    custom_sources: Optional[bool]
    user_location: Optional[str]
    limit: Optional[int]


class _ModeParams(TypedDict, total=False):
    """Parameters that select the team, player, game or nearby mode (spec 4.1)."""

    teams: Optional[CSV]
    players: Optional[CSV]
    id_type: Optional[IdType]
    match: Optional[Union[str, Sequence[Union[str, int]]]]
    start_time: Optional[DateTimeLike]
    include_pregame: Optional[bool]
    lat: Optional[Number]
    lng: Optional[Number]
    radius_km: Optional[Number]


Entity = Union[Literal["teams", "players", "leagues", "posts"], str]
"""What GET /ids looks up."""
ReferenceId = Union[
    Literal[
        "provider2_id", "provider1_id", "provider4_id", "nba_id", "provider5_id", "provider6_id",
        "grid_id", "code", "external_id",
    ],
    str,
]
"""External id systems GET /ids can add as a column."""


class IdsLookup(TypedDict, total=False):
    """The optional parameters of GET /ids, declared once for both clients."""

    reference_id: Optional[ReferenceId]
    """Adds this external id to every item (``Team.reference``)."""
    lookup: Optional[Union[str, int]]
    """Only the one item matching this value (of ``reference_id`` if given, else ``service_id``)."""


class PostFilters(_Narrowing, total=False):
    """Parameters of GET /posts that narrow any mode (the mode helpers take these).

    Every value may be ``None``, which means "not sent"."""

    sort: Optional[Sort]
    since: Optional[DateTimeLike]
    since_id: Optional[str]
    page: Optional[int]


class PostsListParams(PostFilters, _ModeParams, total=False):
    """Every query parameter of GET /posts (spec 4.1), plus ``league`` as an alias."""


class PollFilters(_Narrowing, _ModeParams, total=False):
    """Every parameter of GET /posts except ``since``, ``since_id``, ``page`` and ``sort``,
    which the poller sets itself (passing them is a [`ParameterError`][sports_posts.ParameterError])."""


_INT64 = 2**63
_DATETIME = SchemaValidator(core_schema.datetime_schema())
"""pydantic's own ISO 8601 parser (pydantic-core alone: importing pydantic's models costs more)."""
# C0 and C1 controls (CR/LF split headers and logs), line separators and lone surrogates
# (which cannot be encoded at all): none belongs in a query value.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _shown(value: Any) -> str:
    """A caller's value for an error message, cut short: a 1 MB string stays out of logs."""
    try:
        text = repr(value)
    except Exception:  # an int past the digit limit, or a repr that raises
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def _text(name: str, value: str) -> str:
    """``value`` as a plain ``str``, refused when it holds a control character."""
    found = _CONTROL.search(value)
    if found:
        raise ParameterError(
            f"{name}: control character {found.group()!r} in {_shown(value)}", parameter=name
        )
    return str.__str__(value)  # a str subclass (an enum member) as its value


def _csv(name: str, value: Any) -> list[str]:
    if isinstance(value, str):
        parts = _text(name, value).split(",")
    elif isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        parts = []
        for item in value:
            if isinstance(item, bool) or not isinstance(item, (str, int)):
                raise ParameterError(
                    f"{name}: every item must be a string or an integer, got {type(item).__name__}",
                    parameter=name,
                )
            text = _text(name, item) if isinstance(item, str) else str(_integer(name, item))
            if "," in text:
                raise ParameterError(
                    f"{name}: the item {_shown(text)} holds a comma, which separates items on "
                    "the wire; pass each value as its own item",
                    parameter=name,
                )
            parts.append(text)
    else:
        raise ParameterError(
            f"{name}: expected a comma-separated string or a sequence of strings, "
            f"got {type(value).__name__}",
            parameter=name,
        )
    items = list(map(str.strip, parts))
    if not items or not all(items):
        raise ParameterError(f"{name}: empty value in {_shown(value)}", parameter=name)
    return items


def _string(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ParameterError(
            f"{name}: expected a non-empty string, got {_shown(value)}", parameter=name
        )
    return _text(name, value).strip()


def _bool(name: str, value: Any) -> str:
    if not isinstance(value, bool):
        raise ParameterError(f"{name}: expected True or False, got {_shown(value)}", parameter=name)
    return "true" if value else "false"


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterError(f"{name}: expected a number, got {_shown(value)}", parameter=name)
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise ParameterError(
            f"{name}: expected a finite number, got {_shown(value)}", parameter=name
        )
    return number


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(f"{name}: expected an integer, got {_shown(value)}", parameter=name)
    if not -_INT64 <= value < _INT64:
        raise ParameterError(f"{name}: {_shown(value)} is not a 64-bit integer", parameter=name)
    return int(value)


def _format_number(value: float) -> str:
    """Whole numbers without a decimal point (``50``, not ``50.0``: the real parameter table
    types ``radius_km`` as an integer); fractions as Python writes them."""
    return str(int(value)) if value.is_integer() else repr(value)


def encode_datetime(name: str, value: Any) -> str:
    """An aware ``datetime`` or an ISO 8601 string with an offset, as ISO 8601 UTC (``Z``)."""
    if isinstance(value, str):
        try:
            parsed: datetime = _DATETIME.validate_python(value.strip())
        except ValidationError:
            raise ParameterError(
                f"{name}: {value!r} is not an ISO 8601 date-time", parameter=name
            ) from None
    elif isinstance(value, datetime):
        parsed = value
    else:
        raise ParameterError(
            f"{name}: expected an aware datetime or an ISO 8601 string, got {type(value).__name__}",
            parameter=name,
        )
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise ParameterError(
            f"{name}: {value!r} has no UTC offset; pass an aware datetime "
            "(datetime.now(timezone.utc)) or a string ending in Z or +00:00",
            parameter=name,
        )
    text = parsed.astimezone(timezone.utc).replace(tzinfo=None).isoformat()
    return text + "Z"


def _check_range(name: str, value: float, low: float, high: float, *, low_open: bool = False) -> None:
    if value < low or value > high or (low_open and value == low):
        bracket = "(" if low_open else "["
        raise ParameterError(
            f"{name}: {value:g} is outside {bracket}{low:g}, {high:g}]", parameter=name
        )


# How each parameter encodes, in the order of spec 4.1 (which is also the order sent).
_Encoder = Callable[[str, Any], str]


def _enc_csv(name: str, value: Any) -> str:
    return ",".join(_csv(name, value))


def _enc_number(name: str, value: Any) -> str:
    return _format_number(_number(name, value))


def _enc_int(name: str, value: Any) -> str:
    return str(_integer(name, value))


def _choice(allowed: tuple[str, ...]) -> _Encoder:
    """The encoder of a parameter whose values the specification closes."""

    def encode(name: str, value: Any) -> str:
        text = _string(name, value)
        if text not in allowed:
            raise ParameterError(
                f"{name}: {_shown(value)} is not one of {', '.join(allowed)}", parameter=name
            )
        return text

    return encode


def _enc_sports(name: str, value: Any) -> str:
    """Comma-separated parent sports, case-insensitive as on the service; sent as given."""
    items = _csv(name, value)
    for item in items:
        if item.lower() not in SPORTS:
            raise ParameterError(
                f"{name}: {_shown(item)} is not a sport of the specification "
                f"({', '.join(SPORTS)}; soccer is football)",
                parameter=name,
            )
    return ",".join(items)


def _unknown(name: str, value: str, known: tuple[str, ...], what: str) -> ParameterError:
    """The error of a value outside ``known``, with the near miss it probably meant."""
    folded = value.upper() if known is LEAGUES else value.lower()
    close = difflib.get_close_matches(folded, known, n=1, cutoff=0.6)
    guess = f"; did you mean {close[0]!r}?" if close else "."
    return ParameterError(
        f"{name}: {_shown(value)} is not {what} the SDK knows{guess} Known: {', '.join(known)}. "
        f"To send a value the service added after this release, wrap it: Unchecked({_shown(value)})",
        parameter=name,
    )


def _enc_leagues(name: str, value: Any) -> str:
    """League codes, any case, each checked unless it (or the whole value) is ``Unchecked``;
    sent as given."""
    items = _csv(name, value)
    if isinstance(value, Unchecked):
        return ",".join(items)
    if isinstance(value, str):
        for item in items:
            if item.upper() not in _LEAGUE_CODES:
                raise _unknown(name, item, LEAGUES, "a league code")
        return ",".join(items)
    # _csv makes one item of each item of a sequence, in order
    for item, given in zip(items, value):
        if not isinstance(given, Unchecked) and item.upper() not in _LEAGUE_CODES:
            raise _unknown(name, item, LEAGUES, "a league code")
    return ",".join(items)


_LEAGUE_CODES = frozenset(LEAGUES)


def _enc_media_type(name: str, value: Any) -> str:
    text = _string(name, value)
    if text not in MEDIA_TYPES and not isinstance(value, Unchecked):
        raise _unknown(name, text, MEDIA_TYPES, "a media type")
    return text


def _enc_id_type(name: str, value: Any) -> str:
    """An id system, open-ended as the specification says; a near miss of a known one is
    refused with what it probably meant, unless it is ``Unchecked``."""
    text = _string(name, value)
    guess = None if isinstance(value, Unchecked) else near_id_type(text)
    if guess is not None:
        raise ParameterError(
            f"{name}: {_shown(text)} is not an id_type the SDK knows; did you mean {guess!r}? "
            f"Known: {', '.join(ID_TYPES)}. The list is open: to send this value as it is, "
            f"wrap it: Unchecked({_shown(text)})",
            parameter=name,
        )
    return text


def _enc_user_location(name: str, value: Any) -> str:
    """An ISO 3166-1 alpha-2 country code, any case, sent upper case; one of the assigned
    codes unless it is ``Unchecked``."""
    text = _string(name, value)
    code = text.upper()
    if not (len(code) == 2 and code.isascii() and code.isalpha()):
        raise ParameterError(
            f"{name}: an ISO 3166-1 alpha-2 country code (two letters, such as 'US' or 'GB'), "
            f"got {_shown(value)}",
            parameter=name,
        )
    if code not in COUNTRIES and not isinstance(value, Unchecked):
        if code in RESERVED_COUNTRIES:
            meant = RESERVED_COUNTRIES[code]
            hint = f"; did you mean {meant!r}?" if meant else "."
            why = "is reserved, not assigned, in ISO 3166-1"
        else:
            hint, why = ".", "is not an assigned ISO 3166-1 alpha-2 country code"
        raise ParameterError(
            f"{name}: {_shown(text)} {why}{hint} To send a code assigned after this release, "
            f"wrap it: Unchecked({_shown(text)})",
            parameter=name,
        )
    return code


_ENCODERS: dict[str, _Encoder] = {
    "leagues": _enc_leagues,
    "league": _enc_leagues,
    "sports": _enc_sports,
    "teams": _enc_csv,
    "players": _enc_csv,
    "id_type": _enc_id_type,
    "match": _enc_csv,
    "start_time": encode_datetime,
    "include_pregame": _bool,
    "lat": _enc_number,
    "lng": _enc_number,
    "radius_km": _enc_number,
    "media_type": _enc_media_type,
    "aspect_ratio": _choice(ASPECT_RATIOS),
    "min_score": _enc_number,
    "min_duration": _enc_int,
    "highlight": _bool,
    "has_player": _bool,
    "custom_sources": _bool,
    "user_location": _enc_user_location,
    "sort": _choice(SORTS),
    "since": encode_datetime,
    "since_id": _string,
    "limit": _enc_int,
    "page": _enc_int,
}
POSTS_PARAMETERS = frozenset(_ENCODERS)
_ORDER = {name: i for i, name in enumerate(_ENCODERS)}


def encode_posts_params(params: Mapping[str, Any]) -> dict[str, str]:
    """Check and encode the keyword arguments of ``posts.list`` into query parameters.

    ``None`` means "not sent". Raises ``ParameterError`` for anything the
    specification rules out, naming the parameter.
    """
    _refuse_unknown("GET /posts", params, POSTS_PARAMETERS)
    given = {k: v for k, v in params.items() if v is not None}
    if "league" in given and "leagues" in given:
        # Each is sent under its own name (the service accepts both); sending both would
        # leave the service to choose between them.
        raise ParameterError(
            "league and leagues are two spellings of one parameter; pass only one",
            parameter="league",
        )
    _check(given)
    query: dict[str, str] = {}
    for name in sorted(given, key=_ORDER.__getitem__):  # the wire order: the table's
        query[name] = _ENCODERS[name](name, given[name])
    return query


def _refuse_unknown(endpoint: str, params: Mapping[str, Any], known: frozenset[str]) -> None:
    if params.keys() <= known:
        return
    unknown = sorted(str(k) for k in params if k not in known)
    if unknown:
        raise ParameterError(
            f"unknown parameter(s) for {endpoint}: {', '.join(_shown(k) for k in unknown[:5])}",
            parameter=unknown[0][:60],
        )


def _check(given: Mapping[str, Any]) -> None:
    """The cross-parameter rules of spec 4.1 and 8 that the SDK can check locally."""
    if not given.keys().isdisjoint(_MODE_NAMES):
        _check_modes(given)
    if "radius_km" in given:
        _check_range(
            "radius_km", _number("radius_km", given["radius_km"]), 0, MAX_RADIUS_KM, low_open=True
        )
    if "min_score" in given:
        _check_range("min_score", _number("min_score", given["min_score"]), 0, 9)
    if "min_duration" in given and _integer("min_duration", given["min_duration"]) < 0:
        raise ParameterError("min_duration: must be 0 or more milliseconds", parameter="min_duration")
    if "limit" in given:
        _check_range("limit", _integer("limit", given["limit"]), 1, MAX_LIMIT)
    if "page" in given and _integer("page", given["page"]) < 1:
        raise ParameterError("page: must be 1 or more", parameter="page")


_MODE_NAMES = frozenset(name for names in MODE_PARAMETERS.values() for name in names)
"""The parameters of the mode rules below: a request with none of them has no mode to check."""


def _check_modes(given: Mapping[str, Any]) -> None:
    """Spec 4.1's rules of the team, player, game and nearby modes."""
    if "teams" in given and len(_csv("teams", given["teams"])) > MAX_TEAMS:
        raise ParameterError(f"teams: at most {MAX_TEAMS} ids per request", parameter="teams")
    if "players" in given and len(_csv("players", given["players"])) > MAX_PLAYERS:
        raise ParameterError(
            f"players: at most {MAX_PLAYERS} ids per request", parameter="players"
        )
    for name in ("teams", "players"):
        if name in given and "id_type" not in given:
            raise ParameterError(
                f"id_type is required with {name} (for example id_type='service')",
                parameter="id_type",
            )
    if "match" in given:
        if len(_csv("match", given["match"])) != 2:
            raise ParameterError("match: exactly two team ids (teamA, teamB)", parameter="match")
        if "start_time" not in given:
            raise ParameterError("match requires start_time", parameter="start_time")
    elif "start_time" in given:
        raise ParameterError(
            "start_time requires match: together they select game mode "
            "(match='teamA,teamB'); to narrow by time, use since",
            parameter="start_time",
        )
    _refuse_combined_modes(given)
    if ("lat" in given) != ("lng" in given):
        missing = "lng" if "lat" in given else "lat"
        raise ParameterError("lat and lng go together", parameter=missing)
    if "lat" in given:
        _check_range("lat", _number("lat", given["lat"]), -90, 90)
        _check_range("lng", _number("lng", given["lng"]), -180, 180)


def _refuse_combined_modes(given: Mapping[str, Any]) -> None:
    """One mode per request: the parameters of the team, player, nearby and game modes
    (spec 4.1's mode table) are not combined, since the service refuses such a request
    (teams with players, teams with lat/lng) and the specification defines no answer to it."""
    modes = modes_given(given)
    if len(modes) < 2:
        return
    sent = ", ".join(n for mode in modes for n in MODE_PARAMETERS[mode] if n in given)
    second = next(n for n in MODE_PARAMETERS[modes[1]] if n in given)
    raise ParameterError(
        f"parameters of several modes in one request ({sent}: the {' and '.join(modes)} "
        "modes); GET /posts takes one mode per request: send one request per mode",
        parameter=second,
    )


def encode_ids_params(entity: str, league: str, lookup: Mapping[str, Any]) -> dict[str, str]:
    """Check and encode the query of GET /ids (``lookup``: the ``IdsLookup`` keys)."""
    _refuse_unknown("GET /ids", lookup, _IDS_PARAMETERS)
    query = {"entity": _string("entity", entity), "league": _ids_league(league)}
    reference_id = lookup.get("reference_id")
    if reference_id is not None:
        query["reference_id"] = _string("reference_id", reference_id)
    value = lookup.get("lookup")
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ParameterError(
                f"lookup: expected a string or an integer, got {_shown(value)}", parameter="lookup"
            )
        query["lookup"] = _string("lookup", value) if isinstance(value, str) else _enc_int("lookup", value)
    return query


def _ids_league(value: Any) -> str:
    """GET /ids's one league code, checked as those of GET /posts."""
    text = _string("league", value)
    if "," in text:
        raise ParameterError(f"league: one league code, got {_shown(value)}", parameter="league")
    return _enc_leagues("league", Unchecked(text) if isinstance(value, Unchecked) else text)


_IDS_PARAMETERS = frozenset(IdsLookup.__annotations__)


