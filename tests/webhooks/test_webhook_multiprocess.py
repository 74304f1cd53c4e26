"""Three receiver processes share one store; every delivery goes to all three: each story is handled once."""

from __future__ import annotations

import multiprocessing
import queue
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sports_posts.webhooks import WebhookPayload, build_test_request, sample_payload
from tests.webhooks.webhook_mp_worker import SECRET, open_ledger, serve

PROCESSES = 3
ATTEMPTS = 4  # the first delivery and three retries, each with a new X-Service-Delivery
SAFETY_NET = 120.0


@dataclass
class Receivers:
    processes: list[Any]
    inboxes: list[Any]
    outbox: Any

    def get(self) -> tuple[Any, int, int]:
        """The next answer; fails at once if a receiver process died instead of waiting it out."""
        waited = 0.0
        while True:
            try:
                return self.outbox.get(timeout=0.5)  # type: ignore[no-any-return]
            except queue.Empty:
                waited += 0.5
                dead = [p.exitcode for p in self.processes if not p.is_alive()]
                assert not dead, f"a receiver process died: exit codes {dead}"
                assert waited < SAFETY_NET, "receivers stopped answering"


@pytest.fixture(scope="module")
def receivers() -> Iterator[Receivers]:
    # forkserver: one clean server process imports the worker once, then each receiver is a fork.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tests.webhooks.webhook_mp_worker"])
    outbox = context.Queue()
    inboxes = [context.Queue() for _ in range(PROCESSES)]
    processes = [context.Process(target=serve, args=(inbox, outbox), daemon=True) for inbox in inboxes]
    for process in processes:
        process.start()
    group = Receivers(processes, inboxes, outbox)
    try:
        assert {group.get()[0] for _ in processes} == {"ready"}
        yield group
    finally:
        for inbox in inboxes:
            inbox.put(None)
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
    assert all(process.exitcode == 0 for process in processes)


def _stories() -> list[WebhookPayload]:
    stories: list[WebhookPayload] = []
    for n in range(12):
        kind = "breaking_news" if n % 3 else "breaking_news.update"
        stories.append(sample_payload(kind, id=f"post-{n}", event_id=f"evt-{n // 3}"))
    return stories


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_each_story_is_handled_exactly_once_across_three_processes(
    kind: str, receivers: Receivers, tmp_path: Path, request: pytest.FixtureRequest
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
    for inbox in receivers.inboxes:
        inbox.put(("configure", store_spec, ledger_path, fail_once))
    assert {receivers.get()[0] for _ in receivers.inboxes} == {"configured"}

    statuses: dict[str, Counter[int]] = {s["data"]["id"]: Counter() for s in stories}
    for attempt in range(ATTEMPTS):
        # One round of deliveries: every story, a fresh delivery id, sent to all three at once.
        sent = 0
        for story in stories:
            signed = build_test_request(story, SECRET, delivery_id=f"{story['data']['id']}-a{attempt}")
            for inbox in receivers.inboxes:
                inbox.put(("request", story["data"]["id"], signed.body, signed.headers))
                sent += 1
        for _ in range(sent):
            story_id, _pid, status = receivers.get()
            statuses[story_id][status] += 1

    with sqlite3.connect(ledger_path) as ledger:
        handled = Counter(key for (key,) in ledger.execute("SELECT key FROM handled"))
        failed = {row[0] for row in ledger.execute("SELECT id FROM failures")}
    assert set(handled) == {f"{s['event']}:{s['data']['id']}" for s in stories}
    assert all(count == 1 for count in handled.values()), handled
    assert failed == fail_once
    for story_id, counter in statuses.items():
        assert sum(counter.values()) == PROCESSES * ATTEMPTS
        assert set(counter) <= {200, 202, 409, 503}, counter
        # Accepted once; the injected failure answered 503 (so the service retries) and
        # released the claim for a later attempt.
        assert counter[202] == 1, (story_id, counter)
        assert counter[503] == (1 if story_id in fail_once else 0), (story_id, counter)
