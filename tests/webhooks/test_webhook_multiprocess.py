"""Three receiver processes share one store; every delivery goes to all three: each story is handled once."""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from webhook_mp_worker import SECRET, open_ledger, serve

from sports_posts.webhooks import build_test_request, sample_payload

PROCESSES = 3
ATTEMPTS = 4  # the first delivery and three retries, each with a new X-Service-Delivery
SAFETY_NET = 120.0


def _stories() -> list[dict[str, Any]]:
    stories = []
    for n in range(12):
        kind = "breaking_news" if n % 3 else "breaking_news.update"
        stories.append(sample_payload(kind, id=f"post-{n}", event_id=f"evt-{n // 3}"))
    return stories


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_each_story_is_handled_exactly_once_across_three_processes(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if kind == "sqlite":
        store_spec = ("sqlite", str(tmp_path / "dedupe.db"), "")
    else:
        request.getfixturevalue("redis_client")  # flushed
        store_spec = ("redis", request.getfixturevalue("redis_url"), f"mp-{tmp_path.name}:")
    ledger_path = str(tmp_path / "ledger.db")
    open_ledger(ledger_path).close()
    stories = _stories()
    fail_once = frozenset({"post-1", "post-6", "post-11"})

    # forkserver: one clean server process imports the worker once, then each receiver is a cheap fork.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["webhook_mp_worker"])
    outbox = context.Queue()
    inboxes = [context.Queue() for _ in range(PROCESSES)]
    processes = [
        context.Process(target=serve, args=(store_spec, ledger_path, fail_once, inbox, outbox), daemon=True)
        for inbox in inboxes
    ]
    for process in processes:
        process.start()
    try:
        assert {outbox.get(timeout=SAFETY_NET)[0] for _ in processes} == {"ready"}
        statuses: dict[str, Counter[int]] = {s["data"]["id"]: Counter() for s in stories}
        for attempt in range(ATTEMPTS):
            # One round of deliveries: every story, a fresh delivery id, sent to all three at once.
            sent = 0
            for story in stories:
                signed = build_test_request(story, SECRET, delivery_id=f"{story['data']['id']}-a{attempt}")
                for inbox in inboxes:
                    inbox.put((story["data"]["id"], signed.body, signed.headers))
                    sent += 1
            for _ in range(sent):
                story_id, _pid, status = outbox.get(timeout=SAFETY_NET)
                statuses[story_id][status] += 1
    finally:
        for inbox in inboxes:
            inbox.put(None)
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()

    assert all(process.exitcode == 0 for process in processes)
    with sqlite3.connect(ledger_path) as ledger:
        handled = Counter(key for (key,) in ledger.execute("SELECT key FROM handled"))
        failed = {row[0] for row in ledger.execute("SELECT id FROM failures")}
    expected = {f"{s['event']}:{s['data']['id']}" for s in stories}
    assert set(handled) == expected
    assert all(count == 1 for count in handled.values()), handled
    assert failed == fail_once
    for story_id, counter in statuses.items():
        assert sum(counter.values()) == PROCESSES * ATTEMPTS
        assert set(counter) <= {200, 202, 409}, counter
        # Accepted once, plus once more after the injected failure released the claim.
        assert counter[202] == (2 if story_id in fail_once else 1), (story_id, counter)
