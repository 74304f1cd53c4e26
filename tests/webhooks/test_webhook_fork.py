"""A receiver that handled requests before a fork handles new stories promptly in the child.

gunicorn ``--preload`` and Celery prefork import the app once, then fork: a receiver built
(and used) at import is inherited by every worker. Its thread pool, its inbox worker thread,
its locks and conditions belong to the parent's threads, which do not exist in the child.
Before, the child's first new story waited ``handler_timeout`` and answered 503
``handler_timeout``: the inherited pool believed it had an idle thread. The child now makes
its own (``_scoped.on_fork``) and leaves the parent's alone.

Each test forks with ``os.fork`` or multiprocessing's ``fork`` start method; the child
answers through a pipe, and every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from sports_posts.webhooks import SQLiteDedupeStore, SQLiteInbox, WebhookEvent, WebhookReceiver

from ..forked import CHILD_BOUND, with_multiprocessing, with_os_fork
from .webhook_helpers import SECRET, signed

pytestmark = [pytest.mark.processes]

TIMEOUT = 3.0
"""The receivers' handler_timeout: a child that cannot run its handler answers 503 after it."""



FORKS = [pytest.param(with_os_fork, id="os.fork"), pytest.param(with_multiprocessing, id="multiprocessing")]


class PidRecorder:
    """A sync handler that notes which process handled which story."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, str]] = []
        self.lock = threading.Lock()

    def __call__(self, event: WebhookEvent) -> None:
        with self.lock:
            self.seen.append((os.getpid(), event.data.id))

    def mine(self) -> list[str]:
        pid = os.getpid()
        return [story for who, story in self.seen if who == pid]


class AsyncPidRecorder(PidRecorder):
    """The same, as an ``async def`` handler that waits once."""

    async def __call__(self, event: WebhookEvent) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        super().__call__(event)


def _deliver(receiver: WebhookReceiver, story: str, *, use_async: bool = False) -> tuple[int, str]:
    request = signed(id=story)
    if use_async:
        async def go() -> Any:
            return await receiver.handle_async(request.body, request.headers)
        response = asyncio.run(go())  # a new event loop, as a child's server starts one
    else:
        response = receiver.handle(request.body, request.headers)
    return response.status_code, response.outcome


@pytest.mark.parametrize("fork", FORKS)
@pytest.mark.parametrize(("handler_kind", "use_async"), [
    pytest.param("sync", False, id="sync-handler-handle"),
    pytest.param("sync", True, id="sync-handler-handle_async"),
    pytest.param("async", False, id="async-handler-handle"),
    pytest.param("async", True, id="async-handler-handle_async"),
])
def test_a_child_handles_new_stories_with_its_own_threads(
    fork: Callable[[Callable[[], dict[str, Any]]], dict[str, Any]], handler_kind: str, use_async: bool
) -> None:
    handler = AsyncPidRecorder() if handler_kind == "async" else PidRecorder()
    receiver = WebhookReceiver(SECRET, handler, handler_timeout=TIMEOUT)
    try:
        # Before the fork: a request handled, so the pool (and, for an async handler under
        # handle, a worker thread's loop) exists in the parent.
        assert _deliver(receiver, "1790000000000000101", use_async=use_async)[0] == 202
        assert _deliver(receiver, "1790000000000000102", use_async=not use_async)[0] == 202

        def child() -> dict[str, Any]:
            answers = [_deliver(receiver, f"17900000000000002{i:02d}", use_async=use_async) for i in range(3)]
            answers.append(_deliver(receiver, "1790000000000000101", use_async=use_async))  # the parent's
            return {"answers": answers, "handled_here": handler.mine()}

        result = fork(child)
        assert [tuple(a) for a in result["answers"]] == [(202, "accepted")] * 3 + [(200, "duplicate")], result
        assert sorted(result["handled_here"]) == [f"17900000000000002{i:02d}" for i in range(3)]
        # The parent goes on with its own threads, untouched by the child.
        assert _deliver(receiver, "1790000000000000103", use_async=use_async) == (202, "accepted")
        assert "1790000000000000103" in handler.mine()
    finally:
        receiver.close(timeout=10)


@pytest.mark.parametrize("fork", FORKS)
def test_a_sqlite_store_opens_its_own_connection_in_the_child(
    fork: Callable[[Callable[[], dict[str, Any]]], dict[str, Any]], tmp_path: Path
) -> None:
    handler = PidRecorder()
    receiver = WebhookReceiver(SECRET, handler, store=SQLiteDedupeStore(tmp_path / "dedupe.db"),
                               handler_timeout=TIMEOUT)
    try:
        assert _deliver(receiver, "1790000000000000301") == (202, "accepted")

        def child() -> dict[str, Any]:
            return {"new": _deliver(receiver, "1790000000000000302"),
                    "again": _deliver(receiver, "1790000000000000301"),
                    "handled_here": handler.mine()}

        result = fork(child)
        assert tuple(result["new"]) == (202, "accepted")
        assert tuple(result["again"]) == (200, "duplicate")  # one store file, seen from both processes
        assert result["handled_here"] == ["1790000000000000302"]
        assert _deliver(receiver, "1790000000000000302") == (200, "duplicate")
        assert _deliver(receiver, "1790000000000000303") == (202, "accepted")
    finally:
        receiver.close(timeout=10)


@pytest.mark.parametrize("fork", FORKS)
def test_an_inbox_worker_started_before_the_fork_runs_again_in_the_child(
    fork: Callable[[Callable[[], dict[str, Any]]], dict[str, Any]], tmp_path: Path
) -> None:
    handler = PidRecorder()
    parent = os.getpid()
    entered, release_parent, drained = threading.Event(), threading.Event(), threading.Event()
    inbox = SQLiteInbox(tmp_path / "inbox.db")

    def handle(event: WebhookEvent) -> None:
        handler(event)
        if os.getpid() == parent:  # the parent's worker holds its entry until the child is done
            entered.set()
            assert release_parent.wait(CHILD_BOUND)
        drained.set()

    receiver = WebhookReceiver(SECRET, handle, store=SQLiteDedupeStore(tmp_path / "dedupe.db"), inbox=inbox,
                               poll_interval=0.05, handler_timeout=TIMEOUT)
    receiver.start()
    try:
        assert _deliver(receiver, "1790000000000000401") == (202, "accepted")
        # The fork comes while the parent's worker thread is busy with that entry: only a
        # worker of the child's own can drain what the child stores.
        assert entered.wait(CHILD_BOUND)

        def child() -> dict[str, Any]:
            drained.clear()
            names_before = sorted(t.name for t in threading.enumerate())
            answer = _deliver(receiver, "1790000000000000402")
            ran = drained.wait(CHILD_BOUND)
            threads_after = sorted(t.name for t in threading.enumerate())
            receiver.close(timeout=10)  # the child's worker records its outcome, then ends
            return {"answer": answer, "ran": ran, "handled_here": handler.mine(),
                    "threads_before": names_before, "threads_after": threads_after}

        try:
            result = fork(child)
        finally:
            release_parent.set()
        assert tuple(result["answer"]) == (202, "accepted")
        assert result["ran"], result
        assert result["handled_here"] == ["1790000000000000402"]
        assert "sports-posts-inbox" not in result["threads_before"]  # the parent's did not come along
        assert "sports-posts-inbox" in result["threads_after"]
        # The parent's worker goes on: its entry is done, the child's is not run again.
        assert drained.wait(CHILD_BOUND)
        assert receiver.wait_idle(CHILD_BOUND)
        assert handler.mine() == ["1790000000000000401"]
        receiver.close(timeout=10)
        assert inbox.counts()["done"] == 2  # each story once: the child's by the child, the parent's by the parent
    finally:
        release_parent.set()
        receiver.close(timeout=10)
