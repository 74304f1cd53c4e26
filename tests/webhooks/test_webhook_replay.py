"""Replay window: a correctly signed delivery is refused when its sent_at is too old or too far ahead."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sports_posts import ParameterError, SignatureVerificationError
from sports_posts.webhooks import (
    DEFAULT_TOLERANCE,
    MemoryDedupeStore,
    ReplayedWebhookError,
    SQLiteInbox,
    WebhookEvent,
    WebhookReceiver,
    build_test_request,
    construct_event,
    sample_payload,
)
from tests.webhooks.webhook_helpers import SECRET, FakeClock

NOW = 1_800_000_000.0


def _sent(seconds_before_now: float, **data: Any) -> Any:
    when = datetime.fromtimestamp(NOW - seconds_before_now, timezone.utc)
    return build_test_request(sample_payload(sent_at=when, **data), SECRET)


def _receiver(events: list[WebhookEvent], **kwargs: Any) -> WebhookReceiver:
    return WebhookReceiver(SECRET, events.append, clock=FakeClock(NOW), **kwargs)


def test_the_default_tolerance_outlasts_the_services_31_minutes_of_retries() -> None:
    assert DEFAULT_TOLERANCE > (1 + 2 + 4 + 8 + 16) * 60


def test_the_last_genuine_retry_is_accepted_and_a_later_replay_is_refused_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="sports_posts.webhooks")
    events: list[WebhookEvent] = []
    receiver = _receiver(events)
    last_retry = _sent(31 * 60 + 5, id="1")
    assert receiver.handle(last_retry.body, last_retry.headers).status_code == 202
    replay = _sent(DEFAULT_TOLERANCE + 1, id="2")  # captured and sent again an hour later
    response = receiver.handle(replay.body, replay.headers)
    assert (response.status_code, response.outcome, response.ok) == (400, "outside_replay_window", False)
    assert [e.data.id for e in events] == ["1"]
    assert any("replay" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)


def test_a_sent_at_from_the_future_is_refused_beyond_a_small_skew() -> None:
    events: list[WebhookEvent] = []
    receiver = _receiver(events, clock_skew=60)
    slightly_ahead = _sent(-30, id="1")
    assert receiver.handle(slightly_ahead.body, slightly_ahead.headers).status_code == 202
    far_ahead = _sent(-3600, id="2")
    assert receiver.handle(far_ahead.body, far_ahead.headers).outcome == "outside_replay_window"
    assert [e.data.id for e in events] == ["1"]


def test_the_tolerance_is_configurable() -> None:
    events: list[WebhookEvent] = []
    receiver = _receiver(events, tolerance=7200, store=MemoryDedupeStore(ttl=7201))
    late = _sent(5400)
    assert receiver.handle(late.body, late.headers).status_code == 202


def test_a_replay_is_rejected_even_once_the_store_forgot_the_story() -> None:
    clock = FakeClock(NOW)
    store = MemoryDedupeStore(ttl=DEFAULT_TOLERANCE + 60, clock=clock)
    events: list[WebhookEvent] = []
    receiver = WebhookReceiver(SECRET, events.append, store=store, clock=clock)
    captured = _sent(0)
    assert receiver.handle(captured.body, captured.headers).status_code == 202
    clock.advance(DEFAULT_TOLERANCE + 61)  # the store forgot the story; the window is closed
    assert not store.is_complete("breaking_news:1790000000000000001")
    assert receiver.handle(captured.body, captured.headers).status_code == 400
    assert len(events) == 1


@pytest.mark.parametrize("ttl", [60.0, DEFAULT_TOLERANCE])
def test_a_dedupe_ttl_not_longer_than_the_tolerance_is_refused_at_construction(ttl: float) -> None:
    with pytest.raises(ParameterError) as info:
        WebhookReceiver(SECRET, lambda event: None, store=MemoryDedupeStore(ttl=ttl))
    assert info.value.parameter == "tolerance"
    assert "longer than the replay tolerance" in str(info.value)


def test_an_inbox_retention_not_longer_than_the_tolerance_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="retention"):
        WebhookReceiver(SECRET, lambda e: None, inbox=SQLiteInbox(tmp_path / "inbox.db", retention=600))


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"tolerance": -1}, "tolerance"),
        ({"tolerance": float("nan")}, "tolerance"),
        ({"tolerance": float("inf")}, "tolerance"),
        ({"tolerance": "1h"}, "tolerance"),
        ({"clock_skew": -5}, "clock_skew"),
        ({"handler_timeout": 0}, "handler_timeout"),
        ({"handler_timeout": 10}, "handler_timeout"),
    ],
)
def test_bad_replay_and_budget_settings_are_parameter_errors(kwargs: dict[str, Any], parameter: str) -> None:
    with pytest.raises(ParameterError) as info:
        WebhookReceiver(SECRET, lambda e: None, **kwargs)
    assert info.value.parameter == parameter


def test_construct_event_checks_the_window_only_when_given_a_tolerance() -> None:
    old = _sent(DEFAULT_TOLERANCE * 2)
    assert construct_event(old.body, old.headers, SECRET).data.id  # a stored body checks later
    with pytest.raises(ReplayedWebhookError) as info:
        construct_event(old.body, old.headers, SECRET, tolerance=DEFAULT_TOLERANCE, clock=lambda: NOW)
    assert isinstance(info.value, SignatureVerificationError)
    assert info.value.age == pytest.approx(DEFAULT_TOLERANCE * 2)


def test_sample_payload_is_sent_now_unless_told_otherwise() -> None:
    sent = datetime.fromisoformat(sample_payload()["sent_at"].replace("Z", "+00:00"))
    assert abs(sent - datetime.now(timezone.utc)) < timedelta(minutes=1)
    assert sample_payload(sent_at="2026-01-01T00:00:00.000Z")["sent_at"] == "2026-01-01T00:00:00.000Z"


@given(
    seconds=st.integers(min_value=0, max_value=4_000_000_000 * 1_000_000),
    offset_minutes=st.integers(min_value=-23 * 60 - 59, max_value=23 * 60 + 59),
)
@settings(max_examples=150, deadline=None)
def test_the_replay_window_ends_exactly_at_tolerance_whatever_the_offset_sent(seconds: int, offset_minutes: int) -> None:
    # check_sent_at reads the age without datetime.timestamp(); it must agree with it, to
    # the millisecond here, for any instant and any offset the sender wrote.
    from sports_posts.webhooks.events import check_sent_at, parse_event

    instant = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=seconds)
    written = instant.astimezone(timezone(timedelta(minutes=offset_minutes))).isoformat()
    payload = sample_payload(id="1")
    payload["sent_at"] = written
    event = parse_event(json.dumps(payload).encode())
    assert event.sent_at == instant
    sent = instant.timestamp()
    check_sent_at(event, 60.0, 0.0, sent + 59.999)
    check_sent_at(event, 60.0, 0.0, sent + 0.001)
    with pytest.raises(ReplayedWebhookError):
        check_sent_at(event, 60.0, 0.0, sent + 60.001)
    with pytest.raises(ReplayedWebhookError):
        check_sent_at(event, 60.0, 0.0, sent - 0.001)
