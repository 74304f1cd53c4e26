"""examples/fleet_worker.py runs as a user would run it, on both stores, against a sandbox."""

from __future__ import annotations

from pathlib import Path

from tests.examples.test_examples import run_example


def test_the_fleet_worker_example_polls_under_a_lease(store_url: str, tmp_path: Path) -> None:
    done = run_example("fleet_worker.py", ["NBA", "--store", store_url, "--for", "2"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "embedded sandbox" in done.stderr and "taken by" in done.stderr
    assert " NBA @" in done.stdout
