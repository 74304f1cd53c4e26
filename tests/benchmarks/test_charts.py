"""The benchmarks' charts (benchmarks/charts.py and the SVGs it drew into docs/): axes that
tick at round values, text that stays readable when a phone scales the chart down."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.charts import WIDTH, nice_step, tick_label, ticks
from tests.docs.snippets import ROOT

CHARTS = sorted((ROOT / "docs").glob("*.svg"))
PHONE_COLUMN_PX = 358  # a 390 px screen less the page's margins


def _round(value: float) -> bool:
    """0, or 1, 2 or 5 times a power of ten (times a whole number for the axis' multiples)."""
    if value == 0:
        return True
    mantissa = float(f"{value:.6e}".split("e")[0])
    return mantissa in (1.0, 2.0, 5.0)


@pytest.mark.parametrize(("top", "expected"), [
    (10_675, [0, 2_000, 4_000, 6_000, 8_000, 10_000, 12_000]),
    (9_282, [0, 2_000, 4_000, 6_000, 8_000, 10_000]),
    (171, [0, 50, 100, 150, 200]),
    (7.43, [0, 2, 4, 6, 8]),
    (0.92, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    (137, [0, 50, 100, 150]),
])
def test_ticks_are_round_and_cover_the_data(top: float, expected: list[float]) -> None:
    assert ticks(top) == expected
    assert _round(nice_step(top))


def test_tick_labels_show_the_step_s_decimals_only() -> None:
    assert [tick_label(v, 2_000) for v in (0, 10_000)] == ["0", "10,000"]
    assert [tick_label(v, 0.2) for v in (0, 0.4)] == ["0.0", "0.4"]


def test_the_docs_have_charts() -> None:
    assert {p.name for p in CHARTS} >= {"sandbox-cost.svg", "receiver-throughput.svg", "receiver-p99.svg"}


@pytest.mark.parametrize("chart", CHARTS, ids=[p.name for p in CHARTS])
def test_a_chart_reads_on_a_phone(chart: Path) -> None:
    svg = chart.read_text(encoding="utf-8")
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))  # type: ignore[union-attr]
    smallest = min(float(s) for s in re.findall(r'font-size="([\d.]+)"', svg))
    assert width <= WIDTH
    assert smallest * min(1.0, PHONE_COLUMN_PX / width) >= 10


@pytest.mark.parametrize("chart", CHARTS, ids=[p.name for p in CHARTS])
def test_a_chart_s_axis_ticks_are_round(chart: Path) -> None:
    # the y axis' labels: right-aligned text at the axis' left
    labels = re.findall(r'text-anchor="end">([\d,.]+)</text>', chart.read_text(encoding="utf-8"))
    values = [float(label.replace(",", "")) for label in labels]
    assert len(values) >= 3, labels
    step = values[1] - values[0]
    assert _round(step), labels
    assert all(abs(b - a - step) < 1e-9 for a, b in zip(values, values[1:])), labels
