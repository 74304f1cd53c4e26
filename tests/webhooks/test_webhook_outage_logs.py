"""A store outage as the logs tell it: one line when it starts, one when it ends with the
count of deliveries answered 503, no traceback per request (issue 50: a 45 s failover logged
about 130 twenty-line tracebacks)."""

from __future__ import annotations

import logging

import pytest

from sports_posts._stores import StoreError
from sports_posts.webhooks import (
    MemoryDedupeStore,
    WebhookReceiver,
    build_test_request,
    sample_payload,
)

SECRET = "whsec_outage_logs"


class FlakyStore(MemoryDedupeStore):
    """A memory store that fails every call while ``down`` (an outage, on demand)."""

    down = False

    def claim(self, key: str) -> bool:
        if self.down:
            raise StoreError("RedisDedupeStore: redis failed (ConnectionError: Connection refused)", engine="redis")
        return super().claim(key)


def test_an_outage_logs_one_line_as_it_starts_and_one_as_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    store = FlakyStore()
    receiver = WebhookReceiver(SECRET, lambda event: None, store=store)
    caplog.set_level(logging.DEBUG, logger="sports_posts.webhooks")

    def deliver(n: int) -> int:
        request = build_test_request(sample_payload(id=f"17900000000000{n:05d}"), SECRET)
        return receiver.handle(request.body, request.headers).status_code

    assert deliver(0) == 202
    store.down = True
    assert [deliver(n) for n in range(1, 31)] == [503] * 30
    store.down = False
    assert deliver(31) == 202 and deliver(32) == 202
    receiver.close()

    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(loud) == 2, [r.getMessage() for r in loud]
    began, ended = loud
    assert began.levelno == logging.ERROR and "answering 503 until it answers again" in began.getMessage()
    assert "Connection refused" in began.getMessage() and began.exc_info is None
    assert ended.levelno == logging.WARNING and "answers again after" in ended.getMessage()
    assert "30 deliveries were answered 503" in ended.getMessage()
    assert not any(r.exc_info for r in caplog.records if r.levelno >= logging.INFO)
