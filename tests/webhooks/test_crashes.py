"""kill -9 after a webhook is acknowledged, then restart: every acknowledged webhook processed."""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import httpx

from sports_posts.webhooks import build_test_request, sample_payload
from tests.crash_helpers import lines, spawn, wait_for


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

    first = spawn("receive", str(port), secret, str(inbox), str(store), str(out), "block")
    try:
        wait_for(serving, "the first receiver to listen")
        for payload in payloads:
            request = build_test_request(payload, secret)
            answer = httpx.post(url, content=request.body, headers=request.headers, timeout=10)
            assert answer.status_code // 100 == 2, "acknowledged: the service will not send it again"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    assert not lines(out), "nothing was processed before the crash"

    second = spawn("receive", str(port), secret, str(inbox), str(store), str(out), "record")
    try:
        wait_for(lambda: len(lines(out)) >= len(payloads), "the restarted receiver to drain its inbox")
        request = build_test_request(payloads[0], secret)  # a late retry of an event already handled
        assert httpx.post(url, content=request.body, headers=request.headers, timeout=10).status_code == 200
    finally:
        second.send_signal(signal.SIGKILL)
        second.wait(timeout=10)
    handled = lines(out)
    assert sorted(handled) == sorted(p["data"]["id"] for p in payloads), "each acknowledged event exactly once"
