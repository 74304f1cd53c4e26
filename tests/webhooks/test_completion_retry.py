"""A handler that succeeded is not run again because its outcome could not be recorded during
a store outage: the receiver retries ``mark_done`` / ``complete`` with backoff while the entry
(or claim) is still its lease, on every inbox engine and on the dedupe-store path."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

import sports_posts.webhooks.receiver as receiver_module
from sports_posts._stores import StoreError
from sports_posts.webhooks import (
    MemoryDedupeStore,
    PostgresInbox,
    RedisDedupeStore,
    RedisInbox,
    SQLiteInbox,
    WebhookReceiver,
    build_test_request,
    sample_payload,
)
from tests.webhooks.stores.redis_process import RedisProcess
from tests.webhooks.webhook_helpers import SECRET


class Moments:
    """The receiver's lease clock and its waits between attempts, moved by hand: no real sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []
        self.on_wait: Callable[[], None] = lambda: None

    def clock(self) -> float:
        return self.now

    def pause(self, stopping: threading.Event, seconds: float) -> bool:
        self.waits.append(seconds)
        self.now += seconds
        self.on_wait()
        return stopping.is_set()


@pytest.fixture
def moments(monkeypatch: pytest.MonkeyPatch) -> Moments:
    moments = Moments()
    monkeypatch.setattr(receiver_module, "_clock", moments.clock)
    monkeypatch.setattr(receiver_module, "_pause", moments.pause)
    return moments


