"""Whether OpenTelemetry is configured is asked on every call, through its own getters: a
provider set at any time is seen at the next call."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

from sports_posts import _telemetry


@pytest.fixture
def unset(monkeypatch: pytest.MonkeyPatch) -> Any:
    """No global provider set, whatever earlier tests installed (OpenTelemetry sets each
    once and has no public way back: the test resets its globals)."""
    monkeypatch.setitem(trace.get_tracer_provider.__globals__, "_TRACER_PROVIDER", None)
    monkeypatch.setitem(metrics.get_meter_provider.__globals__, "_METER_PROVIDER", None)
    monkeypatch.delenv("OTEL_PYTHON_TRACER_PROVIDER", raising=False)
    monkeypatch.delenv("OTEL_PYTHON_METER_PROVIDER", raising=False)
    return _telemetry._otel()


def test_without_providers_nothing_is_configured(unset: Any) -> None:
    assert _telemetry._configured(unset) == (False, False)
    assert _telemetry._configured(unset) == (False, False)


def test_a_provider_set_after_the_first_call_is_seen_at_the_next(unset: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _telemetry._configured(unset) == (False, False)
    monkeypatch.setitem(trace.get_tracer_provider.__globals__, "_TRACER_PROVIDER", TracerProvider())
    assert _telemetry._configured(unset) == (True, False)
    monkeypatch.setitem(metrics.get_meter_provider.__globals__, "_METER_PROVIDER", MeterProvider())
    assert _telemetry._configured(unset) == (True, True)


def test_a_provider_named_in_the_environment_is_asked_for(unset: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _telemetry._configured(unset) == (False, False)
    monkeypatch.setenv("OTEL_PYTHON_TRACER_PROVIDER", "sdk_tracer_provider")
    asked: list[str] = []

    def get_tracer_provider() -> Any:  # what OpenTelemetry's getter does with the variable
        asked.append("tracer")
        return TracerProvider()

    monkeypatch.setattr(trace, "get_tracer_provider", get_tracer_provider)
    assert _telemetry._configured(unset) == (True, False)
    assert asked == ["tracer"]


def test_a_replaced_getter_is_asked_on_every_call(unset: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    providers = [trace.ProxyTracerProvider(), TracerProvider()]
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: providers[0])
    assert _telemetry._configured(unset) == (False, False)
    providers.reverse()
    assert _telemetry._configured(unset) == (True, False)
