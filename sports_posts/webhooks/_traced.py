"""The telemetry of a webhook delivery: a span and a count per request a receiver answers,
through the SDK's one OpenTelemetry layer (``sports_posts._telemetry``)."""

from __future__ import annotations

import functools
import time
from typing import Any, Callable, Optional, TypeVar

from .. import _telemetry

__all__ = ["delivered", "delivery_started", "traced_delivery"]

F = TypeVar("F", bound=Callable[..., Any])

_PASSED = {"accepted": "accepted", "processed": "processed", "duplicate": "duplicate", "ignored": "ignored"}
"""The outcomes of a delivery that passed; any other is counted as refused, with its reason."""


def traced_delivery(delivery_id_of: Callable[[Any, Any], Optional[str]]) -> Callable[[F], F]:
    """Wrap a receiver's ``handle``: a span and a count per webhook delivery.
    ``delivery_id_of(receiver, headers)`` reads the delivery id (only when recording)."""
    def decorate(handle: F) -> F:
        @functools.wraps(handle)
        def wrapper(receiver: Any, body: Any, headers: Any) -> Any:
            if _telemetry.absent():
                return handle(receiver, body, headers)
            started = time.time_ns()
            response = handle(receiver, body, headers)
            _delivered(receiver, response, lambda: delivery_id_of(receiver, headers), started)
            return response

        return wrapper  # type: ignore[return-value]

    return decorate


def delivery_started() -> int:
    """For ``handle_async``, which records its delivery itself (no wrapping coroutine per
    request): when its span starts (``time.time_ns()``), or 0 without OpenTelemetry."""
    return 0 if _telemetry.absent() else time.time_ns()


def delivered(receiver: Any, response: Any, delivery_id_of: Callable[[Any, Any], Optional[str]], headers: Any,
              started: int) -> None:
    """The span and count of a delivery ``handle_async`` answered, begun at ``started``
    (``delivery_started``: 0 records nothing)."""
    if started:
        _delivered(receiver, response, lambda: delivery_id_of(receiver, headers), started)


def _delivered(receiver: Any, response: Any, delivery_id: Callable[[], Optional[str]], started: int) -> None:
    try:
        _record_delivery(receiver, response, delivery_id(), started)
    except Exception:  # telemetry must never turn an answer into an error
        _telemetry.failed("webhook delivery")


def _record_delivery(receiver: Any, response: Any, delivery_id: Optional[str], started: int) -> None:
    recording = _telemetry.recording()
    if recording is None:
        return
    api, tracing = recording
    outcome = response.outcome or "unknown"
    event = response.event
    kind = getattr(event, "event", None) or "unknown"
    inbox = getattr(receiver, "inbox", None)
    _telemetry.watch_inbox(inbox)
    result = _PASSED.get(outcome, "refused")
    attrs: dict[str, Any] = {"sports_posts.webhook.event": kind, "sports_posts.webhook.outcome": result}
    if result == "refused":
        attrs["sports_posts.webhook.reason"] = outcome
    _telemetry.add("sports_posts.webhook.deliveries", attrs)
    if not tracing:
        return
    trace = api[0]
    span_attrs: dict[str, Any] = {
        **attrs,
        "messaging.system": "sports_posts",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": kind,
        "http.response.status_code": response.status_code,
    }
    if delivery_id:
        span_attrs["messaging.message.id"] = delivery_id[:200]
    post_id = getattr(getattr(event, "data", None), "id", None)
    if post_id:
        span_attrs["messaging.message.conversation_id"] = str(post_id)
    if inbox is not None:
        span_attrs["sports_posts.webhook.inbox"] = _telemetry.inbox_name(inbox)
    span = _telemetry.start_span(api, f"process {kind}", kind=trace.SpanKind.CONSUMER,
                                 attributes=span_attrs, start_time=started)
    if span is None:
        return
    if result == "refused":
        span.set_attribute("error.type", outcome)
        span.set_error(outcome)
    span.end()
