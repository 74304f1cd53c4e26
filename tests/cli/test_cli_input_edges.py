"""File options read as editors write them (a byte-order mark, CRLF, a trailing newline), and
empty path arguments refused rather than taken as a file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sports_posts.webhooks import sample_payload, sign_payload

from ..zygote import suite
from .conftest import run

SECRET = "whsec_test_cli_input_edges_42"


def signed(tmp_path: Path) -> tuple[str, str]:
    body = json.dumps(sample_payload()).encode()
    path = tmp_path / "body.json"
    path.write_bytes(body)
    return str(path), sign_payload(body, SECRET)


EDITORS = {
    "notepad utf-8 with BOM": b"\xef\xbb\xbf" + SECRET.encode(),
    "BOM and CRLF": b"\xef\xbb\xbf" + SECRET.encode() + b"\r\n",
    "CRLF": SECRET.encode() + b"\r\n",
    "trailing newline": SECRET.encode() + b"\n",
    "surrounding blanks": b"  " + SECRET.encode() + b" \n\n",
    "utf-16 with BOM (notepad 'Unicode')": "\ufeff".encode("utf-16-le") + (SECRET + "\r\n").encode("utf-16-le"),
}


@pytest.mark.parametrize("name", sorted(EDITORS))
def test_a_secret_file_as_editors_write_it_verifies(tmp_path: Path, name: str) -> None:
    body, signature = signed(tmp_path)
    secret_file = tmp_path / "secret"
    secret_file.write_bytes(EDITORS[name])
    status, out, err = run("webhooks", "verify", body, "--signature", signature, "--secret-file", str(secret_file))
    assert status == 0, err
    assert out.startswith("valid: ")


def test_a_secret_file_of_two_lines_is_refused_without_showing_it(tmp_path: Path) -> None:
    body, signature = signed(tmp_path)
    secret_file = tmp_path / "secret"
    secret_file.write_bytes(SECRET.encode() + b"\r\nsomething else\r\n")
    status, _, err = run("webhooks", "verify", body, "--signature", signature, "--secret-file", str(secret_file))
    assert status == 1 and "more than one line" in err and SECRET not in err


def test_a_secret_file_that_is_not_text_is_a_clear_error(tmp_path: Path) -> None:
    body, signature = signed(tmp_path)
    secret_file = tmp_path / "secret"
    secret_file.write_bytes(b"\xff\x00\xfe binary")
    status, _, err = run("webhooks", "verify", body, "--signature", signature, "--secret-file", str(secret_file))
    assert status == 1 and "not a UTF-8 text file" in err


@pytest.mark.parametrize("argv", [
    ["webhooks", "verify", "BODY", "--signature", "v1=00", "--secret-file", ""],
    ["webhooks", "verify", "", "--signature", "v1=00", "--secret-file", "SECRET"],
    ["webhooks", "listen", "--secret-file", ""],
    ["inbox", "dead", ""],
    ["inbox", "status", "  "],
    ["inbox", "requeue", "", "key"],
    ["inbox", "purge-dead", "", "--force"],
    ["budget", "status", ""],
    ["lease", "status", "", "key"],
    ["compliance", "sweep", "--checkpoint", ""],
    ["poll", "--checkpoint", ""],
])
def test_an_empty_path_argument_is_refused(tmp_path: Path, argv: list[str]) -> None:
    body, _ = signed(tmp_path)
    (tmp_path / "secret").write_text(SECRET)
    argv = [body if a == "BODY" else str(tmp_path / "secret") if a == "SECRET" else a for a in argv]
    done = suite().run([sys.executable, "-m", "sports_posts", *argv], timeout=120, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "an empty path" in done.stderr and "Traceback" not in done.stderr
    assert {p.name for p in tmp_path.iterdir()} == {"body.json", "secret"}  # nothing made in the working directory
