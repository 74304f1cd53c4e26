"""A worker records a batch's successes in one statement (``PostgresInbox.mark_done_many``),
so a worker killed mid-batch has recorded none of them: they must come back once their leases
lapse, not before, and not be lost; with ``claim_in`` in the handler each effect is still
written exactly once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from sports_posts.webhooks import (
    PostgresDedupeStore,
    PostgresInbox,
    WebhookReceiver,
    build_test_request,
    sample_payload,
)

ROOT = str(Path(__file__).resolve().parents[2])
SECRET = "whsec_batch_crash_test"
STORIES = [f"b{i}" for i in range(7)] + ["kill"]
TAKEN_AT, LEASE = 1000.0, 30.0

# The worker: takes the batch of eight; seven handlers write their effect (claim_in, one
# transaction each) and return; the eighth waits for them, then kills the process before the
# batch's outcomes are recorded.
WORKER = f"""
import os, sys, threading
import psycopg
import sports_posts.webhooks._inbox_worker as inbox_worker
from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox, WebhookReceiver

inbox_worker.BATCH_WAIT = 120  # the seven successes wait for the eighth handler, as in a fast batch
url = sys.argv[1]
store = PostgresDedupeStore(url)
inbox = PostgresInbox(url, lease={LEASE}, clock=lambda: {TAKEN_AT})
others_done, lock, count = threading.Event(), threading.Lock(), [0]

def handler(event):
    if event.data.id == "kill":
        if not others_done.wait(60):
            os._exit(3)
        print("killed mid-batch", flush=True)
        os._exit(9)
    with psycopg.connect(url, autocommit=True, prepare_threshold=None) as conn, conn.transaction():
        if store.claim_in(conn, event.dedupe_key):
            conn.execute("INSERT INTO story_effects (story, pid) VALUES (%s, %s)", (event.data.id, os.getpid()))
    with lock:
        count[0] += 1
        if count[0] == {len(STORIES) - 1}:
            others_done.set()

receiver = WebhookReceiver("{SECRET}", handler, inbox=inbox, start_worker=False)
receiver.run_inbox_once(16)
print("the batch ended without the kill", flush=True)
"""


def _effect(store: PostgresDedupeStore, url: str) -> Any:
    def handler(event: Any) -> None:
        with psycopg.connect(url, autocommit=True, prepare_threshold=None) as conn, conn.transaction():
            if store.claim_in(conn, event.dedupe_key):
                conn.execute("INSERT INTO story_effects (story) VALUES (%s)", (event.data.id,))

    return handler


@pytest.mark.postgres
@pytest.mark.processes
def test_a_worker_killed_mid_batch_leaves_every_entry_to_come_back_after_its_lease(pg: str) -> None:
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS story_effects (story text NOT NULL, pid integer)")
    now = [TAKEN_AT]
    inbox = PostgresInbox(pg, lease=LEASE, clock=lambda: now[0])
    store = PostgresDedupeStore(pg)
    receiver = WebhookReceiver(SECRET, _effect(store, pg), inbox=inbox, start_worker=False)
    for story in STORIES:
        request = build_test_request(sample_payload(id=story), SECRET)
        assert receiver.handle(request.body, request.headers).status == 202

    worker = subprocess.run([sys.executable, "-c", WORKER, pg], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert worker.returncode == 9 and "killed mid-batch" in worker.stdout, worker.stdout + worker.stderr

    with psycopg.connect(pg, autocommit=True) as conn:
        written = sorted(row[0] for row in conn.execute("SELECT story FROM story_effects"))
    assert written == sorted(STORIES[:-1]), "seven handlers ran and committed their effects"
    assert inbox.counts() == {"pending": 0, "processing": 8, "done": 0, "dead": 0}, \
        "the batch's outcomes were never recorded: every entry is still the dead worker's lease"
    now[0] = TAKEN_AT + LEASE - 1
    assert inbox.take_due(16) == [], "not taken again before the lease lapses"

    now[0] = TAKEN_AT + LEASE + 1
    assert receiver.run_inbox_once(16) == 8, "every entry comes back once its lease lapsed"
    assert inbox.counts() == {"pending": 0, "processing": 0, "done": 8, "dead": 0}
    with psycopg.connect(pg, autocommit=True) as conn:
        rows = conn.execute("SELECT story, count(*) FROM story_effects GROUP BY story").fetchall()
    assert dict(rows) == dict.fromkeys(STORIES, 1), "claim_in: each effect exactly once despite the rerun"
    receiver.close()
    store.close()
