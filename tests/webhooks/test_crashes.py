"""kill -9 after a webhook is acknowledged, then restart: every acknowledged webhook processed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import httpx

from sports_posts.webhooks import build_test_request, sample_payload

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


def test_receiver_killed_after_acknowledging_processes_every_event_after_restart(tmp_path: Path) -> None:
    secret = "whsec_crash_test_5FqK2"
    inbox, store, out = tmp_path / "inbox.sqlite3", tmp_path / "dedupe.sqlite3", tmp_path / "handled.txt"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/webhooks"
    payloads = [sample_payload(id=f"17900000000000{i:05d}") for i in range(12)]

    def serving() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                return True
        except OSError:
            return False

    first = _spawn("receive", str(port), secret, str(inbox), str(store), str(out), "block")
    try:
        _wait_for(serving, "the first receiver to listen")
        for payload in payloads:
            request = build_test_request(payload, secret)
            answer = httpx.post(url, content=request.body, headers=request.headers, timeout=10)
            assert answer.status_code // 100 == 2, "acknowledged: the service will not send it again"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    assert not _lines(out), "nothing was processed before the crash"

    second = _spawn("receive", str(port), secret, str(inbox), str(store), str(out), "record")
    try:
        _wait_for(lambda: len(_lines(out)) >= len(payloads), "the restarted receiver to drain its inbox")
        request = build_test_request(payloads[0], secret)  # a late retry of an event already handled
        assert httpx.post(url, content=request.body, headers=request.headers, timeout=10).status_code == 200
    finally:
        second.send_signal(signal.SIGKILL)
        second.wait(timeout=10)
    handled = _lines(out)
    assert sorted(handled) == sorted(p["data"]["id"] for p in payloads), "each acknowledged event exactly once"