class Flaky:
    """A store or inbox whose ``operation`` fails ``times`` times with a ``StoreError``, as
    during an outage; everything else goes to the real one."""

    def __init__(self, real: Any, operation: str, times: int) -> None:
        self._real, self._operation, self.left = real, operation, times
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._real, name)
        if name != self._operation:
            return attribute

        def flaky(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.left:
                self.left -= 1
                raise StoreError("store unreachable (a test's outage)", engine="test")
            return attribute(*args, **kwargs)

        return flaky


class FlakyStore(MemoryDedupeStore):
    """A dedupe store whose ``complete`` (and ``acomplete``) fail a few times, as in an outage."""

    def __init__(self, fail_complete: int, fail_acomplete: int) -> None:
        super().__init__()
        self.fail_complete, self.fail_acomplete = fail_complete, fail_acomplete

    def complete(self, key: str) -> None:
        if self.fail_complete:
            self.fail_complete -= 1
            raise StoreError("store unreachable (a test's outage)", engine="test")
        super().complete(key)

    async def acomplete(self, key: str) -> None:
        if self.fail_acomplete:  # the background retries then go through the sync method
            self.fail_acomplete -= 1
            raise StoreError("store unreachable (a test's outage)", engine="test")
        super().complete(key)


@pytest.fixture(params=["sqlite", "postgres", "redis"])
def inbox(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        made: Any = SQLiteInbox(tmp_path / "inbox.db", lease=60)
    elif request.param == "postgres":
        import psycopg

        url = request.getfixturevalue("postgres_url")
        made = PostgresInbox(url, lease=60)
        made.counts()  # the tables exist from here on
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("TRUNCATE sports_posts_inbox")
    else:
        made = RedisInbox(request.getfixturevalue("redis_url"), prefix=f"{{retry-{tmp_path.name}}}:", lease=60)
    yield made
    made.close()


def _story() -> tuple[bytes, dict[str, str]]:
    request = build_test_request(sample_payload(), SECRET)
    return request.body, request.headers


def test_a_mark_done_that_fails_during_an_outage_is_retried_and_the_handler_runs_once(
    inbox: Any, moments: Moments
) -> None:
    runs: list[str] = []
    flaky = Flaky(inbox, "mark_done", times=3)
    receiver = WebhookReceiver(SECRET, lambda e: runs.append(e.dedupe_key), inbox=flaky, start_worker=False)
    body, headers = _story()
    assert receiver.handle(body, headers).status == 202
    assert receiver.run_inbox_once() == 1
    assert flaky.calls == 4 and moments.waits == [0.1, 0.5, 1.0]  # backoff, no real sleep
    assert inbox.counts()["done"] == 1
    assert receiver.run_inbox_once() == 0
    moments.now += 3600  # long past the lease: nothing is taken again either
    assert receiver.run_inbox_once() == 0
    assert len(runs) == 1
    receiver.close()


def test_the_retries_stop_when_the_lease_would_lapse(inbox: Any, moments: Moments,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    flaky = Flaky(inbox, "mark_done", times=10_000)
    receiver = WebhookReceiver(SECRET, lambda e: None, inbox=flaky, start_worker=False)
    body, headers = _story()
    receiver.handle(body, headers)
    with caplog.at_level(logging.ERROR, logger="sports_posts.webhooks"):
        assert receiver.run_inbox_once() == 1
    assert sum(moments.waits) < 60  # the lease of the entry: after it another worker may hold it
    assert moments.waits[-1] == 5.0 and len(moments.waits) > 5
    assert "not recorded before its lease lapsed" in caplog.text
    assert inbox.counts()["processing"] == 1  # taken again once the lease lapses
    receiver.close()


def test_a_failed_handler_s_outcome_is_retried_too(inbox: Any, moments: Moments) -> None:
    flaky = Flaky(inbox, "mark_failed", times=2)

    def handler(event: Any) -> None:
        raise RuntimeError("handler failed")

    receiver = WebhookReceiver(SECRET, handler, inbox=flaky, start_worker=False)
    body, headers = _story()
    receiver.handle(body, headers)
    receiver.run_inbox_once()
    assert flaky.calls == 3 and inbox.counts()["pending"] == 1
    receiver.close()


def test_closing_the_receiver_ends_the_retries_after_one_last_attempt(tmp_path: Path, moments: Moments) -> None:
    inbox = SQLiteInbox(tmp_path / "inbox.db")
    flaky = Flaky(inbox, "mark_done", times=10_000)
    receiver = WebhookReceiver(SECRET, lambda e: None, inbox=flaky, start_worker=False)
    receiver.handle(*_story())
    moments.on_wait = receiver._stopping.set  # close() arrives during the first wait
    receiver.run_inbox_once()
    assert flaky.calls == 2
    receiver.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_dedupe_path_completes_in_the_background_so_a_retry_is_not_processed(
    mode: str, moments: Moments
) -> None:
    runs: list[str] = []
    store = FlakyStore(fail_complete=2 if mode == "sync" else 1, fail_acomplete=1 if mode == "async" else 0)
    async def async_handler(event: Any) -> None:
        runs.append(event.dedupe_key)

    handler: Any = (lambda e: runs.append(e.dedupe_key)) if mode == "sync" else async_handler
    receiver = WebhookReceiver(SECRET, handler, store=store)
    payload = sample_payload()
    first = build_test_request(payload, SECRET)
    if mode == "sync":
        assert receiver.handle(first.body, first.headers).status == 202
    else:
        import asyncio

        assert asyncio.run(receiver.handle_async(first.body, first.headers)).status == 202
    assert receiver.wait_idle(30)
    retry = build_test_request(payload, SECRET)
    assert receiver.handle(retry.body, retry.headers).status == 200  # found done, not run again
    assert len(runs) == 1 and moments.waits
    receiver.close()


def test_a_real_redis_restart_mid_drain_runs_each_story_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = RedisProcess(persistent=True)
    server.start()
    restarting = threading.Lock()
    down = threading.Event()
    runs: dict[str, int] = {}
    lock = threading.Lock()
    try:
        inbox = RedisInbox(server.url, prefix="{restart}:", socket_timeout=2, lease=60)
        store = RedisDedupeStore(server.url, prefix="restart:", socket_timeout=2)

        def handler(event: Any) -> None:
            with lock:
                runs[event.dedupe_key] = runs.get(event.dedupe_key, 0) + 1
                if len(runs) == 40:  # mid-drain: the server dies (its AOF keeps what it acknowledged)
                    server.kill()
                    down.set()

        def restart() -> None:  # the outage ends while the receiver waits to retry
            with restarting:
                if down.is_set():
                    server.start()
                    down.clear()

        def pause(stopping: threading.Event, seconds: float) -> bool:
            waits.append(seconds)
            restart()
            return False

        waits: list[float] = []
        monkeypatch.setattr(receiver_module, "_clock", lambda: 1000.0)  # no lease lapses meanwhile
        monkeypatch.setattr(receiver_module, "_pause", pause)
        receiver = WebhookReceiver(SECRET, handler, store=store, inbox=inbox, start_worker=False)
        stories = 120
        for _ in range(stories):
            assert receiver.handle(*_story()).status == 202
        while True:
            try:
                if not receiver.run_inbox_once(16):
                    break
            except StoreError:  # take_due while the server is down: the worker's loop would wait
                restart()
        assert waits  # the outage was met, and outlived
        assert len(runs) == stories and set(runs.values()) == {1}, sorted(runs.values())[-3:]
        assert inbox.counts()["done"] == stories
        receiver.close()
        inbox.close()
        store.close()
    finally:
        server.close()
