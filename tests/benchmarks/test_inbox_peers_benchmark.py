"""The inbox-against-its-peers benchmark runs in a quick run, counts its figures (ratios to the
best peer in the same run), and reports a peer this Python cannot install as not measured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import inbox_peers

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(sys.version_info >= (3, 10), reason="pgqueuer installs on Python 3.10 and later")
def test_pgqueuer_on_the_oldest_python_is_reported_as_needing_3_10() -> None:
    assert inbox_peers.missing("pgqueuer on asyncpg") == "not installed (pgqueuer needs Python 3.10+)"
    assert inbox_peers.missing("pgqueuer on psycopg") == "not installed (pgqueuer needs Python 3.10+)"


def test_a_peer_that_is_not_installed_names_the_extra() -> None:
    assert inbox_peers.missing("no_such_queue_xyz") == "not installed (no_such_queue_xyz: pip install -e '.[dev]')"


@pytest.mark.postgres
@pytest.mark.redis
def test_a_quick_run_records_put_and_drain_against_the_best_installed_peer(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--only", "inbox_peers",
                           "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(out.read_text())
    results = {r["name"].split(" vs ")[0]: r for r in figures["results"]}
    info = [i["name"] for i in figures["info"]]
    expected = []
    for ours, peers in (("PostgresInbox", inbox_peers.PEERS_POSTGRES), ("RedisInbox", inbox_peers.PEERS_REDIS)):
        installed = [name for name in peers if inbox_peers.missing(name) is None]
        for name in peers:
            if name not in installed:
                assert f"{name} (against {ours})" in info, "a peer not installed is said so"
        assert f"{ours} and its peers, N = {inbox_peers.N_QUICK}" in info, "the rates of every side"
        if installed:
            expected += [f"{ours} puts one at a time", f"{ours} drain with a do-nothing handler"]
    assert sorted(results) == sorted(expected)
    for result in results.values():
        assert result["unit"] == "x" and result["value"] > 0 and result["detail"]["peer_per_second"] > 0


def test_without_an_installed_peer_the_rates_are_noted_and_nothing_is_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks import run

    monkeypatch.setattr(run, "RESULTS", [])
    monkeypatch.setattr(run, "INFO", [])
    inbox_peers._report(run, "PostgresInbox", {"PostgresInbox": {"put": 2000.0, "drain": 6000.0}},
                        {"procrastinate": "not installed (test)"}, 60)
    assert run.RESULTS == []
    assert {"name": "procrastinate (against PostgresInbox)", "skipped": "not installed (test)"} in run.INFO
    assert any(i["name"] == "PostgresInbox and its peers, N = 60" for i in run.INFO)


def test_the_ratio_is_to_the_best_peer_of_each_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks import run

    monkeypatch.setattr(run, "RESULTS", [])
    monkeypatch.setattr(run, "INFO", [])
    figures = {"RedisInbox": {"put": 3000.0, "drain": 3000.0}, "saq": {"put": 2000.0, "drain": 1000.0},
               "arq": {"put": 1000.0, "drain": 1500.0}}
    inbox_peers._report(run, "RedisInbox", figures, {}, 60)
    put, drain = run.RESULTS
    assert (put.value, put.detail["peer"], put.ok) == (1.5, "saq", True)
    assert (drain.value, drain.detail["peer"], drain.ok) == (2.0, "arq", True)
