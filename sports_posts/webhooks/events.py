"""Typed breaking-news events of spec 6.3 and ``construct_event``, which verifies before parsing."""

import time
from datetime import datetime, timezone
from typing import Annotated, Any, Callable, ClassVar, Literal, Optional, Union

from pydantic import Field, TypeAdapter, ValidationError

from .._errors import ParameterError, WebhookPayloadError
from .._vocabulary import WebhookHeaders, header_names_or_default
from ..models._base import OpenVocabulary, SportsPostsModel, UTCDateTime
from .errors import ReplayedWebhookError
from .signature import Headers, Payload, Secret, signature_and_delivery, verify_signature

__all__ = [
    "DEFAULT_CLOCK_SKEW",
    "DEFAULT_TOLERANCE",
    "AltSource",
    "BreakingNewsData",
    "BreakingNewsEvent",
    "BreakingNewsUpdateData",
    "BreakingNewsUpdateEvent",
    "NewsOrigin",
    "NewsStatus",
    "NewsType",
    "TaggedEntity",
    "WebhookEvent",
    "check_sent_at",
    "construct_event",
    "parse_event",
]

DEFAULT_TOLERANCE = 3600.0
"""Seconds a signed delivery stays acceptable after its ``sent_at``: the service retries the
same payload (same ``sent_at``) for about 31 minutes (1+2+4+8+16, spec 6.5), so an hour
accepts every genuine retry and refuses a captured request replayed later."""
DEFAULT_CLOCK_SKEW = 300.0
"""Seconds a ``sent_at`` may lie in the future: clocks of the service and the receiver differ."""

NewsStatus = Annotated[Union[Literal["verified", "rumor", "confirmed"], str], OpenVocabulary()]
"""Filter values are verified and rumor; the spec's sample shows confirmed (a discrepancy)."""
NewsType = Annotated[
    Union[
        Literal[
            "injury",
            "trade",
            "signing",
            "cut",
            "suspension",
            "contract_extension",
            "roster_move",
            "return_from_injury",
            "coaching_change",
            "draft",
            "other",
        ],
        str,
    ],
    OpenVocabulary(),
]
NewsOrigin = Annotated[Union[Literal["breaking", "relaying"], str], OpenVocabulary()]
MediaType = Annotated[
    Union[Literal["image", "video", "photo", "gif", "animated_gif", "none", "text"], str], OpenVocabulary()
]
League = Annotated[
    Union[
        Literal[
            "NFL", "NCAAFB", "NBA", "WNBA", "NCAAMB", "MLB", "NHL", "PGA", "GOLF", "EPL", "MLS",
            "FIFA", "SOCCER", "CRICKET", "RUGBY", "MMA",
        ],
        str,
    ],
    OpenVocabulary(),
]


class TaggedEntity(SportsPostsModel):
    """A team or player tagged in a webhook payload: only ``service`` and ``name`` (spec 2.3)."""

    service: Optional[int] = None
    name: Optional[str] = None


class AltSource(SportsPostsModel):
    """A later outlet's report of the same story, attached instead of sent separately."""

    post_url: Optional[str] = None
    source: Optional[str] = None
    news_attribution: Optional[str] = None
    role: Optional[str] = None
    """``alt`` in the spec's sample; other roles are kept as sent."""
    text: Optional[str] = None
    created_at: Optional[UTCDateTime] = None


class _NewsData(SportsPostsModel):
    """Fields both event kinds carry (spec 6.3, "the update payload carries ...")."""

    id: str
    """Post id; with the event kind, the de-duplication key across retries."""
    post_url: str
    text: str
    league: League
    news_type: NewsType
    news_status: NewsStatus
    event_id: str
    """Story id shared by the first event and its updates."""
    players: list[TaggedEntity] = Field(default_factory=list)
    teams: list[TaggedEntity] = Field(default_factory=list)
    alt_sources: list[AltSource] = Field(default_factory=list)
    # Listed for the first report only; kept optional on both so a sparse update still parses.
    media_type: Optional[MediaType] = None
    created_at: Optional[UTCDateTime] = None
    news_origin: Optional[NewsOrigin] = None
    news_attribution: Optional[str] = None


