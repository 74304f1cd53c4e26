"""Fixtures of the sandbox tests: sandboxes on a manual clock, an httpx client, a webhook receiver."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional

import httpx
import pytest
from jsonschema import Draft202012Validator, FormatChecker

from sports_posts.sandbox import Sandbox
from tests.stacks import loopback_tls


@pytest.fixture(scope="session")
def sb() -> Iterator[Sandbox]:
    """One shared sandbox (seed 7, manual clock): tests must not change its world, clock or keys."""
    with Sandbox(seed=7, clock="manual") as sandbox:
        yield sandbox


@pytest.fixture
def fresh() -> Iterator[Sandbox]:
    """A private sandbox (manual clock, a smaller world) for tests that change state."""
    with Sandbox(seed=11, clock="manual", posts=600) as sandbox:
        yield sandbox


def client_for(sandbox: Sandbox, key: Optional[str] = None, bare: bool = False) -> httpx.Client:
    key = key or sandbox.api_key
    return httpx.Client(
        base_url=sandbox.base_url,
        headers={"Authorization": key if bare else f"Bearer {key}"},
        timeout=10,
        verify=loopback_tls(),
    )


@pytest.fixture
def client(sb: Sandbox) -> Iterator[httpx.Client]:
    with client_for(sb) as c:
        yield c


@pytest.fixture
def fresh_client(fresh: Sandbox) -> Iterator[httpx.Client]:
    with client_for(fresh) as c:
        yield c


@pytest.fixture(scope="session")
def schema_of() -> Callable[[str], Draft202012Validator]:
    """A validator for one component schema of the shipped OpenAPI document."""
    from importlib import resources

    doc = json.loads(resources.files("sports_posts.sandbox").joinpath("openapi.json").read_text("utf-8"))

    checker = FormatChecker()

    @checker.checks("date-time", raises=ValueError)
    def is_datetime(value: object) -> bool:
        if not isinstance(value, str):
            return True
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return parsed.tzinfo is not None and "T" in value

    @checker.checks("uri")
    def is_uri(value: object) -> bool:
        return not isinstance(value, str) or value.startswith(("https://", "http://"))

    def make(name: str) -> Draft202012Validator:
        root = {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
        return Draft202012Validator(root, format_checker=checker)

    return make


class Receiver:
    """A loopback HTTP endpoint that records webhook requests and answers with scripted statuses."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.default_status = 200
        self.block: Optional[threading.Event] = None
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.requests.append({"headers": dict(self.headers.items()), "body": body,
                                              "path": self.path})
                    status = receiver.statuses.pop(0) if receiver.statuses else receiver.default_status
                if receiver.block is not None:
                    receiver.block.wait(5)
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        if self.block is not None:
            self.block.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    try:
        yield r
    finally:
        r.close()
