"""The durable inbox: stored before the 2xx, drained with retries, nothing lost across a crash."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from sports_posts import ParameterError
from sports_posts.webhooks import SQLiteDedupeStore, SQLiteInbox, WebhookEvent, WebhookReceiver
from tests.webhooks.webhook_helpers import SECRET, FakeClock, signed

KEY = "breaking_news:1790000000000000001"
WAIT = 10.0


class Handler:
    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.delivered: list[str | None] = []
        self.done = threading.Event()

    def __call__(self, event: WebhookEvent) -> None:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("downstream is down")
        self.delivered.append(event.delivery_id)
        self.done.set()


def _receiver(tmp_path: Path, handler: Handler, clock: FakeClock, **inbox_options: object) -> WebhookReceiver:
    inbox = SQLiteInbox(tmp_path / "inbox.db", clock=clock, **inbox_options)  # type: ignore[arg-type]
    store = SQLiteDedupeStore(tmp_path / "dedupe.db", clock=clock)
    return WebhookReceiver(SECRET, handler, store=store, inbox=inbox, start_worker=False)


def _rows(tmp_path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(tmp_path / "inbox.db") as conn:
        return [(row[0], row[1]) for row in conn.execute("SELECT key, state FROM webhook_inbox")]


def test_the_event_is_committed_before_the_2xx(tmp_path: Path, clock: FakeClock) -> None:
    handler = Handler()
    receiver = _receiver(tmp_path, handler, clock)
    request = signed(delivery_id="dlv_1")
    response = receiver.handle(request.body, request.headers)
    assert response.status_code == 202
    assert _rows(tmp_path) == [(KEY, "pending")]  # on disk, read through another connection
    assert handler.delivered == []  # not processed yet: the answer did not wait


def test_an_event_acknowledged_just_before_a_crash_is_processed_after_restart(tmp_path: Path, clock: FakeClock) -> None:
    crashed = _receiver(tmp_path, Handler(), clock)
    request = signed(delivery_id="dlv_1")
    assert crashed.handle(request.body, request.headers).status_code == 202
    del crashed  # the process dies before its worker ran

    handler = Handler()
    restarted = _receiver(tmp_path, handler, clock)
    assert restarted.run_inbox_once() == 1
    assert handler.delivered == ["dlv_1"]
    assert _rows(tmp_path) == [(KEY, "done")]
    retry = signed(delivery_id="dlv_2")
    assert restarted.handle(retry.body, retry.headers).outcome == "duplicate"
    assert restarted.run_inbox_once() == 0


def test_a_row_taken_by_a_worker_that_died_is_taken_again_after_its_lease(tmp_path: Path, clock: FakeClock) -> None:
    receiver = _receiver(tmp_path, Handler(), clock, lease=120)
    request = signed()
    receiver.handle(request.body, request.headers)
    assert receiver.inbox is not None
    (taken,) = receiver.inbox.take_due()  # a worker takes it, then the process dies
    assert receiver.inbox.take_due() == []
    clock.advance(121)
    handler = Handler()
    restarted = _receiver(tmp_path, handler, clock, lease=120)
    assert restarted.run_inbox_once() == 1
    assert len(handler.delivered) == 1
    receiver.inbox.mark_done(taken)  # the late worker's token is stale: no effect on the row
    assert _rows(tmp_path) == [(KEY, "done")]


def test_a_failing_handler_is_retried_with_backoff(tmp_path: Path, clock: FakeClock) -> None:
    handler = Handler(failures=2)
    receiver = _receiver(tmp_path, handler, clock, backoff=(10, 60))
    request = signed()
    receiver.handle(request.body, request.headers)
    assert receiver.run_inbox_once() == 1  # attempt 1 fails
    assert receiver.run_inbox_once() == 0  # not due for 10 s
    clock.advance(10)
    assert receiver.run_inbox_once() == 1  # attempt 2 fails
    clock.advance(59)
    assert receiver.run_inbox_once() == 0
    clock.advance(1)
    assert receiver.run_inbox_once() == 1  # attempt 3 succeeds
    assert len(handler.delivered) == 1
    assert receiver.inbox is not None
    assert receiver.inbox.counts()["done"] == 1


def test_an_event_that_keeps_failing_is_kept_as_dead_and_can_be_requeued(tmp_path: Path, clock: FakeClock) -> None:
    handler = Handler(failures=3)
    receiver = _receiver(tmp_path, handler, clock, max_attempts=3, backoff=(1,))
    request = signed()
    receiver.handle(request.body, request.headers)
    for _ in range(3):
        assert receiver.run_inbox_once() == 1
        clock.advance(1)
    assert receiver.run_inbox_once() == 0
    inbox = receiver.inbox
    assert inbox is not None
    (dead,) = inbox.dead()
    assert (dead.key, dead.attempts, dead.body) == (KEY, 3, request.body)
    assert dead.last_error is not None and "downstream is down" in dead.last_error
    assert inbox.requeue(KEY)
    assert receiver.run_inbox_once() == 1
    assert len(handler.delivered) == 1


def test_an_inbox_that_cannot_be_written_answers_503_and_frees_the_claim(tmp_path: Path, clock: FakeClock) -> None:
    receiver = _receiver(tmp_path, Handler(), clock)
    assert receiver.inbox is not None

    def broken_put(key: str, body: bytes, delivery_id: str | None = None) -> bool:
        raise sqlite3.OperationalError("disk I/O error")

    receiver.inbox.put = broken_put  # type: ignore[method-assign]
    request = signed()
    assert receiver.handle(request.body, request.headers).status_code == 503
    assert receiver.store.claim(KEY)  # released: the service's retry will be processed


def test_the_worker_thread_drains_the_inbox_on_its_own(tmp_path: Path) -> None:
    handler = Handler()
    inbox = SQLiteInbox(tmp_path / "inbox.db")
    with WebhookReceiver(SECRET, handler, inbox=inbox) as receiver:
        request = signed(delivery_id="dlv_1")
        assert receiver.handle(request.body, request.headers).status_code == 202
        assert handler.done.wait(WAIT)
    assert handler.delivered == ["dlv_1"]


def test_start_drains_leftovers_without_waiting_for_a_request(tmp_path: Path) -> None:
    inbox = SQLiteInbox(tmp_path / "inbox.db")
    crashed = WebhookReceiver(SECRET, Handler(), inbox=inbox, start_worker=False)
    request = signed(delivery_id="dlv_left")
    crashed.handle(request.body, request.headers)
    handler = Handler()
    with WebhookReceiver(SECRET, handler, inbox=SQLiteInbox(tmp_path / "inbox.db")):
        assert handler.done.wait(WAIT)
    assert handler.delivered == ["dlv_left"]


def test_run_inbox_once_without_an_inbox_is_a_parameter_error() -> None:
    with pytest.raises(ParameterError):
        WebhookReceiver(SECRET, Handler()).run_inbox_once()


@pytest.mark.parametrize("options", [{"max_attempts": 0}, {"backoff": ()}, {"backoff": (-1,)}])
def test_nonsense_inbox_options_are_parameter_errors(tmp_path: Path, options: dict[str, object]) -> None:
    with pytest.raises(ParameterError):
        SQLiteInbox(tmp_path / "i.db", **options)  # type: ignore[arg-type]