class BreakingNewsData(_NewsData):
    """``data`` of a ``breaking_news`` event: the first report of a story."""

    update_of: Optional[str] = None
    whats_new: Optional[str] = None


class BreakingNewsUpdateData(_NewsData):
    """``data`` of a ``breaking_news.update`` event: key new information on a story."""

    update_of: str
    """The ``event_id`` of the original story."""
    whats_new: Optional[str] = None
    """Short summary of the new information (optional here so that a sparse update is not lost)."""


class _Event(SportsPostsModel):
    kind: ClassVar[str]
    sent_at: UTCDateTime
    delivery_id: Optional[str] = Field(default=None, exclude=True, repr=False)
    """``X-Service-Delivery`` of the attempt that brought this event; a retry has a new one.

    Set by ``parse_event`` from the header (never from the body); left out of ``model_dump``
    and ``repr``, kept by equality, copies and pickles. A field rather than a ``PrivateAttr``:
    a private attribute costs every event pydantic's Python hook at validation (about 1.6 us,
    a third of the parse), a field with a default next to nothing."""

    @property
    def dedupe_key(self) -> str:
        """Event kind plus post id: the same on every retry, unlike ``delivery_id``."""
        data: _NewsData = getattr(self, "data")  # noqa: B009 - each subclass types its own data
        return f"{self.kind}:{data.id}"


class BreakingNewsEvent(_Event):
    """First report of a story (``event == "breaking_news"``)."""

    kind: ClassVar[str] = "breaking_news"
    event: Literal["breaking_news"] = "breaking_news"
    data: BreakingNewsData


class BreakingNewsUpdateEvent(_Event):
    """A later post adding key new information to a story (``event == "breaking_news.update"``)."""

    kind: ClassVar[str] = "breaking_news.update"
    event: Literal["breaking_news.update"] = "breaking_news.update"
    data: BreakingNewsUpdateData


WebhookEvent = Union[BreakingNewsEvent, BreakingNewsUpdateEvent]
"""Either event kind; narrow with ``isinstance`` or on ``event.event``."""

_BY_KIND: "dict[str, type[WebhookEvent]]" = {
    BreakingNewsEvent.kind: BreakingNewsEvent,
    BreakingNewsUpdateEvent.kind: BreakingNewsUpdateEvent,
}


def parse_event(payload: Payload, delivery_id: Optional[str] = None) -> WebhookEvent:
    """Parse a body that was already verified; the kind comes from the signed ``event`` field.

    Raises ``WebhookPayloadError`` for anything that is not an event of spec 6.3.
    Never call it on bytes whose signature was not checked: use ``construct_event``.
    """
    # The usual body: pydantic-core parses the JSON and picks the kind in one step. Anything it
    # refuses takes the path below, which says precisely what is wrong.
    try:
        event = _by_event().validate_json(payload if not isinstance(payload, memoryview) else bytes(payload))
    except (ValidationError, ValueError, TypeError, RecursionError):
        event = _parse_slowly(payload)
    event.delivery_id = delivery_id  # the header's, whatever the body said
    return event


_ADAPTER: "Optional[TypeAdapter[WebhookEvent]]" = None


def _by_event() -> "TypeAdapter[WebhookEvent]":
    global _ADAPTER
    if _ADAPTER is None:
        _ADAPTER = TypeAdapter(Annotated[WebhookEvent, Field(discriminator="event")])
    return _ADAPTER


