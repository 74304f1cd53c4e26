"""``--header-prefix`` on ``webhooks verify`` / ``listen`` and ``--webhook-header-prefix`` on ``sandbox``."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from sports_posts.cli._webhooks import webhook_listener_app
from sports_posts.webhooks import WebhookHeaders, build_test_request, sample_payload, sign_payload

from ..zygote import suite
from .conftest import run

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
ACME = WebhookHeaders.with_prefix("X-Acme-")


def test_verify_names_the_prefixed_header_and_refuses_a_bad_prefix(tmp_path: Path) -> None:
    body = json.dumps(sample_payload()).encode()
    path = tmp_path / "body.json"
    path.write_bytes(body)
    ok = run("webhooks", "verify", str(path), "--signature", sign_payload(body, "s3"), "--secret", "s3",
             "--header-prefix", "X-Acme-")
    assert ok[0] == 0 and ok[1].startswith("valid: breaking_news")
    empty = run("webhooks", "verify", str(path), "--signature", "", "--secret", "s3", "--header-prefix", "X-Acme")
    assert empty[:2] == (1, "invalid: empty X-Acme-Signature header\n")
    status, _, err = run("webhooks", "verify", str(path), "--signature", "", "--secret", "s3",
                         "--header-prefix", "X_Acme_")
    assert status == 1 and "ParameterError" in err and "'_'" in err


def test_listen_reads_the_prefixed_headers() -> None:
    out = io.StringIO()
    app = webhook_listener_app("s3", out, header_names=ACME)
    renamed = build_test_request(sample_payload(), "s3", header_names=ACME)
    spec = build_test_request(sample_payload(), "s3")
    with TestClient(app) as client:
        refused = client.post("/hook", content=spec.body, headers=spec.headers)
        accepted = client.post("/hook", content=renamed.body, headers=renamed.headers)
    app.receiver.close()
    assert refused.status_code == 401 and refused.json()["error"] == "missing X-Acme-Signature header"
    assert accepted.status_code == 202 and out.getvalue().count("breaking_news") == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_sandbox_command_sends_webhooks_under_the_prefix() -> None:
    seen: list[dict[str, str]] = []
    arrived = threading.Event()

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            seen.append(dict(self.headers.items()))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            arrived.set()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    hook = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, args=(0.05,), daemon=True).start()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPORTS_POSTS_")}
    proc = suite().spawn(
        [sys.executable, "-m", "sports_posts.cli", "sandbox", "--port", str(port), "--webhook-header-prefix", "X-Acme"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )
    try:
        assert proc.stdout is not None
        proc.stdout.readline()  # the base URL line: the server is up
        admin = f"http://127.0.0.1:{port}/_sandbox"
        target = f"http://127.0.0.1:{hook.server_address[1]}/hook"
        assert httpx.post(admin + "/subscriptions", json={"url": target, "secret": "s3"}).status_code == 201
        assert httpx.post(admin + "/events", json={"league": "NFL"}).status_code == 202
        assert arrived.wait(10)  # a bounded wait for the sandbox process's sender thread
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        hook.shutdown()
        hook.server_close()
    assert {"X-Acme-Event", "X-Acme-Delivery", "X-Acme-Signature"} <= set(seen[0])
    assert not any(name.lower().startswith("x-service-") for name in seen[0])
