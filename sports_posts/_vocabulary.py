"""The spec's tables that the SDK and the sandbox both read: the values of GET /posts'
closed parameters, its modes, the ISO 3166-1 country codes, and the names of the webhook
headers (``WebhookHeaders``).

They live below both layers so that neither imports the other."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Literal, Optional, Union, get_args

from ._errors import ParameterError

__all__ = [
    "ASPECT_RATIOS",
    "COUNTRIES",
    "DEFAULT_HEADER_NAMES",
    "DELIVERY_HEADER",
    "EVENT_HEADER",
    "ID_TYPES",
    "LEAGUES",
    "MEDIA_TYPES",
    "MODE_PARAMETERS",
    "RESERVED_COUNTRIES",
    "SIGNATURE_HEADER",
    "SORTS",
    "SPORTS",
    "AspectRatio",
    "IdType",
    "LeagueCode",
    "MediaTypeFilter",
    "Sort",
    "Sport",
    "WebhookHeaders",
    "header_names_or_default",
    "modes_given",
    "near_id_type",
]

# The values of GET /posts' parameters that the specification lists (spec 4.1).

LeagueCode = Union[
    Literal[
        "NFL", "NCAAFB", "NBA", "WNBA", "NCAAMB", "MLB", "NHL", "PGA", "GOLF", "EPL", "MLS",
        "FIFA", "SOCCER", "CRICKET", "RUGBY", "MMA", "ALL",
    ],
    str,
]
"""League codes of the specification, any case, checked before sending; a code the service
added since this release goes through wrapped in ``Unchecked``."""

Sport = Literal[
    "americanfootball", "football", "soccer", "basketball", "baseball", "hockey", "golf",
    "cricket", "rugby", "mma",
]
"""Parent sports of spec 4.1, a closed list (an invalid value is a 400); ``soccer`` is an
alias of ``football``. Case-insensitive on the service, and so here."""
IdType = Union[
    Literal["code", "provider1_uid", "provider1_guid", "provider2", "service", "provider3"], str
]
"""Id systems of ``teams`` / ``players``; the reference page calls the list open-ended, so
only a near miss of a known one (``"servce"``) is refused; ``Unchecked`` sends it anyway."""

MediaTypeFilter = Union[Literal["image", "photo", "video", "gif", "animated_gif", "none"], str]
"""The union of the specification's two lists, checked before sending; a value the service
added since this release goes through wrapped in ``Unchecked``."""
AspectRatio = Literal["landscape", "portrait", "square"]
"""Closed in spec 4.1: anything else is refused before sending."""
Sort = Literal["recent", "trending", "top"]
"""Closed in spec 4.1: anything else (``"newest"``) is refused before sending."""

# The specification's bounds of GET /posts (spec 4.1), read by the client's checks before
# sending (_params) and by the sandbox's answers (sandbox.query): one table for both.
LIMIT_DEFAULT = 20
MAX_LIMIT = 100
"""The union of the two documented maxima of ``limit`` (100 and 50)."""
RADIUS_DEFAULT_KM = 50.0
MAX_RADIUS_KM = 4830.0
MAX_TEAMS = 10
MAX_PLAYERS = 100

SORTS: tuple[str, ...] = get_args(Sort)
ASPECT_RATIOS: tuple[str, ...] = get_args(AspectRatio)
SPORTS: tuple[str, ...] = get_args(Sport)
LEAGUES: tuple[str, ...] = get_args(get_args(LeagueCode)[0])
"""The league codes the SDK knows (and ``ALL``), upper case; the service takes any case."""
MEDIA_TYPES: tuple[str, ...] = get_args(get_args(MediaTypeFilter)[0])
"""The ``media_type`` values the SDK knows: the union of the specification's two lists."""
ID_TYPES: tuple[str, ...] = get_args(get_args(IdType)[0])
"""The ``id_type`` values of the specification (an open list: others pass unless near one)."""
RESERVED_COUNTRIES: dict[str, Optional[str]] = {"UK": "GB", "EL": "GR", "EU": None, "XK": None}
"""Codes in common use that ISO 3166-1 does not assign (``UK`` is ``GB``; ``EL`` is ``GR``)."""


