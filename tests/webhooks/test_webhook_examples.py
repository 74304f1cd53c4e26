"""The examples run: each answers a signed request through its framework's test client."""

from __future__ import annotations

import importlib.util
import logging
import threading
from pathlib import Path
from types import ModuleType

import pytest

from sports_posts.webhooks import build_test_request, sample_payload

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SECRET = "whsec_example_test"
WAIT = 10.0


def _load(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setenv("SPORTS_POSTS_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("WEBHOOK_DEDUPE_DB", str(tmp_path / "dedupe.db"))
    monkeypatch.setenv("WEBHOOK_INBOX_DB", str(tmp_path / "inbox.db"))
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_fastapi_example_accepts_a_signed_event_and_rejects_a_forgery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastapi.testclient import TestClient

    example = _load("webhook_fastapi", tmp_path, monkeypatch)
    handled = threading.Event()

    class Ran(logging.Handler):  # the example's own handler logs each story it handles
        def emit(self, record: logging.LogRecord) -> None:
            handled.set()

    watch, log = Ran(), logging.getLogger("example")
    log.addHandler(watch)
    monkeypatch.setattr(log, "level", logging.INFO)  # restored after the test
    request = build_test_request(sample_payload(), SECRET)
    try:
        with TestClient(example.app) as client:
            assert client.post("/webhooks", content=request.body, headers=request.headers).status_code == 202
            assert handled.wait(WAIT)
            forged = dict(request.headers, **{"X-Service-Signature": "sha256=" + "1" * 64})
            assert client.post("/webhooks", content=request.body, headers=forged).status_code == 401
    finally:
        log.removeHandler(watch)
    assert example.receiver.inbox.counts()["done"] == 1


def test_flask_example_accepts_a_signed_event_and_threads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    example = _load("webhook_flask", tmp_path, monkeypatch)
    client = example.app.test_client()
    first = build_test_request(sample_payload(), SECRET)
    update = build_test_request(sample_payload("breaking_news.update", id="2"), SECRET)
    assert client.post("/webhooks", data=first.body, headers=first.headers).status_code == 202
    assert client.post("/webhooks", data=update.body, headers=update.headers).status_code == 202
    assert client.post("/webhooks", data=first.body, headers=first.headers).status_code == 200  # waits for the first attempt
    assert example.receiver.wait_idle(WAIT)
    assert sorted(e.event for e in example.recent) == ["breaking_news", "breaking_news.update"]
    example.receiver.close()


def test_flask_example_reads_renamed_headers_behind_a_proxy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sports_posts.webhooks import WebhookHeaders

    monkeypatch.setenv("WEBHOOK_HEADER_PREFIX", "X-Acme-")
    example = _load("webhook_flask", tmp_path, monkeypatch)
    client = example.app.test_client()
    renamed = build_test_request(sample_payload(), SECRET, header_names=WebhookHeaders.with_prefix("X-Acme-"))
    spec = build_test_request(sample_payload(), SECRET)
    refused = client.post("/webhooks", data=spec.body, headers=spec.headers)
    assert refused.status_code == 401 and refused.get_json()["error"] == "missing X-Acme-Signature header"
    assert client.post("/webhooks", data=renamed.body, headers=renamed.headers).status_code == 202
    assert example.receiver.wait_idle(WAIT)
    assert [e.delivery_id for e in example.recent] == [renamed.headers["X-Acme-Delivery"]]
    example.receiver.close()
