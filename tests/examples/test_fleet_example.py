"""examples/webhook_fleet_postgres.py against a real PostgreSQL: a story stored once, whatever repeats."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import psycopg
import pytest

from sports_posts.webhooks import build_test_request, sample_payload

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "webhook_fleet_postgres.py"
SECRET = "whsec_fleet_example_test"


def test_the_fleet_example_stores_each_story_once(pg: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", pg)
    monkeypatch.setenv("SPORTS_POSTS_WEBHOOK_SECRET", SECRET)
    spec = importlib.util.spec_from_file_location("webhook_fleet_postgres", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    receiver = example.receiver
    request = build_test_request(sample_payload(id="1790000000000000077"), SECRET)
    assert receiver.handle(request.body, request.headers).status_code == 202
    # The receiver's own worker thread (started by handle) may take the entry first: either
    # drains it; wait (bounded) until one has.
    receiver.run_inbox_once()
    deadline = time.monotonic() + 30
    while receiver.inbox.counts()["done"] < 1 and time.monotonic() < deadline:
        time.sleep(0.01)  # polling the worker thread's progress, not a timed assertion
    assert receiver.inbox.counts()["done"] == 1
    event = build_test_request(sample_payload(id="1790000000000000077"), SECRET)
    from sports_posts.webhooks import construct_event

    example.on_breaking_news(construct_event(event.body, event.headers, SECRET))  # a repeat run
    with psycopg.connect(pg) as conn:
        assert conn.execute("SELECT id FROM stories").fetchall() == [("1790000000000000077",)]
        conn.execute("DROP TABLE stories")
    receiver.close()
