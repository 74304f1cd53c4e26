"""The sports-posts command against an embedded sandbox, and against a 'real' service URL."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from sports_posts import SportsPosts
from sports_posts.cli._webhooks import webhook_listener_app
from sports_posts.sandbox import Sandbox
from sports_posts.webhooks import build_test_request, sample_payload, sign_payload

from ..zygote import suite
from .conftest import run


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    """A sandbox standing in for the real service, reached through the environment."""
    with Sandbox(seed=3) as sb:
        monkeypatch.setenv("SPORTS_POSTS_API_KEY", sb.api_key)
        monkeypatch.setenv("SPORTS_POSTS_BASE_URL", sb.base_url)
        yield sb


def test_posts_table_from_an_embedded_sandbox() -> None:
    status, out, err = run("posts", "--leagues", "NBA", "--limit", "5")
    assert status == 0
    header, *lines = out.strip().splitlines()
    assert header.split()[:2] == ["created", "(UTC)"]
    assert len(lines) == 5 and all(" NBA " in line for line in lines)
    assert "embedded sandbox" in err and "5 posts, 1 call\n" in err


def test_posts_json_lines_cross_pages() -> None:
    status, out, err = run("posts", "--leagues", "NHL", "--page-size", "3", "--limit", "7", "--json",
                           "--highlight")
    assert status == 0
    posts = [json.loads(line) for line in out.strip().splitlines()]
    assert len(posts) == 7 and len({p["id"] for p in posts}) == 7
    assert all(p["league"] == "NHL" and p["highlight"] is True for p in posts)
    assert "7 posts, 3 calls" in err


def test_uses_the_service_named_by_the_environment(service: Sandbox) -> None:
    before = service.calls()
    status, out, err = run("posts", "--sports", "basketball", "--limit", "2")
    assert status == 0 and service.base_url in err and "using the service" in err
    assert service.calls() == before + 1


def test_a_key_without_a_base_url_is_an_error_not_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", "sk_customer_real_key_123")
    status, out, err = run("posts", "--limit", "1")
    assert status == 1 and out == ""
    assert "SPORTS_POSTS_BASE_URL" in err and "--sandbox" in err and "sk_customer_real_key_123" not in err
    assert "embedded sandbox" not in err


def test_sandbox_flag_asks_for_the_sandbox_explicitly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", "sk_customer_real_key_123")
    monkeypatch.setenv("SPORTS_POSTS_BASE_URL", "https://service.invalid/v1")
    status, out, err = run("account", "--sandbox")
    assert status == 0 and "plan" in out
    assert "using an embedded sandbox" in err and "SPORTS_POSTS_BASE_URL is set but ignored" in err


def test_a_sandbox_key_selects_a_sandbox_that_accepts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", "sp_sandbox_ci_key")
    status, out, err = run("teams", "--league", "NHL")
    assert status == 0 and "SPORTS_POSTS_API_KEY is a sandbox key" in err and "32 teams" in err


def test_bad_parameter_is_a_clear_error_and_sends_nothing(service: Sandbox,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    before = service.calls()
    status, _, err = run("posts", "--page-size", "500")  # in the words typed, not "limit: 500"
    message = err.splitlines()[-1]
    assert status == 2 and "argument --page-size: at most 100" in message and "limit" not in message
    status, out, err = run("posts", "--media-type", "vidoe")
    assert status == 1 and "ParameterError: --media-type: 'vidoe'" in err and "did you mean 'video'" in err
    assert "--unchecked" in err and "Unchecked(" not in err
    assert service.calls() == before
    status, out, err = run("posts", "--teams", "1,2")
    assert status == 1 and "id_type" in err


def test_service_errors_are_reported_not_raised(monkeypatch: pytest.MonkeyPatch, service: Sandbox) -> None:
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", "not-a-key")
    status, out, err = run("account")
    assert status == 1 and "AuthenticationError" in err and "not-a-key" not in err


def test_account_and_compliance(service: Sandbox) -> None:
    status, out, _ = run("account")
    assert status == 0 and "plan" in out and "calls used" in out
    post = service.visible_posts()[0]
    service.delete_post(post.id)
    status, out, _ = run("account", "--x-ids", "--json")
    assert status == 0 and post.id in json.loads(out)["ids_to_delete"]


def test_teams_with_reference_column() -> None:
    status, out, err = run("teams", "NBA", "--reference-id", "nba_id")
    assert status == 0 and "30 teams" in err
    header, *lines = out.strip().splitlines()
    assert header.split() == ["service_id", "team", "conference", "division", "nba_id"]
    assert len(lines) == 30 and all(line.split()[-1].isdigit() for line in lines)
    locations = [line.split()[1] for line in lines]
    assert locations == sorted(locations)


def test_poll_prints_a_batch_then_stops(tmp_path: Path) -> None:
    checkpoint = tmp_path / "nhl.json"
    status, out, err = run("poll", "--leagues", "NHL", "--since", "2000-01-01T00:00:00Z", "--max-batches", "1",
                           "--checkpoint", str(checkpoint), "--json")
    assert status == 0, err
    ids = [json.loads(line)["id"] for line in out.strip().splitlines()]
    assert ids and len(ids) == len(set(ids))
    assert checkpoint.exists(), "the delivered batch is committed when the poller is closed"
    assert "1 batch, " in err


def test_poll_run_in_process_gives_sigterm_back_when_it_returns() -> None:
    """While polling, SIGTERM stops the poller; once ``main`` returns, the caller's handler is
    back, so a script that called it still ends on SIGTERM."""
    def mine(signum: int, frame: object) -> None:
        raise AssertionError("not called")

    before = signal.signal(signal.SIGTERM, mine)
    try:
        status, _, err = run("poll", "--leagues", "NHL", "--since", "2000-01-01T00:00:00Z", "--max-batches", "1")
        assert status == 0, err
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, before)


def test_webhooks_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = json.dumps(sample_payload()).encode()
    path = tmp_path / "body.json"
    path.write_bytes(body)
    signature = sign_payload(body, "s3cret")
    status, out, _ = run("webhooks", "verify", str(path), "--signature", signature, "--secret", "s3cret")
    assert status == 0 and out.startswith("valid: breaking_news")
    monkeypatch.setenv("SPORTS_POSTS_WEBHOOK_SECRET", "other")
    status, out, _ = run("webhooks", "verify", str(path), "--signature", signature)
    assert status == 1 and out.startswith("invalid") and "other" not in out
    status, out, err = run("webhooks", "verify", str(path), "--signature", "sha256=zz")
    assert status == 1


def test_webhooks_listen_app_prints_each_verified_event_once() -> None:
    out = io.StringIO()
    app = webhook_listener_app("s3cret", out)
    request = build_test_request(sample_payload(), "s3cret")
    with TestClient(app) as client:
        first = client.post("/hook", content=request.body, headers=dict(request.headers))
        again = client.post("/hook", content=request.body, headers=dict(request.headers))
        forged = client.post("/hook", content=request.body, headers={"X-Service-Signature": "sha256=" + "0" * 64})
    app.receiver.close()
    assert first.status_code // 100 == 2 and again.status_code // 100 == 2 and forged.status_code == 401
    assert out.getvalue().count("breaking_news") == 1


def test_sandbox_command_serves_until_terminated() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPORTS_POSTS_")}
    proc = suite().spawn([sys.executable, "-m", "sports_posts.cli", "sandbox", "--port", str(port)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().split()[-1]
        api_key = proc.stdout.readline().split()[-1]
        assert base_url == f"http://127.0.0.1:{port}/v1"
        with SportsPosts(api_key=api_key, base_url=base_url) as client:
            assert client.account.information().company.plan == "paid"
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_demo_exits_zero_with_a_summary() -> None:
    status, out, _ = run("demo")
    assert status == 0, out
    for heading in ("Trending", "A league", "A team", "A player", "Nearby", "A game", "Polling", "Webhooks", "Summary"):
        assert f"== {heading}" in out
    assert "all good" in out and "repeated: 0" in out


def test_without_the_sandbox_extra_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # `import uvicorn` now raises ImportError
    status, out, err = run("posts", "--limit", "1")
    assert status == 1
    assert "pip install 'sports-posts[sandbox]'" in err and "Traceback" not in err
