"""Every example runs as a user would run it: a process of its own (a fork of a zygote that has
imported the SDK, tests/zygote.py) against an embedded sandbox."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..zygote import CLIENT, shared, suite

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# Example, arguments that bound its run, text its output must contain.
RUNS = [
    ("quickstart.py", [], ["Trending", "refused before sending: teams", "this script:"]),
    ("async_quickstart.py", [], ["NFL ", "hockey posts"]),
    ("poll_league.py", ["NBA", "--for", "2"], [" NBA @"]),
    # A day back: the last hour of a quiet league can hold no post at all (MLB in November).
    ("async_poll_many_leagues.py", ["NFL", "MLB", "--for", "2", "--hours", "24"], ["[NFL] ", "[MLB] "]),
]


def run_example(name: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPORTS_POSTS_")}
    env["SPORTS_POSTS_LOG"] = "info"  # connect() logs (never prints) which service it uses
    return suite().run([sys.executable, str(EXAMPLES / name), *args], cwd=cwd, env=env, timeout=120)


@pytest.mark.parametrize(("name", "args", "expected"), RUNS, ids=[r[0] for r in RUNS])
def test_example_runs_against_the_sandbox(name: str, args: list[str], expected: list[str], tmp_path: Path) -> None:
    done = run_example(name, args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "embedded sandbox" in done.stderr
    for text in expected:
        assert text in done.stdout


# "Costs: up to N calls" in the docstring of an example that ends by itself.
STATED = re.compile(r"Costs: up to (\d+) calls")


@pytest.mark.parametrize("name", ["quickstart.py", "async_quickstart.py"])
def test_example_spends_what_its_docstring_states(name: str, tmp_path: Path) -> None:
    from tests.docs.snippets import install_loopback_guard

    docstring = ast.get_docstring(ast.parse((EXAMPLES / name).read_text(encoding="utf-8"))) or ""
    stated = STATED.search(docstring)
    assert stated, f"{name}'s docstring does not say what it costs"
    counts = tmp_path / "calls.txt"
    guard = install_loopback_guard(tmp_path)  # also counts the calls of the embedded sandbox
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPORTS_POSTS_")}
    env.update(PYTHONPATH=os.pathsep.join([guard, str(EXAMPLES.parent)]), SPORTS_POSTS_DOCS_CALLS=str(counts))
    done = shared(CLIENT).run([sys.executable, str(EXAMPLES / name)], cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    calls = sum(int(n) for n in counts.read_text().split())
    assert 1 <= calls <= int(stated.group(1)), f"{name} made {calls} billed calls"


def test_every_example_is_covered() -> None:
    ran = {name for name, _, _ in RUNS} | {"webhook_fastapi.py", "webhook_flask.py"}  # tests/webhooks
    ran |= {"webhook_fleet_postgres.py"}  # test_fleet_example.py
    ran |= {"fleet_worker.py"}  # test_fleet_worker_example.py: it needs the test suite's Redis and PostgreSQL
    assert {p.name for p in EXAMPLES.glob("*.py")} <= ran
