"""kill -9 in the middle of a poll, then restart: nothing lost, at most one batch repeated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

import pytest

from sports_posts.sandbox import Sandbox

WORKER = str(Path(__file__).parents[1] / "crash_worker.py")
ROOT = str(Path(__file__).resolve().parents[2])


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.Popen([sys.executable, WORKER, *args], env=env, stderr=subprocess.PIPE)


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Wait for another process to reach a state (a safety timeout, not a timed assertion)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def live() -> Iterator[Sandbox]:
    with Sandbox(seed=9, clock="manual", posts=300, posts_per_minute=8.0, late_index_rate=0.3) as sb:
        yield sb



def test_poller_killed_mid_batch_resumes_from_its_file_checkpoint(live: Sandbox, tmp_path: Path) -> None:
    checkpoint, out = tmp_path / "nfl.json", tmp_path / "stored.txt"
    start = live.now()
    first = _spawn("poll", live.base_url, live.api_key, str(checkpoint), str(out), "1000")
    try:
        _wait_for(lambda: len({line.split()[1] for line in _lines(out)}) >= 4, "four batches stored")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    killed = _lines(out)
    second = _spawn("poll", live.base_url, live.api_key, str(checkpoint), str(out), "15")
    assert second.wait(timeout=120) == 0, second.stderr.read() if second.stderr else ""

    rows = [line.split() for line in _lines(out)]
    first_run = [(int(n), post) for _, n, post in rows[: len(killed)]]
    second_run = [post for _, _, post in rows[len(killed):]]
    in_hand = {post for n, post in first_run if n == max(n for n, _ in first_run)}
    repeated = {post for _, post in first_run} & set(second_run)
    assert repeated <= in_hand, "only the batch in hand at the kill may repeat"
    assert len(second_run) == len(set(second_run)), "nothing repeats within a run"
    delivered = {post for _, post in first_run} | set(second_run)
    last_cycle = live.now().timestamp() - 61
    expected = {p.id for p in live.visible_posts("NFL") if not p.author.custom and p.created_at > start
                and p.indexed_at.timestamp() <= last_cycle}
    assert expected <= delivered, f"lost after the crash: {sorted(expected - delivered)[:5]}"
