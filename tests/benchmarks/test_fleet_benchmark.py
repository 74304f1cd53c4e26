"""The fleet benchmark's figures count: in the run's tally, its JSON and its exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_fleet_figures_are_in_the_json_of_a_run_as_a_module(tmp_path: Path) -> None:
    # As `python -m benchmarks.run`: the section once recorded into a second import of the
    # module, so its three figures were printed but neither counted nor written.
    out = tmp_path / "run.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--only", "fleet", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    names = [r["name"] for r in json.loads(out.read_text())["results"]]
    assert [n.split(" vs ")[0] for n in names] == ["PostgresDedupeStore.claim", "PostgresInbox put + take_due + mark_done",
                                                   "RedisInbox put + take_due + mark_done"]
    info = [i["name"] for i in json.loads(out.read_text())["info"]]
    assert sum("through PgBouncer" in name for name in info) == 2, "the pooler's figures beside the direct ones"
    assert " of 3 targets met" in done.stdout  # quick mode judges nothing: the count is what matters
