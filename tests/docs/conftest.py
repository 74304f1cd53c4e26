"""The documentation site, built once per test run for every test that reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .site import build_site

try:
    import fcntl
except ImportError:  # Windows: each xdist worker builds its own copy
    fcntl = None  # type: ignore[assignment]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """``mkdocs build --strict`` (what CI builds) into a temp directory; its path.

    Under pytest-xdist the workers share one build: the first to ask builds it in the run's
    base temp directory while holding a lock, the others wait on the lock and read it.
    """
    if worker_id == "master" or fcntl is None:
        destination = tmp_path_factory.mktemp("site")
        done = build_site(destination)
        assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
        return destination
    shared = tmp_path_factory.getbasetemp().parent  # one per run, every worker's parent
    destination, outcome = shared / "site", shared / "site-build.json"
    with open(shared / "site-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not outcome.exists():
            done = build_site(destination)
            outcome.write_text(json.dumps([done.returncode, done.stdout, done.stderr]), encoding="utf-8")
        returncode, stdout, stderr = json.loads(outcome.read_text(encoding="utf-8"))
    assert returncode == 0, f"mkdocs build --strict failed:\n{stdout}\n{stderr}"
    return destination
