"""The CLI's first hour: interrupts, closed pipes, bad ports and
binds end in one clear line; options read as typed; service text never reaches the
terminal raw; the signing secret stays off the command line."""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

import sports_posts.cli._posts as cli
from sports_posts.cli import build_parser, main
from sports_posts.webhooks import sample_payload, sign_payload
from tests.wire import spec_post

from ..zygote import suite
from .conftest import run

BASE_URL = "https://api.example.test/v1"
SECRET = "whsec_test_cli_first_hour"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    """The environment names a mocked service."""
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", "sk_test_cli_first_hour")
    monkeypatch.setenv("SPORTS_POSTS_BASE_URL", BASE_URL)
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        yield router


def _page(*texts: str) -> dict[str, Any]:
    items = [spec_post(f"p{i}", "2026-11-21T12:00:00Z", text=text, league="NFL",
                       author_username="a\x1b]52;c;ZXZpbA==\x07") for i, text in enumerate(texts)]
    return {"pagination": {"page": 1, "limit": 20, "has_next": False, "has_prev": False}, "items": items}


HOSTILE = ["\x1b[2J\x1b[H cleared", "bell\x07", "hid\x08\x08\x08den", "csi\x9b31m", "rtl\u202eevil", "del\x7f"]


def _no_controls(text: str) -> bool:
    return not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text)


# --------------------------------------------------------------------------- 31: terminal


@pytest.mark.parametrize("as_json", [False, True])
def test_service_text_is_printed_escaped(api: respx.MockRouter, as_json: bool) -> None:
    api.get("/posts").mock(return_value=httpx.Response(200, json=_page(*HOSTILE)))
    status, out, err = run("posts", "--limit", "6", *(["--json"] if as_json else []))
    assert status == 0, err
    assert _no_controls(out) and _no_controls(err)
    assert "\\u001b" in out and "\\u0007" in out and "\\u009b" in out
    if as_json:  # still JSON, still the same text
        texts = [json.loads(line)["text"] for line in out.splitlines()]
        assert texts == HOSTILE


def test_a_service_error_message_is_printed_escaped(api: respx.MockRouter) -> None:
    body = {"ok": False, "error": {"code": "BAD_REQUEST", "message": "bad\x1b[2J\x07 value"}}
    api.get("/posts").mock(return_value=httpx.Response(400, json=body))
    status, out, err = run("posts", "--limit", "1")
    assert status == 1 and _no_controls(err) and "bad\\u001b[2J\\u0007 value" in err


# --------------------------------------------------------------------------- 30.7: crashes


def test_ctrl_c_during_posts_is_one_line_and_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "print_posts", interrupted)
    status, out, err = run("posts", "--sandbox", "--limit", "1")
    assert status == 130
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "sports-posts: interrupted"


@pytest.mark.parametrize("argv", [["sandbox", "--port", "99999"], ["sandbox", "--port", "-1"],
                                  ["webhooks", "listen", "--port", "70000"]])
def test_a_port_out_of_range_is_an_argparse_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2 and "argument --port: a port is 0 to 65535" in err
    assert "OverflowError" not in err


