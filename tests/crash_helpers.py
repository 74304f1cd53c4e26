"""What the kill -9 tests of the poller and the receiver share: the crash worker as a process,
waiting on another process's state, and the lines it wrote."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from .zygote import Process, suite

WORKER = str(Path(__file__).parent / "crash_worker.py")
ROOT = str(Path(__file__).resolve().parents[1])


def spawn(*args: str) -> Process:
    """The crash worker as a process of its own (a fork of the suite's zygote, tests/zygote.py)."""
    env = {**os.environ, "PYTHONPATH": ROOT}
    return suite().spawn([sys.executable, WORKER, *args], env=env, stderr=subprocess.PIPE)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Wait for another process to reach a state (a safety timeout, not a timed assertion)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []
