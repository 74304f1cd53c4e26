"""construct_event: verify first, then parse the signed body into a typed event of spec 6.3."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sports_posts import SignatureVerificationError, SportsPostsError, WebhookPayloadError
from sports_posts.webhooks import (
    BreakingNewsEvent,
    BreakingNewsUpdateEvent,
    build_test_request,
    construct_event,
    sample_payload,
    sign_payload,
)
from sports_posts.webhooks.events import parse_event
from tests.webhooks.webhook_helpers import SECRET, signed

SPEC_SAMPLE = {
    "event": "breaking_news",
    "sent_at": "2026-03-01T18:22:05.123Z",
    "data": {
        "id": "1896312345678901234",
        "post_url": "https://x.com/AdamSchefter/status/1896312345678901234",
        "text": "Trade: the Example City team acquires WR J. Doe for a 2027 2nd-round pick.",
        "league": "NFL",
        "media_type": "text",
        "created_at": "2026-03-01T18:22:01Z",
        "news_type": "trade",
        "news_status": "confirmed",
        "news_origin": "breaking",
        "news_attribution": "Adam Schefter",
        "players": [{"service": 4021, "name": "J. Doe"}],
        "teams": [{"service": 12, "name": "Example City"}, {"service": 3, "name": "Other Town"}],
        "event_id": "evt_9f2",
        "alt_sources": [
            {
                "post_url": "https://x.com/RapSheet/status/1896312399999999999",
                "source": "x",
                "news_attribution": "Ian Rapoport",
                "role": "alt",
                "text": "Sources confirm the J. Doe trade.",
                "created_at": "2026-03-01T18:23:40+01:00",
            }
        ],
    },
}
UPDATE_SAMPLE = {
    "event": "breaking_news.update",
    "sent_at": "2026-03-01T19:00:00.000Z",
    "data": {
        "id": "1896319999999999999",
        "post_url": "https://x.com/AdamSchefter/status/1896319999999999999",
        "text": "Update: the pick is conditional on playing time.",
        "league": "NFL",
        "news_type": "trade",
        "news_status": "verified",
        "event_id": "evt_9f2",
        "update_of": "evt_9f2",
        "whats_new": "Trade compensation is conditional.",
        "players": [{"service": 4021, "name": "J. Doe"}],
        "teams": [],
        "alt_sources": [],
    },
}

# A shared CI machine can be slow: no per-example deadline, no "too slow" health check.
LOADED_MACHINE = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _request(document: Any, **kwargs: Any) -> tuple[bytes, dict[str, str]]:
    request = build_test_request(document, SECRET, **kwargs)
    return request.body, request.headers


def test_breaking_news_carries_every_payload_field_of_6_3() -> None:
    body, headers = _request(SPEC_SAMPLE, delivery_id="dlv_1")
    event = construct_event(body, headers, SECRET)
    assert isinstance(event, BreakingNewsEvent)
    assert event.event == "breaking_news"
    assert event.delivery_id == "dlv_1"
    assert event.sent_at == datetime(2026, 3, 1, 18, 22, 5, 123000, tzinfo=timezone.utc)
    data = event.data
    assert (data.id, data.league, data.media_type, data.news_type) == ("1896312345678901234", "NFL", "text", "trade")
    assert (data.news_status, data.news_origin, data.news_attribution) == ("confirmed", "breaking", "Adam Schefter")
    assert data.post_url.endswith("1896312345678901234") and data.text.startswith("Trade:")
    assert data.created_at == datetime(2026, 3, 1, 18, 22, 1, tzinfo=timezone.utc)
    assert [(p.service, p.name) for p in data.players] == [(4021, "J. Doe")]
    assert [t.service for t in data.teams] == [12, 3]
    assert data.event_id == "evt_9f2"
    (alt,) = data.alt_sources
    assert (alt.source, alt.role, alt.news_attribution) == ("x", "alt", "Ian Rapoport")
    assert alt.created_at == datetime(2026, 3, 1, 17, 23, 40, tzinfo=timezone.utc)  # made UTC
    assert event.dedupe_key == "breaking_news:1896312345678901234"


def test_update_carries_update_of_and_whats_new() -> None:
    body, headers = _request(UPDATE_SAMPLE, delivery_id="dlv_2")
    event = construct_event(body, headers, SECRET)
    assert isinstance(event, BreakingNewsUpdateEvent)
    assert event.data.update_of == "evt_9f2"
    assert event.data.whats_new == "Trade compensation is conditional."
    assert event.data.news_origin is None and event.data.created_at is None  # not in an update
    assert event.delivery_id == "dlv_2"
    assert event.dedupe_key == "breaking_news.update:1896319999999999999"


def test_an_update_without_update_of_is_a_payload_error() -> None:
    document = json.loads(json.dumps(UPDATE_SAMPLE))
    del document["data"]["update_of"]
    body, headers = _request(document)
    with pytest.raises(WebhookPayloadError, match="update_of"):
        construct_event(body, headers, SECRET)


@pytest.mark.parametrize("status", ["verified", "rumor", "confirmed", "disputed-by-team"])
def test_news_status_accepts_the_filter_values_the_sample_value_and_new_ones(status: str) -> None:
    body, headers = _request(sample_payload(news_status=status))
    assert construct_event(body, headers, SECRET).data.news_status == status


def test_unknown_fields_from_a_newer_service_are_kept() -> None:
    document: dict[str, Any] = dict(sample_payload())
    document["data"]["sentiment"] = "negative"
    document["trace"] = {"region": "eu"}
    body, headers = _request(document)
    event = construct_event(body, headers, SECRET)
    assert event.data.model_extra == {"sentiment": "negative"}
    assert event.model_extra == {"trace": {"region": "eu"}}


def test_kind_comes_from_the_signed_body_not_the_unsigned_header() -> None:
    body, headers = _request(sample_payload("breaking_news.update"), event="breaking_news")
    assert headers["X-Service-Event"] == "breaking_news"
    assert isinstance(construct_event(body, headers, SECRET), BreakingNewsUpdateEvent)
    body, headers = _request(sample_payload("breaking_news"), event="breaking_news.update")
    assert isinstance(construct_event(body, headers, SECRET), BreakingNewsEvent)


def test_header_names_match_case_insensitively_in_any_mapping_or_asgi_pairs() -> None:
    request = signed(delivery_id="dlv_case")
    lower = {k.lower(): v for k, v in request.headers.items()}
    upper = {k.upper(): v for k, v in request.headers.items()}
    pairs = [(k.lower().encode(), v.encode()) for k, v in request.headers.items()]
    for headers in (lower, upper, pairs):
        assert construct_event(request.body, headers, SECRET).delivery_id == "dlv_case"


def test_conflicting_duplicate_signature_headers_are_rejected() -> None:
    request = signed()
    pairs = [(k, v) for k, v in request.headers.items()]
    pairs.append(("x-service-signature", sign_payload(request.body, "attacker")))
    with pytest.raises(SignatureVerificationError):
        construct_event(request.body, pairs, SECRET)


def test_missing_delivery_header_leaves_delivery_id_none() -> None:
    request = signed()
    headers = {k: v for k, v in request.headers.items() if k != "X-Service-Delivery"}
    assert construct_event(request.body, headers, SECRET).delivery_id is None


def test_the_delivery_id_is_the_headers_kept_by_equality_copies_and_pickles_and_never_dumped() -> None:
    import copy
    import pickle

    # A body that names a delivery id of its own: the header's wins (and so does its absence).
    body = json.dumps({**sample_payload("breaking_news"), "delivery_id": "dlv_from_the_body"})
    request = build_test_request(body, SECRET, delivery_id="dlv_header")
    event = construct_event(request.body, request.headers, SECRET)
    assert event.delivery_id == "dlv_header"
    assert parse_event(request.body).delivery_id is None
    assert "delivery_id" not in event.model_dump() and "dlv_header" not in repr(event)
    assert "delivery_id" not in json.loads(event.model_dump_json())
    for kept in (copy.copy(event), copy.deepcopy(event), event.model_copy(), pickle.loads(pickle.dumps(event))):
        assert kept.delivery_id == "dlv_header" and kept == event
    again = build_test_request(body, SECRET, delivery_id="dlv_retry")
    retry = construct_event(again.body, again.headers, SECRET)
    assert retry != event and retry.model_dump() == event.model_dump()


def test_unsigned_garbage_is_a_signature_error_never_a_parse_error() -> None:
    # Verification comes first: bytes that are not JSON are never looked at without a signature.
    with pytest.raises(SignatureVerificationError):
        construct_event(b"{not json", {"X-Service-Signature": "sha256=" + "0" * 64}, SECRET)
    with pytest.raises(SignatureVerificationError):
        construct_event(b"{not json", {}, SECRET)


def test_verification_happens_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    import sports_posts.webhooks.events as events

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed unauthenticated bytes")

    monkeypatch.setattr(events, "parse_event", fail)
    request = signed(secret="whsec_someone_else")
    with pytest.raises(SignatureVerificationError):
        construct_event(request.body, request.headers, SECRET)


SIGNED_BUT_NOT_AN_EVENT = [
    ("not json", b"{oops"),
    ("not utf-8", b"\xff\xfe\xfd"),
    ("json array", b"[1, 2]"),
    ("json string", b'"breaking_news"'),
    ("no event", json.dumps({"data": {}}).encode()),
    ("unknown event", json.dumps({**sample_payload(), "event": "breaking_news.retraction"}).encode()),
    ("event not a string", json.dumps({**sample_payload(), "event": ["breaking_news"]}).encode()),
    ("data missing", json.dumps({"event": "breaking_news", "sent_at": "2026-01-01T00:00:00Z"}).encode()),
    ("id missing", json.dumps(sample_payload(id=None)).encode()),  # type: ignore[call-overload]
    ("sent_at not a time", json.dumps({**sample_payload(), "sent_at": "yesterday"}).encode()),
    ("players not a list", json.dumps(sample_payload(players="J. Doe")).encode()),  # type: ignore[call-overload]
    ("deep nesting", b"[" * 100_000 + b"]" * 100_000),
    ("huge integer", b'{"event": "breaking_news", "n": ' + b"9" * 5000 + b"}"),
]


@pytest.mark.parametrize("body", [b for _, b in SIGNED_BUT_NOT_AN_EVENT], ids=[n for n, _ in SIGNED_BUT_NOT_AN_EVENT])
def test_a_signed_body_that_does_not_parse_raises_webhook_payload_error(body: bytes) -> None:
    headers = {"X-Service-Signature": sign_payload(body, SECRET)}
    with pytest.raises(WebhookPayloadError) as info:
        construct_event(body, headers, SECRET)
    assert isinstance(info.value, SportsPostsError)
    assert not isinstance(info.value, SignatureVerificationError)


def test_build_test_request_round_trips_an_event_model() -> None:
    body, headers = _request(SPEC_SAMPLE)
    event = construct_event(body, headers, SECRET)
    again = build_test_request(event, SECRET, delivery_id="dlv_x")
    assert again.headers["X-Service-Event"] == "breaking_news"
    assert construct_event(again.body, again.headers, SECRET).data == event.data


def test_each_test_request_is_a_new_delivery_of_the_same_story() -> None:
    first, second = signed(), signed()
    assert first.body == second.body
    assert first.headers["X-Service-Delivery"] != second.headers["X-Service-Delivery"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


def _mutated_payload(draw_data: dict[str, Any], field: str, value: Any, kind: str) -> dict[str, Any]:
    document: dict[str, Any] = dict(sample_payload(kind))
    document["data"][field] = value
    document.update(draw_data)
    return document


@LOADED_MACHINE
@given(
    kind=st.sampled_from(["breaking_news", "breaking_news.update", "other"]),
    field=st.sampled_from(["id", "players", "teams", "alt_sources", "created_at", "news_status", "update_of", "nope"]),
    value=json_values,
    top=st.dictionaries(st.sampled_from(["event", "sent_at", "data", "x"]), json_values, max_size=2),
)
def test_fuzzed_signed_payloads_parse_or_raise_webhook_payload_error(
    kind: str, field: str, value: Any, top: dict[str, Any]
) -> None:
    document = _mutated_payload(top, field, value, "breaking_news" if kind == "other" else kind)
    body = json.dumps(document).encode()
    try:
        event = construct_event(body, {"x-service-signature": sign_payload(body, SECRET)}, SECRET)
    except WebhookPayloadError:
        return
    assert event.event == document["event"]


@LOADED_MACHINE
@given(body=st.binary(max_size=300), headers=st.dictionaries(st.text(max_size=30), st.text(max_size=90), max_size=4))
def test_fuzzed_unsigned_requests_only_raise_sports_posts_errors(body: bytes, headers: dict[str, str]) -> None:
    with pytest.raises(SignatureVerificationError):
        construct_event(body, headers, SECRET)


def test_the_delivery_id_survives_copies_and_pickles_and_counts_in_equality() -> None:
    import copy
    import pickle

    request = signed(delivery_id="dlv_1")
    event = construct_event(request.body, request.headers, SECRET)
    again = construct_event(request.body, request.headers, SECRET)
    other_delivery = construct_event(request.body, {**request.headers, "X-Service-Delivery": "dlv_2"}, SECRET)
    assert event.delivery_id == "dlv_1" and event == again and event != other_delivery
    for clone in (pickle.loads(pickle.dumps(event)), copy.copy(event), copy.deepcopy(event), event.model_copy()):
        assert clone.delivery_id == "dlv_1" and clone == event
    # Not a field: a dump and a model built from it have no delivery.
    assert "delivery_id" not in event.model_dump()
    assert type(event).model_validate(event.model_dump()).delivery_id is None
    assert type(event).model_construct().delivery_id is None  # type: ignore[call-arg]
