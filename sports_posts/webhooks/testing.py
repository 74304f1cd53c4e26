"""Build correctly signed webhook requests for customers' own tests (and ours)."""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal, Optional, Union, cast, overload

from typing_extensions import TypedDict, Unpack

from .._errors import ParameterError
from .._vocabulary import WebhookHeaders, header_names_or_default
from .events import BreakingNewsEvent, BreakingNewsUpdateEvent
from .signature import sign_payload

__all__ = [
    "AltSourcePayload",
    "BreakingNewsPayload",
    "BreakingNewsPayloadData",
    "BreakingNewsUpdatePayload",
    "BreakingNewsUpdatePayloadData",
    "NewsPayloadData",
    "PayloadFields",
    "SignedRequest",
    "TaggedEntityPayload",
    "WebhookPayload",
    "build_test_request",
    "sample_payload",
]


class TaggedEntityPayload(TypedDict):
    """A player or team of a payload's ``players`` / ``teams`` (spec 6.3)."""

    service: int
    name: str


class AltSourcePayload(TypedDict, total=False):
    """A follow-on report in ``alt_sources`` (spec 6.3)."""

    post_url: str
    source: str
    news_attribution: str
    role: str
    text: str
    created_at: str


class NewsPayloadData(TypedDict):
    """The ``data`` fields both event kinds carry (spec 6.3), as JSON: strings, not models."""

    id: str
    post_url: str
    text: str
    league: str
    news_type: str
    news_status: str
    event_id: str
    players: list[TaggedEntityPayload]
    teams: list[TaggedEntityPayload]
    alt_sources: list[AltSourcePayload]


class BreakingNewsPayloadData(NewsPayloadData):
    """``data`` of a ``breaking_news`` payload."""

    media_type: str
    created_at: str
    news_origin: str
    news_attribution: str


class BreakingNewsUpdatePayloadData(NewsPayloadData):
    """``data`` of a ``breaking_news.update`` payload."""

    update_of: str
    whats_new: str


class BreakingNewsPayload(TypedDict):
    """A ``breaking_news`` webhook body, parsed as JSON (``sample_payload()``'s result)."""

    event: Literal["breaking_news"]
    sent_at: str
    data: BreakingNewsPayloadData


class BreakingNewsUpdatePayload(TypedDict):
    """A ``breaking_news.update`` webhook body, parsed as JSON."""

    event: Literal["breaking_news.update"]
    sent_at: str
    data: BreakingNewsUpdatePayloadData


WebhookPayload = Union[BreakingNewsPayload, BreakingNewsUpdatePayload]
"""Either webhook body as JSON; ``payload["event"]`` tells which (a checker narrows on it)."""


class PayloadFields(TypedDict, total=False):
    """The ``data`` fields ``sample_payload(**fields)`` overrides: any of either kind's."""

    id: str
    post_url: str
    text: str
    league: str
    media_type: str
    created_at: str
    news_type: str
    news_status: str
    news_origin: str
    news_attribution: str
    players: list[TaggedEntityPayload]
    teams: list[TaggedEntityPayload]
    event_id: str
    alt_sources: list[AltSourcePayload]
    update_of: str
    whats_new: str


@dataclass(frozen=True)
class SignedRequest:
    """A request exactly as the service would send it: raw ``body`` bytes and ``headers``."""

    body: bytes
    headers: dict[str, str]


def _fresh_post_id() -> str:
    """A random 19-digit id, as the service's post ids look; unique across runs and processes."""
    return str(10**18 + secrets.randbelow(9 * 10**18))


