"""The poller's call count on the recorded scenario of ``benchmarks/poller.py``: a count, not a time."""

from __future__ import annotations

from benchmarks.poller import poller_calls


def test_a_recorded_nfl_sunday_costs_at_most_1_10x_the_minimum_calls() -> None:
    # poller_calls() itself asserts that every one of the scenario's posts, late-indexed
    # ones included, is delivered exactly once.
    calls = poller_calls()
    assert calls["posts"] > 9_000
    assert calls["oracle_minimum"] <= calls["windowed_minimum"] <= calls["calls"]
    assert calls["calls"] <= 1.10 * calls["oracle_minimum"]
    assert calls["calls"] == calls["windowed_minimum"]  # not one call beyond what the window needs