def _distance(a: str, b: str) -> int:
    """Optimal string alignment distance: edits, a swap of two neighbours counting as one."""
    rows = [list(range(len(b) + 1))]
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def near_id_type(value: str) -> Optional[str]:
    """The known ``id_type`` that ``value`` probably misspells, or ``None`` if it is known or
    far from every known one (the list is open: ``provider9`` is a system of its own).

    A near miss is one or two edits away (one for a short value), or the same letters in
    another case; a value that differs from a known one only in its digits names another
    provider (``provider4``), not a typo of ``provider2``."""
    if value in ID_TYPES:
        return None
    folded = value.lower()
    best: Optional[tuple[int, str]] = None
    for known in ID_TYPES:
        if re.sub(r"[0-9]+", "#", folded) == re.sub(r"[0-9]+", "#", known) and folded != known:
            continue  # another provider's number
        distance = _distance(folded, known)
        if distance <= (1 if len(known) <= 4 else 2) and (best is None or distance < best[0]):
            best = (distance, known)
    return best[1] if best else None


# The modes of GET /posts that parameters select (spec 4.1): one table for the SDK's
# combined-modes warning, its telemetry and the sandbox's strict refusal.

MODE_PARAMETERS: Mapping[str, tuple[str, ...]] = {
    "team": ("teams",),
    "player": ("players",),
    "nearby": ("lat", "lng"),
    "game": ("match", "start_time"),
}
"""The parameters that select each mode (besides trending and league), the mode's own first."""


def modes_given(names: Iterable[str]) -> list[str]:
    """The modes whose selecting parameters appear among ``names``, in the table's order."""
    given = set(names)
    return [mode for mode, params in MODE_PARAMETERS.items() if given.intersection(params)]


# The ISO 3166-1 alpha-2 country codes: one table for the SDK's check of ``user_location``
# and the sandbox's.