@overload
def sample_payload(
    event: Literal["breaking_news"] = ..., *, sent_at: Optional[Union[datetime, str]] = None,
    **data: Unpack[PayloadFields],
) -> BreakingNewsPayload: ...
@overload
def sample_payload(
    event: Literal["breaking_news.update"], *, sent_at: Optional[Union[datetime, str]] = None,
    **data: Unpack[PayloadFields],
) -> BreakingNewsUpdatePayload: ...
@overload
def sample_payload(
    event: str, *, sent_at: Optional[Union[datetime, str]] = None, **data: Unpack[PayloadFields]
) -> WebhookPayload: ...
def sample_payload(
    event: str = "breaking_news", *, sent_at: Optional[Union[datetime, str]] = None,
    **data: Unpack[PayloadFields],
) -> WebhookPayload:
    """A spec 6.3 payload of kind ``event``; keyword arguments override fields of ``data``.

    ``sent_at`` defaults to now, so that a receiver's replay window accepts the payload; pass
    an old time to test that it is refused. ``data.id`` is fresh on every call (pass ``id=``
    to repeat one): a receiver with a persistent dedupe store would drop a reused id as a
    retry already handled, so a second run of the same test would see nothing.
    """
    if event not in ("breaking_news", "breaking_news.update"):
        raise ParameterError("event must be breaking_news or breaking_news.update", parameter="event")
    post_id = data.pop("id") if "id" in data else _fresh_post_id()
    body: dict[str, object] = {
        "id": post_id,
        "post_url": f"https://x.com/insider/status/{post_id}",
        "text": "Star QB out for the season with a torn ACL, per sources.",
        "league": "NFL",
        "news_type": "injury",
        "news_status": "confirmed",
        "event_id": "evt_01",
        "players": [{"service": 101, "name": "A. Quarterback"}],
        "teams": [{"service": 7, "name": "Example City"}],
        "alt_sources": [],
    }
    if event == "breaking_news":
        body.update(
            media_type="text",
            created_at="2026-11-21T12:00:00.000Z",
            news_origin="breaking",
            news_attribution="Insider",
        )
    else:
        body.update(update_of=body["event_id"], whats_new="Surgery scheduled for Tuesday.")
    body.update(data)
    when = datetime.now(timezone.utc) if sent_at is None else sent_at
    if isinstance(when, datetime):
        when = when.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    payload = {"event": event, "sent_at": when, "data": body}  # the checks above make it one
    return cast("WebhookPayload", cast(object, payload))


def build_test_request(
    payload: Union[WebhookPayload, Mapping[str, object], BreakingNewsEvent, BreakingNewsUpdateEvent, bytes, str],
    secret: Union[str, bytes],
    *,
    delivery_id: Optional[str] = None,
    event: Optional[str] = None,
    header_names: Optional[WebhookHeaders] = None,
) -> SignedRequest:
    """Sign ``payload`` and add the three ``X-Service-*`` headers of spec 6.2.

    A mapping or event model is serialised to compact JSON; bytes and ``str`` are sent as
    given. ``event`` sets ``X-Service-Event`` (default: the payload's own ``event``);
    ``delivery_id`` defaults to a fresh id, as each retry of the service has.
    ``header_names`` sends the three headers under other names, as a renaming proxy would.
    """
    names = header_names_or_default(header_names)
    if isinstance(payload, (BreakingNewsEvent, BreakingNewsUpdateEvent)):
        body = payload.model_dump_json(exclude_unset=False).encode()
        kind: Optional[str] = payload.event
    elif isinstance(payload, Mapping):
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        raw_kind = payload.get("event")
        kind = raw_kind if isinstance(raw_kind, str) else None
    elif isinstance(payload, (bytes, str)):
        body = payload.encode() if isinstance(payload, str) else payload
        kind = None
        try:
            document = json.loads(body)
            if isinstance(document, dict) and isinstance(document.get("event"), str):
                kind = document["event"]
        except ValueError:
            pass
    else:
        raise ParameterError("payload must be a mapping, an event, bytes or str", parameter="payload")
    headers = {
        "Content-Type": "application/json",
        names.signature: sign_payload(body, secret),
        names.delivery: delivery_id if delivery_id is not None else str(uuid.uuid4()),
    }
    header_event = event if event is not None else kind
    if header_event is not None:
        headers[names.event] = header_event
    return SignedRequest(body, headers)