def _parse_slowly(payload: Payload) -> WebhookEvent:
    import json

    try:
        document: Any = json.loads(bytes(payload) if not isinstance(payload, str) else payload)
    except (ValueError, RecursionError, TypeError) as exc:
        raise WebhookPayloadError(f"webhook body is not JSON: {type(exc).__name__}") from None
    if not isinstance(document, dict):
        raise WebhookPayloadError(f"webhook body is a JSON {type(document).__name__}, not an object")
    kind = document.get("event")
    cls = _BY_KIND.get(kind) if isinstance(kind, str) else None
    if cls is None:
        shown = repr(kind)[:60]
        raise WebhookPayloadError(f"unknown webhook event {shown}; expected one of {sorted(_BY_KIND)}")
    try:
        event = cls.model_validate(document)
    except (ValidationError, RecursionError, ValueError, TypeError) as exc:
        raise WebhookPayloadError(f"{kind} payload does not match spec 6.3: {_summary(exc)}") from None
    return event


def construct_event(
    payload: Payload,
    headers: Headers,
    secret: Secret,
    *,
    header_names: Optional[WebhookHeaders] = None,
    tolerance: Optional[float] = None,
    clock_skew: float = DEFAULT_CLOCK_SKEW,
    clock: Callable[[], float] = time.time,
) -> WebhookEvent:
    """Verify ``X-Service-Signature`` over the raw ``payload``, then parse it into a typed event.

    ``headers`` is any mapping (or ASGI pairs); names match case-insensitively. The kind is
    taken from the signed body, never from the unsigned ``X-Service-Event`` header. Raises
    ``SignatureVerificationError`` before looking at the bytes, and
    ``WebhookPayloadError`` when a correctly signed body is not an event. With
    ``tolerance`` (seconds; ``DEFAULT_TOLERANCE`` is what the receiver uses) a
    ``sent_at`` outside the replay window raises ``ReplayedWebhookError``; without it
    (the default, so that a stored body can be checked later) the age is not looked at.
    ``header_names`` reads the signature and delivery id under other names than spec 6.2's
    (``WebhookHeaders.with_prefix("X-Acme-")``, say).
    """
    names = header_names_or_default(header_names)
    signature, delivery_id = signature_and_delivery(headers, names)
    verify_signature(payload, signature, secret, header_names=names)
    event = parse_event(payload, delivery_id)
    if tolerance is not None:
        check_sent_at(event, tolerance, clock_skew, clock())
    return event


def check_replay_window(tolerance: float, clock_skew: float) -> tuple[float, float]:
    """The replay window's two bounds as floats, or ``ParameterError`` naming the bad one."""
    for name, value in (("tolerance", tolerance), ("clock_skew", clock_skew)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
            raise ParameterError(f"{name} must be a finite number of seconds >= 0", parameter=name)
    return float(tolerance), float(clock_skew)


def check_sent_at(event: WebhookEvent, tolerance: float, clock_skew: float, now: float) -> None:
    """Raise ``ReplayedWebhookError`` when ``event.sent_at`` is more than ``tolerance``
    seconds before ``now`` or more than ``clock_skew`` seconds after it."""
    age = now - (event.sent_at - _EPOCH).total_seconds()  # = timestamp(), without a second datetime
    if age > tolerance:
        raise ReplayedWebhookError(
            f"sent_at is {age:.0f} s old, beyond the replay tolerance of {tolerance:g} s", age=age
        )
    if -age > clock_skew:
        raise ReplayedWebhookError(
            f"sent_at is {-age:.0f} s in the future, beyond the clock skew of {clock_skew:g} s", age=age
        )


def _epoch() -> datetime:
    """The epoch in the tzinfo class pydantic gives parsed UTC times: subtracting it is
    cheaper than ``datetime.timestamp()``, which goes through ``timezone.utc``."""
    try:
        from pydantic_core import TzInfo
    except ImportError:  # pragma: no cover - an older pydantic-core without it
        return datetime(1970, 1, 1, tzinfo=timezone.utc)
    return datetime(1970, 1, 1, tzinfo=TzInfo(0))


_EPOCH = _epoch()


def _summary(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for error in exc.errors()[:3]:
            loc = ".".join(str(part) for part in error.get("loc", ()))
            parts.append(f"{loc or '<root>'}: {error.get('msg', 'invalid')}")
        more = exc.error_count() - len(parts)
        return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")
    return type(exc).__name__
