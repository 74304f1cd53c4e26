"""docs/webhooks.md's "Testing your endpoint" block in a customer's strict suite: warnings
are errors and httpx2 is not installed (Starlette's TestClient then warns)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .snippets import LOOPBACK_ONLY, collect, run

WITHOUT_HTTPX2 = "\nimport sys\nsys.modules['httpx2'] = None  # as if not installed\n"


def test_the_endpoint_test_block_runs_with_warnings_as_errors_and_no_httpx2(tmp_path: Path) -> None:
    page = Path("docs/webhooks.md")
    text = (Path(__file__).resolve().parents[2] / page).read_text(encoding="utf-8")
    section = text.split("\n## Testing your endpoint\n", 1)[1].split("\n## ", 1)[0]
    [block] = [s for s in collect()[0] if s.page == str(page) and s.code.strip() in section]
    guard, workdir = tmp_path / "guard", tmp_path / "work"
    guard.mkdir()
    workdir.mkdir()
    (guard / "sitecustomize.py").write_text(LOOPBACK_ONLY + WITHOUT_HTTPX2, encoding="utf-8")
    env = {name: os.environ[name] for name in ("PATH", "LANG", "TZ") if name in os.environ}
    env.update(PYTHONPATH=str(guard), PYTHONWARNINGS="error", HOME=str(workdir))
    outcome = run(block, workdir, env, sys.executable, 60.0)
    assert outcome.ok, outcome.output
