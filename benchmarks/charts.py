"""The benchmarks' charts: plain SVG line charts for docs/performance.md.

Each chart is one narrow panel (360 units wide, text 11 units and up), so that shown at its
own width on a wide screen or scaled to a phone's 358 px column its text stays at least
10 px tall; axes tick at round values (steps of 1, 2 or 5 times a power of ten).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional
from xml.sax.saxutils import escape

WIDTH = 360
TEXT = 11  # the smallest text, in SVG units (= px at the chart's own width)


@dataclass(frozen=True)
class Series:
    """One line: its name in the legend, its colour and a value per x label."""

    name: str
    colour: str
    values: list[float]


@dataclass(frozen=True)
class Reference:
    """A horizontal dashed line across the plot, labelled (a baseline)."""

    name: str
    colour: str
    value: float
    unit: str = ""


def nice_step(span: float, intervals: int = 6) -> float:
    """The smallest of 1, 2 or 5 times a power of ten that covers ``span`` in at most ``intervals`` steps."""
    if span <= 0:
        return 1.0
    raw = span / intervals
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if factor * magnitude >= raw * (1 - 1e-9):
            return factor * magnitude
    return 10.0 * magnitude  # pragma: no cover - the loop always returns


def ticks(top: float, intervals: int = 6) -> list[float]:
    """Round tick values from 0 to the first multiple of the step at or above ``top``."""
    step = nice_step(top, intervals)
    count = max(1, math.ceil(top / step - 1e-9))
    return [round(step * i, 10) for i in range(count + 1)]


def tick_label(value: float, step: float) -> str:
    """``10,000``, ``150`` or ``0.5``: as many decimals as the step needs, none for whole steps."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    return f"{value:,.{decimals}f}"


def line_chart(*, title: str, x_title: str, y_title: str, x_labels: list[str], series: list[Series],
               reference: Optional[Reference] = None, point_labels: bool = False) -> str:
    """A line chart over equally spaced x labels (a log scale when they grow by a factor)."""
    left, right, top_pad, plot_height = 58, 14, 34, 170
    width = WIDTH
    values = [v for s in series for v in s.values] + ([reference.value] if reference else [])
    axis = ticks(max(values))
    step = axis[1] - axis[0]
    bottom_y = top_pad + plot_height
    inset = 18  # the first and last points stay clear of the axes

    def x(i: int) -> float:
        span = width - left - right - 2 * inset
        return left + inset + span * (i / max(1, len(x_labels) - 1))

    def y(value: float) -> float:
        return bottom_y - plot_height * value / axis[-1]

    def text(px: float, py: float, content: str, size: int = TEXT, anchor: str = "middle", extra: str = "") -> str:
        return (f'<text x="{px:.1f}" y="{py:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>'
                f"{escape(content)}</text>")

    parts = [text(width / 2, 18, title, 13, extra=' font-weight="bold"')]
    for value in axis:
        parts.append(f'<line x1="{left}" y1="{y(value):.1f}" x2="{width - right}" y2="{y(value):.1f}" stroke="#ddd"/>')
        parts.append(text(left - 5, y(value) + 4, tick_label(value, step), anchor="end"))
    parts.append(f'<line x1="{left}" y1="{bottom_y}" x2="{width - right}" y2="{bottom_y}" stroke="#444"/>')
    parts.append(f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{bottom_y}" stroke="#444"/>')
    for i, label in enumerate(x_labels):
        parts.append(text(x(i), bottom_y + 16, label))
    parts.append(text((left + width - right) / 2, bottom_y + 34, x_title, 12))
    middle = top_pad + plot_height / 2
    parts.append(text(13, middle, y_title, 12, extra=f' transform="rotate(-90 13 {middle:.1f})"'))
    if reference is not None:
        parts.append(f'<line x1="{left}" y1="{y(reference.value):.1f}" x2="{width - right}" '
                     f'y2="{y(reference.value):.1f}" stroke="{reference.colour}" stroke-dasharray="6 4"/>')
    for line in series:
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(line.values))
        parts.append(f'<polyline fill="none" stroke="{line.colour}" stroke-width="2" points="{points}"/>')
        for i, value in enumerate(line.values):
            parts.append(f'<circle cx="{x(i):.1f}" cy="{y(value):.1f}" r="3" fill="{line.colour}"/>')
            if point_labels:
                parts.append(text(x(i), y(value) - 8, tick_label(value, 1.0 if value >= 10 else 0.1)))
    legend = [(s.name, s.colour, False) for s in series]
    if reference is not None:
        shown = tick_label(reference.value, 1.0 if reference.value >= 10 else 0.1)
        label = f"{reference.name}: {shown} {reference.unit}".rstrip()
        legend.append((label, reference.colour, True))
    legend_y = bottom_y + 56
    for n, (name, colour, dashed) in enumerate(legend):
        row = legend_y + 18 * n
        if dashed:
            parts.append(f'<line x1="{left}" y1="{row - 4}" x2="{left + 14}" y2="{row - 4}" stroke="{colour}" '
                         'stroke-width="2" stroke-dasharray="4 2"/>')
        else:
            parts.append(f'<rect x="{left}" y="{row - 9}" width="14" height="10" fill="{colour}"/>')
        parts.append(text(left + 20, row, name, anchor="start"))
    height = legend_y + 18 * (len(legend) - 1) + 10
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="{TEXT}">\n'
            + "\n".join(parts) + "\n</svg>\n")