COUNTRIES: frozenset[str] = frozenset(
    ["AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ", "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS", "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN", "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE", "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE", "GF", "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK", "HM", "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM", "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC", "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK", "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA", "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG", "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU", "RW", "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS", "ST", "SV", "SX", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO", "TR", "TT", "TV", "TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI", "VN", "VU", "WF", "WS", "YE", "YT", "ZA", "ZM", "ZW"]
)
"""The 249 officially assigned ISO 3166-1 alpha-2 codes: ``user_location`` takes one of them
(any case); another code is a billed 400, unless it is ``Unchecked`` (a code assigned later)."""


# The names of the three webhook headers of spec 6.2, and ``WebhookHeaders`` to rename them.
#
# A proxy or a white-label deployment may deliver the same webhook under other names
# (``X-Acme-Signature``, say). The receiver's side (``sports_posts.webhooks``) and the
# sandbox's sender both take a ``WebhookHeaders``; it lives below both layers so that
# neither imports the other.

SIGNATURE_HEADER = "X-Service-Signature"
EVENT_HEADER = "X-Service-Event"
DELIVERY_HEADER = "X-Service-Delivery"

MAX_NAME_LENGTH = 256
"""Longer than any real header name; servers refuse whole header blocks of a few KiB."""

# RFC 9110 5.6.2 token characters, less "_": CGI and WSGI spell "-" as "_" (HTTP_X_ACME_...),
# so Django, Flask's WSGI servers and nginx (underscores_in_headers off) drop or merge such
# names, and a receiver behind them would never see the header.
_NAME = re.compile(r"[!#$%&'*+\-.^`|~0-9A-Za-z]+")
# Headers the sender writes itself or HTTP frames the message with: reusing one would
# overwrite it or be stripped on the way.
_RESERVED = frozenset(
    {"content-type", "content-length", "user-agent", "host", "transfer-encoding", "connection"}
)


@dataclass(frozen=True)
class WebhookHeaders:
    """The names under which a delivery carries its event kind, delivery id and signature.

    The defaults are spec 6.2's. Names are matched case-insensitively when read and sent as
    given. A name that is not an HTTP token (or has ``_``), is reserved, or repeats another
    (ignoring case) is a ``ParameterError`` naming the field.
    """

    event: str = EVENT_HEADER
    delivery: str = DELIVERY_HEADER
    signature: str = SIGNATURE_HEADER
    # ``(signature, delivery)`` lower-cased, as str and as bytes: what a receiver looks up,
    # computed here once instead of on every request.
    _lookup: tuple[str, str] = field(init=False, repr=False, compare=False)
    _lookup_bytes: tuple[bytes, bytes] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for f in fields(self):
            if not f.init:
                continue
            value = getattr(self, f.name)
            _check_name(f.name, value)
            folded = value.lower()
            if folded in seen:
                raise ParameterError(
                    f"{f.name} header name {value!r} is the same as the {seen[folded]} header's "
                    "(names are case-insensitive)",
                    parameter=f.name,
                )
            seen[folded] = f.name
        lookup = (self.signature.lower(), self.delivery.lower())
        object.__setattr__(self, "_lookup", lookup)
        object.__setattr__(self, "_lookup_bytes", (lookup[0].encode("ascii"), lookup[1].encode("ascii")))

    @classmethod
    def with_prefix(cls, prefix: str) -> WebhookHeaders:
        """``<prefix>Event``, ``<prefix>Delivery``, ``<prefix>Signature``: ``"X-Acme-"`` (or
        ``"X-Acme"``, a ``-`` is added) gives ``X-Acme-Event`` and so on."""
        if not isinstance(prefix, str) or not prefix:
            raise ParameterError("a header prefix must be a non-empty string", parameter="prefix")
        if not prefix.endswith("-"):
            prefix += "-"
        try:
            return cls(event=prefix + "Event", delivery=prefix + "Delivery", signature=prefix + "Signature")
        except ParameterError as exc:  # the names come from the prefix: say so
            raise ParameterError(f"bad header prefix {prefix[:40]!r}: {exc}", parameter="prefix") from None

    def as_dict(self) -> dict[str, str]:
        """``{"event": ..., "delivery": ..., "signature": ...}`` (for JSON and display)."""
        return {"event": self.event, "delivery": self.delivery, "signature": self.signature}


def _check_name(field_name: str, value: object) -> None:
    if not isinstance(value, str):
        raise ParameterError(
            f"{field_name} header name must be a str, not {type(value).__name__}", parameter=field_name
        )
    if not value:
        raise ParameterError(f"{field_name} header name must not be empty", parameter=field_name)
    if len(value) > MAX_NAME_LENGTH:
        raise ParameterError(
            f"{field_name} header name is {len(value)} characters long; at most {MAX_NAME_LENGTH}",
            parameter=field_name,
        )
    if _NAME.fullmatch(value) is None:
        if "_" in value:
            why = "'_' is dropped or turned into '-' by WSGI servers, Django and nginx"
        else:
            why = "only letters, digits and !#$%&'*+-.^`|~ are allowed (an HTTP token)"
        raise ParameterError(f"{field_name} header name {value[:40]!r} is not usable: {why}", parameter=field_name)
    if value.lower() in _RESERVED:
        raise ParameterError(
            f"{field_name} header name {value!r} is a standard HTTP header; pick another", parameter=field_name
        )


DEFAULT_HEADER_NAMES = WebhookHeaders()
"""Spec 6.2's names: ``X-Service-Event``, ``X-Service-Delivery``, ``X-Service-Signature``."""


def header_names_or_default(value: object) -> WebhookHeaders:
    """``value`` when it is a ``WebhookHeaders``, the spec's names for ``None``, else ParameterError."""
    if value is None:
        return DEFAULT_HEADER_NAMES
    if isinstance(value, WebhookHeaders):
        return value
    hint = " (for a prefix: WebhookHeaders.with_prefix(...))" if isinstance(value, str) else ""
    raise ParameterError(
        f"header_names must be a WebhookHeaders or None, not {type(value).__name__}{hint}",
        parameter="header_names",
    )
