"""The receiver and dedupe benchmarks keep working: their baseline and chart, without timing anything."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from benchmarks.dedupe import _dict_and_lock
from benchmarks.receiver import _requests, charts, report_in_process
from sports_posts.webhooks import WebhookReceiver, construct_event
from sports_posts.webhooks.receiver import WebhookResponse

SVG = "{http://www.w3.org/2000/svg}"


def test_the_dict_and_lock_baseline_does_the_same_check_and_set_as_the_memory_store() -> None:
    claim = _dict_and_lock()
    assert claim("a") and not claim("a") and claim("b")


def test_the_charts_are_svg_with_a_line_per_app_for_each_metric() -> None:
    rows = [{"concurrency": c, "sdk_rps": 900.0 * c ** 0.5, "bare_rps": 800.0 * c ** 0.5,
             "sdk_p99_ms": 2.0 * c, "bare_p99_ms": 1.8 * c} for c in (1, 4, 16, 64)]
    drawn = charts(rows)
    assert set(drawn) == {"rps", "p99_ms"}
    for metric, title in (("rps", "Receiver throughput"), ("p99_ms", "Receiver p99 latency")):
        root = ET.fromstring(drawn[metric])
        assert root.tag == SVG + "svg"
        lines = root.findall(SVG + "polyline")
        assert len(lines) == 2 and all(len(line.get("points", "").split()) == 4 for line in lines)
        texts = {t.text for t in root.iter(SVG + "text")}
        assert {title, "64"} <= texts


def test_the_load_is_signed_new_stories_the_receiver_accepts() -> None:
    raw = _requests("t", 3)
    head, body = raw[0].split(b"\r\n\r\n", 1)
    headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:])
    event = construct_event(body, headers, "whsec_benchmark_receiver", tolerance=3600)
    assert event.data.id == "t0000000"
    receiver = WebhookReceiver("whsec_benchmark_receiver", lambda e: None)
    response: WebhookResponse = receiver.handle(body, headers)
    assert response.status_code == 202
    assert len({r.split(b"\r\n\r\n", 1)[1] for r in raw}) == 3  # each request a new story


def test_the_in_process_figure_has_its_target_with_eager_tasks_and_is_reported_without() -> None:
    """Issue 52: from Python 3.12 (eager tasks) the in-process ratio keeps its 0.6x target;
    before, it is a figure without one (the throughput over uvicorn keeps its own)."""
    import types

    calls: list[tuple[str, tuple[object, ...]]] = []
    bench = types.SimpleNamespace(record=lambda *a, **k: calls.append(("record", a)),
                                  note=lambda *a, **k: calls.append(("note", a)))
    direct = {"sdk_us": 30.0, "hand_us": 15.0, "ratio": 0.5}
    report_in_process(direct, bench, eager=True)  # type: ignore[arg-type]
    report_in_process(direct, bench, eager=False)  # type: ignore[arg-type]
    (kind, args), (kind2, args2) = calls
    assert (kind, args[1:5]) == ("record", (0.5, "x", ">= 0.6", False))
    assert kind2 == "note" and "0.500x" in str(args2[1])
