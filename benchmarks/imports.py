"""Import time: what a script pays before its first line runs, against ``import httpx, pydantic``.

Each statement runs in a fresh interpreter under ``-X importtime``; its cost is the sum of
the cumulative times of the top-level imports it triggered (interpreter start-up excluded).
Rounds interleave the SDK's statements with the baseline's, and the best round of each
counts (the least disturbed by other processes). Every module loads from bytecode compiled
once before the rounds, as after ``pip install`` (which compiles what it installs), whatever
``PYTHONDONTWRITEBYTECODE`` says: a run must not compile the package on every start while
its dependencies load compiled.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

BASELINE = "import httpx, pydantic"
STATEMENTS = {
    "client": "from sports_posts import SportsPosts, AsyncSportsPosts",
    "package": "import sports_posts",
    "signature": "from sports_posts.webhooks import verify_signature",
}


def _environment(bytecode: str) -> dict[str, str]:
    """The interpreters' environment: bytecode written once to ``bytecode``, this run's directory."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = bytecode
    return env


def _top_level(statement: str, env: dict[str, str]) -> dict[str, int]:
    """Cumulative microseconds of each top-level import made running ``statement``."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        capture_output=True, text=True, check=True, timeout=60, env=env,
    )
    times: dict[str, int] = {}
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self, cumulative, name = line.split("|")
        if not name.startswith("   "):  # a nested import is inside its parent's figure
            times[name.strip()] = int(cumulative)
    return times


def import_microseconds(statement: str, env: dict[str, str]) -> int:
    """Microseconds the imports of ``statement`` take, interpreter start-up excluded."""
    startup = _top_level("pass", env)
    return sum(us for name, us in _top_level(statement, env).items() if name not in startup)


def best_of(rounds: int) -> dict[str, int]:
    """The best time of each statement and of the baseline over interleaved rounds."""
    best: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="sports-posts-bench-pyc-") as bytecode:
        env = _environment(bytecode)
        for statement in ("pass", BASELINE, *STATEMENTS.values()):  # compiles what they import, once
            _top_level(statement, env)
        for _ in range(rounds):
            for name, statement in {"baseline": BASELINE, **STATEMENTS}.items():
                value = import_microseconds(statement, env)
                best[name] = min(best.get(name, value), value)
    return best
