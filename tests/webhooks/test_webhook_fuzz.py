"""Hypothesis fuzz (300 examples each): only the SDK's own errors escape, and handle never answers 500."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sports_posts import SportsPostsError
from sports_posts.webhooks import (
    MemoryDedupeStore,
    SignatureVerificationError,
    WebhookEvent,
    WebhookPayloadError,
    WebhookReceiver,
    construct_event,
    sample_payload,
    sign_payload,
    verify_signature,
)
from tests.webhooks.webhook_helpers import SECRET

# Small strategies and a bounded number of examples; no example database in the worktree.
FUZZ = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=5,
)
hexes = st.text(alphabet="0123456789abcdefABCDEF", min_size=60, max_size=68)
signatures = st.one_of(
    st.none(),
    st.text(max_size=80),
    st.binary(max_size=80),
    hexes.map(lambda h: "sha256=" + h),
    st.builds(lambda pad, h: pad + "sha256=" + h + pad, st.sampled_from(["", " ", "\t", "\u00a0"]), hexes),
    st.integers(),
    st.lists(st.text(max_size=5), max_size=2),
)
secrets = st.one_of(
    st.text(max_size=30),
    st.binary(max_size=30),
    st.lists(st.one_of(st.text(max_size=10), st.binary(max_size=10), st.integers()), max_size=3),
    st.none(),
    st.integers(),
)
payloads = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200),
    st.binary(max_size=50).map(bytearray),
    st.binary(max_size=50).map(memoryview),  # type: ignore[arg-type]
    st.none(),
    st.integers(),
    json_values,
)


@FUZZ
@given(payload=payloads, signature=signatures, secret=secrets, sign=st.booleans())
def test_verify_signature_raises_only_sdk_errors(payload: Any, signature: Any, secret: Any, sign: bool) -> None:
    if sign and isinstance(payload, bytes) and isinstance(secret, (str, bytes)) and secret:
        signature = sign_payload(payload, secret)
    try:
        verify_signature(payload, signature, secret)
    except SportsPostsError:
        assert not (sign and signature is not None and isinstance(payload, bytes) and isinstance(secret, (str, bytes))
                    and secret and signature == sign_payload(payload, secret))
    # Anything else (TypeError, ValueError, UnicodeError, binascii.Error) fails the test.


def _now_iso(offset: float) -> str:
    when = datetime.now(timezone.utc) + timedelta(seconds=offset)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


_SAMPLES = {kind: sample_payload(kind) for kind in ("breaking_news", "breaking_news.update")}

# Bodies near a real event: a sample payload with some fields replaced by anything.
near_events = st.builds(
    lambda kind, top, data, sent_at: {
        **_SAMPLES[kind], **top, "sent_at": sent_at, "data": {**_SAMPLES[kind]["data"], **data},
    },
    st.sampled_from(["breaking_news", "breaking_news.update"]),
    st.dictionaries(st.sampled_from(["event", "data", "extra"]), json_values, max_size=2),
    st.dictionaries(
        st.sampled_from(["id", "text", "league", "players", "teams", "alt_sources", "update_of", "created_at",
                         "news_status", "event_id", "media_type"]),
        json_values, max_size=3,
    ),
    st.one_of(st.floats(-7200, 7200).map(_now_iso), st.just(_now_iso(-86_400 * 30)), json_values),
)
bodies = st.one_of(
    near_events.map(lambda d: json.dumps(d).encode()),
    json_values.map(lambda d: json.dumps(d).encode()),
    st.binary(max_size=200),
    st.text(max_size=100),
)
header_sets = st.one_of(
    st.dictionaries(st.sampled_from(["X-Service-Signature", "x-service-delivery", "X-Service-Event", "Other"]),
                    st.text(max_size=40), max_size=3),
    st.lists(st.tuples(st.sampled_from([b"x-service-signature", b"X-Service-Delivery", b"other"]),
                       st.binary(max_size=40)), max_size=3),
    st.none(),
    st.text(max_size=10),
    st.integers(),
)


def _signed_headers(body: Any, headers: Any, sign: bool) -> Any:
    if sign and isinstance(body, (bytes, str)):
        raw = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
        extra = headers if isinstance(headers, dict) else {}
        return {**extra, "X-Service-Signature": sign_payload(raw, SECRET)}
    return headers


@FUZZ
@given(body=bodies, headers=header_sets, sign=st.booleans())
def test_construct_event_raises_only_signature_or_payload_errors(body: Any, headers: Any, sign: bool) -> None:
    headers = _signed_headers(body, headers, sign)
    try:
        event = construct_event(body, headers, SECRET, tolerance=3600)
    except (SignatureVerificationError, WebhookPayloadError):
        return
    assert event.dedupe_key.startswith(event.event + ":")


def _handler(event: WebhookEvent) -> None:
    if event.data.text.endswith("!"):  # some handlers fail: the answer must be a 503, not a 500
        raise RuntimeError("handler failed")


_RECEIVER = WebhookReceiver(SECRET, _handler, store=MemoryDedupeStore(), in_flight_wait=0)


@FUZZ
@given(body=st.one_of(bodies, st.none(), st.integers(), st.binary(max_size=30).map(bytearray)), headers=header_sets,
       sign=st.booleans())
def test_handle_never_raises_and_never_answers_500(body: Any, headers: Any, sign: bool) -> None:
    headers = _signed_headers(body, headers, sign)
    response = _RECEIVER.handle(body, headers)
    assert response.status_code in (200, 202, 400, 401, 409, 503)
    assert response.status_code != 503 or response.outcome == "handler_failed"
    assert json.loads(response.body)["status"] == response.outcome
    assert response.status_code not in (200, 202) or sign
