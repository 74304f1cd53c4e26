"""Build correctly signed webhook requests for customers' own tests (and ours)."""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional, Union

from .._errors import ParameterError
from .._vocabulary import WebhookHeaders, header_names_or_default
from .events import BreakingNewsEvent, BreakingNewsUpdateEvent
from .signature import sign_payload

__all__ = ["SignedRequest", "build_test_request", "sample_payload"]


@dataclass(frozen=True)
class SignedRequest:
    """A request exactly as the service would send it: raw ``body`` bytes and ``headers``."""

    body: bytes
    headers: dict[str, str]


def _fresh_post_id() -> str:
    """A random 19-digit id, as the service's post ids look; unique across runs and processes."""
    return str(10**18 + secrets.randbelow(9 * 10**18))


def sample_payload(
    event: str = "breaking_news", *, sent_at: Optional[Union[datetime, str]] = None, **data: Any
) -> dict[str, Any]:
    """A spec 6.3 payload of kind ``event``; keyword arguments override fields of ``data``.

    ``sent_at`` defaults to now, so that a receiver's replay window accepts the payload; pass
    an old time to test that it is refused. ``data.id`` is fresh on every call (pass ``id=``
    to repeat one): a receiver with a persistent dedupe store would drop a reused id as a
    retry already handled, so a second run of the same test would see nothing.
    """
    if event not in ("breaking_news", "breaking_news.update"):
        raise ParameterError("event must be breaking_news or breaking_news.update", parameter="event")
    post_id = data.pop("id") if "id" in data else _fresh_post_id()
    body: dict[str, Any] = {
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
    return {"event": event, "sent_at": when, "data": body}


def build_test_request(
    payload: Union[Mapping[str, Any], BreakingNewsEvent, BreakingNewsUpdateEvent, bytes, str],
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
