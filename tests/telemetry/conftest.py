"""OpenTelemetry's SDK with in-memory exporters, installed once as the global providers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass
class Telemetry:
    spans: Any  # InMemorySpanExporter
    reader: Any  # InMemoryMetricReader

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], float]]]:
        """Every data point by metric name: (attributes, value)."""
        out: dict[str, list[tuple[dict[str, Any], float]]] = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                if scope.scope.name != "sports_posts":  # another library's meter
                    continue
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        out.setdefault(metric.name, []).append((dict(point.attributes), point.value))
        return out

    def total(self, name: str, **attrs: Any) -> float:
        """The sum of ``name``'s points whose attributes include ``attrs``."""
        return sum(v for a, v in self.metrics().get(name, []) if all(a.get(k) == x for k, x in attrs.items()))


_INSTALLED: dict[str, Telemetry] = {}


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    """The process's OpenTelemetry providers (set once: the API allows one per process),
    with the spans of earlier tests cleared."""
    if "t" not in _INSTALLED:
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _INSTALLED["t"] = Telemetry(exporter, reader)
    t = _INSTALLED["t"]
    t.spans.clear()
    yield t

