"""What stores and the service hold reaches the terminal escaped: the operations commands and the
compliance sweep, run as processes against a SQLite inbox, a Redis inbox and a service holding
control characters, newlines, OSC 52 clipboard writes and bytes that are not UTF-8 print one
escaped line per record, and their ``--json`` is valid whatever the bytes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.client.hostile.server import Connection, ScriptedServer, head

from ..zygote import suite

CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"  # OSC 52: write "rm -rf ~" to the clipboard
HOSTILE_KEY = f"evil\nrm -rf /tmp/x{CLIPBOARD}\x1b[2J\r\u202eend"
HOSTILE_ERROR = f"RuntimeError: boom\n\x1b[31mred{CLIPBOARD}\x00\x9b"
RAW = ("\x1b", "\x07", "\x00", "\x9b", "\r", "\u202e")


def sports_posts(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``python -m sports_posts ARGV`` as a separate process (tests/zygote.py); output kept as bytes."""
    return suite().run([sys.executable, "-m", "sports_posts", *argv], timeout=120,
                       env={**os.environ, **(env or {})}, text=False)


def assert_escaped(stdout: bytes, records: int) -> str:
    """Valid UTF-8, one line per record, no raw control character or bidi override."""
    text = stdout.decode("utf-8")  # strict: the output is UTF-8 whatever the store held
    lines = text.splitlines()
    assert len(lines) == records, lines
    for raw in RAW:
        assert raw not in text, (raw, text)
    return text


def dead_letter(inbox: Any, key: str, error: str) -> None:
    inbox.put(key, b'{"x":1}', f"delivery-{uuid.uuid4().hex[:6]}")
    for entry in inbox.take_due(10):
        if entry.key == key:
            inbox.mark_failed(entry, error, permanent=True)


@pytest.fixture
def sqlite_inbox(tmp_path: Path) -> str:
    """A SQLite inbox with a hostile dead letter, and a row another program wrote in bytes
    that are not UTF-8."""
    from sports_posts.webhooks import SQLiteInbox

    path = str(tmp_path / "inbox.db")
    inbox = SQLiteInbox(path, max_attempts=1)
    dead_letter(inbox, HOSTILE_KEY, HOSTILE_ERROR)
    dead_letter(inbox, "latin1-row", "placeholder")
    inbox.close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE webhook_inbox SET key = CAST(X'6b6579ff0a6e657874' AS TEXT),"
                     " last_error = CAST(X'c3286572726f72201b5d35323b633b41410a' AS TEXT) WHERE key = 'latin1-row'")
    conn.close()
    return path


def test_inbox_dead_prints_one_escaped_line_per_sqlite_record(sqlite_inbox: str) -> None:
    done = sports_posts("inbox", "dead", sqlite_inbox)
    assert done.returncode == 0, done.stderr
    text = assert_escaped(done.stdout, 2)
    first, second = text.splitlines()
    assert first.startswith("evil\\u000arm -rf /tmp/x\\u001b]52;c;cm0gLXJmIH4=\\u0007")
    assert "\\u000d\\u202eend\t1 attempts\tRuntimeError: boom\\u000a\\u001b[31mred" in first
    assert second.startswith("key\\udcff\\u000anext\t")  # the byte that is not UTF-8, shown
    assert b"2 dead letters" in done.stderr


def test_inbox_dead_json_is_valid_whatever_the_bytes(sqlite_inbox: str) -> None:
    done = sports_posts("inbox", "dead", sqlite_inbox, "--json")
    assert done.returncode == 0, done.stderr
    assert_escaped(done.stdout, 1)
    entries = json.loads(done.stdout)
    assert [e["key"] for e in entries] == [HOSTILE_KEY, "key\udcff\nnext"]
    assert entries[0]["last_error"] == HOSTILE_ERROR


def test_inbox_requeue_prints_the_key_escaped(sqlite_inbox: str) -> None:
    done = sports_posts("inbox", "requeue", sqlite_inbox, HOSTILE_KEY)
    assert done.returncode == 0, done.stderr
    assert assert_escaped(done.stdout, 1).endswith("\trequeued\n")


def test_inbox_dead_escapes_a_redis_inbox(redis_url: str) -> None:
    from sports_posts.webhooks import RedisInbox

    prefix = f"test:{uuid.uuid4().hex[:8]}:"
    inbox = RedisInbox(redis_url, prefix=prefix, max_attempts=1)
    dead_letter(inbox, HOSTILE_KEY, HOSTILE_ERROR)
    inbox.close()
    done = sports_posts("inbox", "dead", redis_url, "--prefix", prefix)
    assert done.returncode == 0, done.stderr
    assert "\\u001b]52;c;" in assert_escaped(done.stdout, 1)
    done = sports_posts("inbox", "dead", redis_url, "--prefix", prefix, "--json")
    assert [e["key"] for e in json.loads(done.stdout)] == [HOSTILE_KEY]


def test_lease_status_escapes_a_holder_from_the_store(redis_url: str) -> None:
    import redis

    key = f"test:lease:{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(redis_url)
    client.set(key + ":lease", f"host\n{CLIPBOARD}".encode() + b"\xff", px=60_000)  # not UTF-8 at the end
    client.close()
    done = sports_posts("lease", "status", redis_url, key)
    assert done.returncode == 0, done.stderr
    assert "holder      host\\u000a\\u001b]52" in assert_escaped(done.stdout, 4)
    done = sports_posts("lease", "status", redis_url, key, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["holder"].startswith("host\n\x1b]52")


IDS = ["1790000000000000001", f"1790000000000000002\n1790000000000000003{CLIPBOARD}",
       "1790000000000000004\u2028\u009b\u202e"]


def compliance_service(conn: Connection) -> None:
    body = json.dumps({"ids_to_delete": IDS, "as_of": "2030-01-01T00:00:00Z"}).encode()
    conn.send(head("200 OK", {"Content-Type": "application/json", "Content-Length": str(len(body))}) + body)


def test_compliance_sweep_prints_each_id_as_one_escaped_line(tmp_path: Path) -> None:
    with ScriptedServer(compliance_service) as server:
        env = {"SPORTS_POSTS_BASE_URL": server.base_url, "SPORTS_POSTS_API_KEY": "sk_test_cli_output_0123"}
        done = sports_posts("compliance", "sweep", env=env)
        assert done.returncode == 0, done.stderr
        lines = assert_escaped(done.stdout, 3).splitlines()
        assert lines == ["1790000000000000001",
                         "1790000000000000002\\u000a1790000000000000003\\u001b]52;c;cm0gLXJmIH4=\\u0007",
                         "1790000000000000004\\u2028\\u009b\\u202e"]
        done = sports_posts("compliance", "sweep", "--json", env=env)
        assert done.returncode == 0, done.stderr
        assert_escaped(done.stdout, 1)
        assert json.loads(done.stdout)["deleted"] == IDS