@pytest.mark.parametrize("limit", ["1000", "3"])
def test_a_closed_pipe_ends_quietly(limit: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPORTS_POSTS_")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(cli.__file__).parents[2]), env.get("PYTHONPATH", "")])
    proc = suite().spawn([sys.executable, "-m", "sports_posts.cli", "posts", "--sandbox", "--limit", limit,
                          "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    if limit == "1000":  # far more than a pipe's buffer: the writer meets the closed end mid-way
        assert json.loads(proc.stdout.readline())["id"]
    # else closed before the sandbox starts: the few lines meet it when flushed
    proc.stdout.close()  # `| head -1`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Broken pipe" not in err and "Traceback" not in err and "Exception ignored" not in err


def test_listen_says_the_port_it_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    bound: list[int] = []

    def serve(self: Any, sockets: list[socket.socket]) -> None:
        bound.extend(s.getsockname()[1] for s in sockets)
        self.started = True  # then ends at once: a server that stops by itself is an error

    monkeypatch.setattr(uvicorn.Server, "run", serve)
    monkeypatch.setenv("SPORTS_POSTS_WEBHOOK_SECRET", SECRET)
    status, _, err = run("webhooks", "listen", "--port", "0")
    assert len(bound) == 1 and bound[0] != 0
    assert f"listening on http://127.0.0.1:{bound[0]}/" in err
    assert status == 1 and "the listener stopped by itself" in err


def test_listen_on_a_port_in_use_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPORTS_POSTS_WEBHOOK_SECRET", SECRET)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, _, err = run("webhooks", "listen", "--port", str(port))
    assert status == 1 and "listening on" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"sports-posts: error: SportsPostsError: cannot listen on 127.0.0.1:{port}: "
                           "Address already in use (another process listens there")


# --------------------------------------------------------------------------- 30.8: confusing


def test_timeout_and_a_retry_notice(api: respx.MockRouter) -> None:
    # Retry-After: 0, so that the CLI's client (its real sleep) waits no time before the retry.
    api.get("/posts").mock(side_effect=[httpx.Response(503, headers={"Retry-After": "0"}), httpx.Response(200, json=_page("ok"))])
    status, out, err = run("posts", "--limit", "1", "--timeout", "5")
    assert status == 0, err
    assert len(api.calls) == 2 and re.search(r"sports-posts: retrying in 0(\.0+)?s \(attempt 1 failed", err)
    assert api.calls[0].request.extensions["timeout"]["read"] <= 5


@pytest.mark.parametrize("value", ["0", "-1", "nan", "never"])
def test_a_bad_timeout_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["posts", "--timeout", value]) == 2
    assert "argument --timeout" in capsys.readouterr().err


def test_teams_lookup_hints_at_reference_id() -> None:
    status, _, err = run("teams", "--sandbox", "--league", "NFL", "--lookup", "ARI")
    assert status == 1 and "NotFoundError" in err
    assert "sports-posts teams --league NFL --lookup ARI --reference-id code" in err
    status, out, err = run("teams", "--sandbox", "--league", "NFL", "--lookup", "ARI", "--reference-id", "code")
    assert status == 0 and "ARI" in out and "hint" not in err


def test_verify_refuses_a_body_outside_the_replay_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPORTS_POSTS_WEBHOOK_SECRET", SECRET)
    body = json.dumps(sample_payload(sent_at=datetime.now(timezone.utc) - timedelta(days=2))).encode()
    path = tmp_path / "old.json"
    path.write_bytes(body)
    status, out, _ = run("webhooks", "verify", str(path), "--signature", sign_payload(body, SECRET))
    assert status == 1 and out.startswith("outside the replay window:") and "valid:" not in out


def test_sandbox_flag_before_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", "sk_test_not_a_sandbox_key")
    status, _, err = run("--sandbox", "posts", "--limit", "1")
    assert status == 0 and "embedded sandbox" in err


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _parsers(child)


def test_help_cites_no_section_of_a_document_users_cannot_see() -> None:
    for parser in _parsers(build_parser()):
        text = parser.format_help()
        assert not re.search(r"\bspec\b|\bsection\b|(?<![\d.])\d+\.\d+(?![\d.])", text), parser.prog


def test_unchecked_sends_what_the_sdk_does_not_know(api: respx.MockRouter) -> None:
    route = api.get("/posts").mock(return_value=httpx.Response(200, json=_page("ok")))
    status, _, err = run("posts", "--leagues", "NFL,XFL", "--limit", "1")
    assert status == 1 and route.call_count == 0 and "--leagues: 'XFL'" in err and "--unchecked" in err
    status, _, err = run("posts", "--leagues", "NFL,XFL", "--media-type", "hologram", "--unchecked", "--limit", "1")
    assert status == 0, err
    assert dict(route.calls.last.request.url.params) == {"leagues": "NFL,XFL", "media_type": "hologram", "limit": "1"}


# --------------------------------------------------------------------------- 31: secrets


def _signed(tmp_path: Path) -> tuple[str, str]:
    body = json.dumps(sample_payload()).encode()
    path = tmp_path / "body.json"
    path.write_bytes(body)
    return str(path), sign_payload(body, SECRET)


def test_the_secret_comes_from_a_file(tmp_path: Path) -> None:
    body, signature = _signed(tmp_path)
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n")
    status, out, err = run("webhooks", "verify", body, "--signature", signature, "--secret-file", str(secret_file))
    assert status == 0 and out.startswith("valid: ") and "deprecated" not in err


def test_a_missing_or_empty_secret_file_is_a_clear_error(tmp_path: Path) -> None:
    body, signature = _signed(tmp_path)
    status, _, err = run("webhooks", "verify", body, "--signature", signature,
                         "--secret-file", str(tmp_path / "absent"))
    assert status == 1 and "--secret-file" in err and "No such file" in err and "Traceback" not in err
    (tmp_path / "empty").write_text("\n")
    status, _, err = run("webhooks", "verify", body, "--signature", signature, "--secret-file", str(tmp_path / "empty"))
    assert status == 1 and "is empty" in err


@pytest.mark.parametrize("content", [b"\xff\xfe\x00\x4e\x01\x4e", b"whsec_\xe9t\xe9", b"\x00\x01binary",
                                     "whsec_caf\u00e9".encode("utf-8")])
def test_a_secret_file_that_is_not_the_secret_as_text_says_so_in_one_line(tmp_path: Path, content: bytes) -> None:
    """Bytes another encoding made (UTF-16 with a BOM decoding to CJK, Latin-1), a binary
    file, or a non-ASCII secret: one line naming the file and what is wrong, never "the
    header does not match the payload" (round three)."""
    body, signature = _signed(tmp_path)
    (tmp_path / "odd").write_bytes(content)
    status, out, err = run("webhooks", "verify", body, "--signature", signature, "--secret-file", str(tmp_path / "odd"))
    assert status == 1 and out == "" and err.count("\n") == 1
    assert "--secret-file" in err and "odd" in err and "does not match" not in err


def test_the_secret_flag_still_works_with_a_warning(tmp_path: Path) -> None:
    body, signature = _signed(tmp_path)
    status, out, err = run("webhooks", "verify", body, "--signature", signature, "--secret", SECRET)
    assert status == 0 and out.startswith("valid: ")
    assert "--secret is deprecated" in err and "--secret-file" in err and SECRET not in err
