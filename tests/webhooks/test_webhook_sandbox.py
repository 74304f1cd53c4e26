"""End to end over loopback: the sandbox's sender delivers to a real receiver server."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest

from sports_posts.sandbox import Sandbox
from sports_posts.webhooks import (
    BreakingNewsEvent,
    BreakingNewsUpdateEvent,
    MemoryDedupeStore,
    WebhookEvent,
    WebhookReceiver,
    thread_stories,
)
from sports_posts.webhooks.adapters.wsgi import WebhookWSGIApp

SECRET = "whsec_sandbox_end_to_end"


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class FlakyStore(MemoryDedupeStore):
    """Unavailable for the first ``outages`` claims: the receiver must answer 503, not lose the event."""

    def __init__(self, outages: int) -> None:
        super().__init__()
        self.outages = outages

    def claim(self, key: str) -> bool:
        if self.outages:
            self.outages -= 1
            raise ConnectionError("store briefly unavailable")
        return super().claim(key)


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox(seed=7, clock="manual", posts=50)
    box.start()
    try:
        yield box
    finally:
        box.stop()


def sandbox_time(sandbox: Sandbox) -> Callable[[], float]:
    """The sandbox clock as epoch seconds, the receiver's clock type."""
    return lambda: sandbox.now().timestamp()


def _serve(receiver: WebhookReceiver) -> tuple[WSGIServer, str]:
    server = make_server("127.0.0.1", 0, WebhookWSGIApp(receiver), handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/webhooks"


def test_sandbox_deliveries_are_verified_typed_threaded_and_retried_once(sandbox: Sandbox) -> None:
    events: list[WebhookEvent] = []
    lock = threading.Lock()

    def handler(event: WebhookEvent) -> None:
        with lock:
            events.append(event)

    # The sandbox's manual clock stamps sent_at: the replay window must read the same clock.
    receiver = WebhookReceiver(SECRET, handler, store=FlakyStore(outages=1), clock=sandbox_time(sandbox))
    server, url = _serve(receiver)
    try:
        sandbox.subscribe(url, SECRET, leagues=["NFL"])
        first = sandbox.send_breaking_news("NFL", alt_sources=2)
        sandbox.drain_deliveries(timeout=30)  # attempt 1 gets 503, the retry is accepted
        update = sandbox.send_update(first["data"]["event_id"], whats_new="Out for the season")
        sandbox.drain_deliveries(timeout=30)
        assert receiver.wait_idle(10)
    finally:
        server.shutdown()
        server.server_close()
        receiver.close()

    statuses = [attempt.status_code for attempt in sandbox.deliveries]
    assert statuses.count(503) == 1 and statuses.count(202) == 2, statuses
    assert [type(e) for e in events] == [BreakingNewsEvent, BreakingNewsUpdateEvent]
    assert events[0].data.id == first["data"]["id"] and events[1].data.id == update["data"]["id"]
    assert len(events[0].data.alt_sources) == 2
    delivery_ids = {attempt.delivery_id for attempt in sandbox.deliveries}
    assert len(delivery_ids) == len(sandbox.deliveries)  # each retry had a new delivery id
    (story,) = thread_stories(events)
    assert story.original is events[0] and story.updates == [events[1]]


def test_a_wrong_secret_is_answered_401_and_the_sandbox_keeps_retrying(sandbox: Sandbox) -> None:
    handled: list[WebhookEvent] = []
    receiver = WebhookReceiver("another-secret", handled.append, clock=sandbox_time(sandbox))
    server, url = _serve(receiver)
    try:
        sandbox.subscribe(url, SECRET)
        sandbox.send_breaking_news("NBA")
        sandbox.drain_deliveries(timeout=30)
    finally:
        server.shutdown()
        server.server_close()
        receiver.close()
    statuses = [attempt.status_code for attempt in sandbox.deliveries]
    assert statuses == [401] * 6  # spec 6.5: six attempts, then dead
    assert handled == []
