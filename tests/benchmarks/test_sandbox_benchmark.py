"""The sandbox benchmark's parts work: its load generator against a real sandbox, and its chart."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from benchmarks.sandbox_load import KEY, chart, load
from sports_posts.sandbox import KeyConfig, Sandbox


def test_the_load_generator_drives_every_request_of_the_mix() -> None:
    with Sandbox(seed=3, clock="manual", posts=200, keys={KEY: KeyConfig()}) as sb:
        rate = load(sb.port, 40, deadline=60)
        assert rate > 0
        assert sb.calls(KEY) == 40  # every request of the mix reached the service and was counted


def test_the_chart_is_svg_with_a_point_per_world_size() -> None:
    svg = chart([1_000, 10_000, 100_000], [310.0, 300.0, 305.0], 150.0)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    [line] = root.iter(f"{ns}polyline")
    assert len(line.attrib["points"].split()) == 3
    assert len(list(root.iter(f"{ns}circle"))) == 3
    assert "bare Starlette" in svg and "100,000" in svg
