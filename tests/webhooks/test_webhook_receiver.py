"""WebhookReceiver.handle: the answer is decided before the handler runs; bad input never escapes."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sports_posts import ParameterError
from sports_posts.webhooks import (
    BreakingNewsEvent,
    MemoryDedupeStore,
    SQLiteDedupeStore,
    SubscriptionFilter,
    WebhookEvent,
    WebhookReceiver,
    sign_payload,
)
from tests.webhooks.webhook_helpers import SECRET, FakeClock, signed

WAIT = 10.0  # a safety net for waiting on events, never a timed assertion


class Recorder:
    """A sync handler that records events and can be told to fail or to block."""

    def __init__(self, failures: int = 0) -> None:
        self.events: list[WebhookEvent] = []
        self.failures = failures
        self.gate = threading.Event()
        self.gate.set()
        self.started = threading.Event()

    def __call__(self, event: WebhookEvent) -> None:
        self.started.set()
        assert self.gate.wait(WAIT)
        if self.failures:
            self.failures -= 1
            raise RuntimeError("downstream is down")
        self.events.append(event)


def test_accepted_event_answers_202_and_reaches_the_handler() -> None:
    handler = Recorder()
    with WebhookReceiver(SECRET, handler) as receiver:
        request = signed(delivery_id="dlv_1")
        response = receiver.handle(request.body, request.headers)
        assert (response.status_code, response.outcome, response.ok) == (202, "accepted", True)
        assert json.loads(response.body) == {"ok": True, "status": "accepted"}
        assert ("content-type", "application/json") in response.headers
        assert receiver.wait_idle(WAIT)
    assert [e.delivery_id for e in handler.events] == ["dlv_1"]


def test_missing_or_bad_signature_answers_401_and_the_handler_never_runs() -> None:
    handler = Recorder()
    with WebhookReceiver(SECRET, handler) as receiver:
        request = signed()
        unsigned = {k: v for k, v in request.headers.items() if k != "X-Service-Signature"}
        forged = {**request.headers, "X-Service-Signature": sign_payload(request.body, "guess")}
        garbled = {**request.headers, "X-Service-Signature": "sha256=\u0660" * 3}
        for headers in (unsigned, forged, garbled):
            response = receiver.handle(request.body, headers)
            assert (response.status_code, response.outcome) == (401, "invalid_signature")
        assert receiver.handle(request.body + b" ", request.headers).status_code == 401
        assert receiver.wait_idle(WAIT)
    assert handler.events == []


def test_signed_body_that_does_not_parse_answers_400() -> None:
    body = b'{"event": "breaking_news", "data": {}}'
    with WebhookReceiver(SECRET, Recorder()) as receiver:
        response = receiver.handle(body, {"X-Service-Signature": sign_payload(body, SECRET)})
    assert (response.status_code, response.outcome) == (400, "invalid_payload")


def test_a_retry_of_a_processed_story_answers_200_duplicate_and_is_not_handled_again() -> None:
    handler = Recorder()
    with WebhookReceiver(SECRET, handler) as receiver:
        first = signed(delivery_id="dlv_1")
        assert receiver.handle(first.body, first.headers).status_code == 202
        assert receiver.wait_idle(WAIT)
        retry = signed(delivery_id="dlv_2")  # same payload, new delivery id
        response = receiver.handle(retry.body, retry.headers)
        assert (response.status_code, response.outcome) == (200, "duplicate")
        assert receiver.wait_idle(WAIT)
    assert [e.delivery_id for e in handler.events] == ["dlv_1"]


def test_both_event_kinds_of_one_post_id_are_handled_separately() -> None:
    handler = Recorder()
    with WebhookReceiver(SECRET, handler) as receiver:
        for kind in ("breaking_news", "breaking_news.update"):
            request = signed(kind)
            assert receiver.handle(request.body, request.headers).status_code == 202
        assert receiver.wait_idle(WAIT)
    assert sorted(e.event for e in handler.events) == ["breaking_news", "breaking_news.update"]


def test_without_an_inbox_the_answer_waits_for_the_handler() -> None:
    order: list[str] = []

    def handler(event: WebhookEvent) -> None:
        order.append("handled")

    receiver = WebhookReceiver(SECRET, handler)
    request = signed()
    response = receiver.handle(request.body, request.headers)
    order.append(f"answered {response.status_code}")
    assert order == ["handled", "answered 202"]


def test_a_handler_that_overruns_its_budget_answers_503_and_keeps_its_claim() -> None:
    handler = Recorder()
    handler.gate.clear()  # blocked until the test lets it go: it cannot finish in time
    with WebhookReceiver(SECRET, handler, in_flight_wait=0, handler_timeout=0.01) as receiver:
        request = signed(delivery_id="dlv_1")
        response = receiver.handle(request.body, request.headers)
        assert (response.status_code, response.outcome, response.ok) == (503, "handler_timeout", False)
        assert handler.started.is_set() and handler.events == []
        in_flight = signed(delivery_id="dlv_2")
        assert receiver.handle(in_flight.body, in_flight.headers).status_code == 409
        handler.gate.set()  # the overrunning handler finishes and completes the story
        assert receiver.wait_idle(WAIT)
        late = signed(delivery_id="dlv_3")
        assert receiver.handle(late.body, late.headers).outcome == "duplicate"
    assert [e.delivery_id for e in handler.events] == ["dlv_1"]


def test_a_handler_that_overruns_under_handle_async_answers_503_too() -> None:
    done: list[str] = []
    gates: list[asyncio.Event] = []

    async def handler(event: WebhookEvent) -> None:
        await gates[0].wait()
        done.append(event.dedupe_key)

    async def scenario() -> None:
        release = asyncio.Event()  # made on the running loop (Python 3.9 binds it at creation)
        gates.append(release)
        receiver = WebhookReceiver(SECRET, handler, handler_timeout=0.01)
        request = signed()
        response = await receiver.handle_async(request.body, request.headers)
        assert (response.status_code, response.outcome) == (503, "handler_timeout")
        release.set()
        assert await receiver.wait_idle_async(WAIT)
        assert (await receiver.handle_async(request.body, request.headers)).outcome == "duplicate"

    asyncio.run(scenario())
    assert done == ["breaking_news:1790000000000000001"]


def test_a_retry_still_in_flight_after_the_wait_answers_409_not_2xx() -> None:
    # If the in-flight attempt then fails, the service's next retry must still be processed.
    store = MemoryDedupeStore()
    assert store.claim("breaking_news:1790000000000000001")
    with WebhookReceiver(SECRET, Recorder(), store=store, in_flight_wait=0) as receiver:
        request = signed()
        response = receiver.handle(request.body, request.headers)
    assert (response.status_code, response.outcome, response.ok) == (409, "in_progress", False)


def _retry_while_in_flight(handler: Recorder) -> tuple[int, tuple[int, str], list[str | None]]:
    """Deliver, then send a retry while the handler of the first attempt is blocked."""
    handler.gate.clear()
    with WebhookReceiver(SECRET, handler) as receiver:
        answers: dict[str, Any] = {}

        def deliver(name: str) -> None:
            request = signed(delivery_id=name)
            answers[name] = receiver.handle(request.body, request.headers)

        first = threading.Thread(target=deliver, args=("dlv_1",))
        first.start()
        assert handler.started.wait(WAIT)
        retry = threading.Thread(target=deliver, args=("dlv_2",))
        retry.start()
        handler.gate.set()  # the first attempt settles while (or before) the retry waits
        first.join(WAIT)
        retry.join(WAIT)
        assert receiver.wait_idle(WAIT)
    second = answers["dlv_2"]
    return answers["dlv_1"].status_code, (second.status_code, second.outcome), [e.delivery_id for e in handler.events]


def test_a_retry_during_the_first_attempt_waits_for_it_and_answers_200_duplicate() -> None:
    assert _retry_while_in_flight(Recorder()) == (202, (200, "duplicate"), ["dlv_1"])


def test_a_retry_during_a_first_attempt_that_fails_is_processed_itself() -> None:
    assert _retry_while_in_flight(Recorder(failures=1)) == (503, (202, "accepted"), ["dlv_2"])


def test_the_response_unpacks_as_status_and_body() -> None:
    request = signed()
    status, body = WebhookReceiver(SECRET, Recorder()).handle(request.body, {})
    assert (status, json.loads(body)) == (
        401, {"ok": False, "status": "invalid_signature", "error": "missing X-Service-Signature header"}
    )


def test_a_handler_that_raises_answers_503_and_releases_the_claim_so_the_next_retry_is_processed() -> None:
    handler = Recorder(failures=1)
    store = MemoryDedupeStore()
    with WebhookReceiver(SECRET, handler, store=store) as receiver:
        first = signed(delivery_id="dlv_1")
        failed = receiver.handle(first.body, first.headers)
        assert (failed.status_code, failed.outcome) == (503, "handler_failed")  # the service retries
        assert handler.events == []
        retry = signed(delivery_id="dlv_2")
        assert receiver.handle(retry.body, retry.headers).status_code == 202
        assert receiver.wait_idle(WAIT)
        third = signed(delivery_id="dlv_3")
        assert receiver.handle(third.body, third.headers).outcome == "duplicate"
    assert [e.delivery_id for e in handler.events] == ["dlv_2"]


def test_a_handler_failure_is_logged_on_the_sports_posts_webhooks_logger(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="sports_posts.webhooks")
    with WebhookReceiver(SECRET, Recorder(failures=1)) as receiver:
        request = signed()
        receiver.handle(request.body, request.headers)
        assert receiver.wait_idle(WAIT)
    failures = [r for r in caplog.records if r.name == "sports_posts.webhooks" and r.levelno == logging.ERROR]
    assert failures and "released for the next retry" in failures[0].getMessage()


def test_secret_never_appears_in_repr_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="sports_posts.webhooks")
    secrets = ["whsec_old_never_show", "whsec_new_never_show"]
    receiver = WebhookReceiver(secrets, Recorder(failures=1))
    assert "never_show" not in repr(receiver)
    assert "***" in repr(receiver)
    request = signed(secret=secrets[1])
    receiver.handle(request.body, request.headers)
    receiver.handle(request.body, {**request.headers, "X-Service-Signature": "sha256=nope"})
    receiver.handle(b"{}", {"X-Service-Signature": sign_payload(b"{}", secrets[0])})
    receiver.close()
    assert caplog.records
    assert all("never_show" not in r.getMessage() and "never_show" not in str(r.exc_info) for r in caplog.records)


def test_events_outside_the_filter_answer_200_ignored_without_running_the_handler() -> None:
    handler = Recorder()
    receiver = WebhookReceiver(SECRET, handler, filter=SubscriptionFilter(leagues=["NBA"]))
    with receiver:
        request = signed(league="NFL")
        response = receiver.handle(request.body, request.headers)
        assert (response.status_code, response.outcome) == (200, "ignored")
        nba = signed(league="nba", id="2")
        assert receiver.handle(nba.body, nba.headers).status_code == 202
        assert receiver.wait_idle(WAIT)
    assert [e.data.league for e in handler.events] == ["nba"]


class BrokenStore(MemoryDedupeStore):
    def claim(self, key: str) -> bool:
        raise ConnectionError("redis is down")


def test_an_unavailable_store_answers_503_so_that_the_service_retries() -> None:
    with WebhookReceiver(SECRET, Recorder(), store=BrokenStore()) as receiver:
        request = signed()
        response = receiver.handle(request.body, request.headers)
    assert (response.status_code, response.ok) == (503, False)


def test_an_async_handler_runs_as_a_task_under_handle_async() -> None:
    seen: list[str] = []
    loop_ids: list[int] = []

    async def handler(event: WebhookEvent) -> None:
        loop_ids.append(id(asyncio.get_running_loop()))
        await asyncio.sleep(0)
        seen.append(event.dedupe_key)

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        response = await receiver.handle_async(request.body, request.headers)
        assert response.status_code == 202
        assert await receiver.wait_idle_async(WAIT)
        assert loop_ids == [id(asyncio.get_running_loop())]  # a task on the app's own loop
        again = await receiver.handle_async(request.body, request.headers)
        assert again.outcome == "duplicate"
        receiver.close()

    asyncio.run(scenario())
    assert seen == ["breaking_news:1790000000000000001"]


def test_an_async_handler_that_raises_releases_the_claim() -> None:
    calls: list[str | None] = []

    async def handler(event: WebhookEvent) -> None:
        calls.append(event.delivery_id)
        if len(calls) == 1:
            raise RuntimeError("boom")

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler)
        for delivery in ("dlv_1", "dlv_2", "dlv_3"):
            request = signed(delivery_id=delivery)
            await receiver.handle_async(request.body, request.headers)
            assert await receiver.wait_idle_async(WAIT)
        receiver.close()

    asyncio.run(scenario())
    assert calls == ["dlv_1", "dlv_2"]


def test_a_sync_handler_under_handle_async_runs_in_the_thread_pool() -> None:
    handler = Recorder()
    names: list[str] = []

    def record(event: WebhookEvent) -> None:
        names.append(threading.current_thread().name)
        handler(event)

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, record)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 202
        assert await receiver.wait_idle_async(WAIT)
        receiver.close()

    asyncio.run(scenario())
    assert len(handler.events) == 1 and names[0].startswith("sports-posts-webhook")


def test_an_async_handler_under_sync_handle_is_run_to_completion() -> None:
    seen: list[BreakingNewsEvent] = []

    async def handler(event: WebhookEvent) -> None:
        await asyncio.sleep(0)
        assert isinstance(event, BreakingNewsEvent)
        seen.append(event)

    with WebhookReceiver(SECRET, handler) as receiver:
        request = signed()
        assert receiver.handle(request.body, request.headers).status_code == 202
        assert receiver.wait_idle(WAIT)
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"secret": ""}, "secret"),
        ({"handler": "not callable"}, "handler"),
        ({"store": object()}, "store"),
        ({"in_flight_wait": 10}, "in_flight_wait"),
        ({"in_flight_wait": -1}, "in_flight_wait"),
    ],
)
def test_bad_constructor_arguments_are_parameter_errors(kwargs: dict[str, Any], parameter: str) -> None:
    arguments: dict[str, Any] = {"secret": SECRET, "handler": Recorder(), **kwargs}
    with pytest.raises(ParameterError) as info:
        WebhookReceiver(arguments.pop("secret"), arguments.pop("handler"), **arguments)
    assert info.value.parameter == parameter


_FUZZ_RECEIVER = WebhookReceiver(SECRET, lambda event: None)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    body=st.one_of(st.binary(max_size=300), st.text(max_size=300), st.none(), st.integers()),
    headers=st.one_of(
        st.dictionaries(st.sampled_from(["X-Service-Signature", "x-service-delivery", "X-Other"]),
                        st.text(max_size=80), max_size=3),
        st.lists(st.tuples(st.binary(max_size=20), st.binary(max_size=80)), max_size=3),
        st.none(),
        st.text(max_size=10),
    ),
    sign=st.booleans(),
)
def test_fuzzed_requests_never_raise_and_never_answer_500(body: Any, headers: Any, sign: bool) -> None:
    if sign and isinstance(body, (bytes, str)):
        raw = body.encode("utf-8", "replace") if isinstance(body, str) else body
        headers = {"X-Service-Signature": sign_payload(raw, SECRET)}
        body = raw
    response = _FUZZ_RECEIVER.handle(body, headers)
    assert response.status_code in (200, 202, 400, 401, 409)
    assert response.status_code != 202 or sign



def test_an_async_handler_cancelled_at_shutdown_releases_its_claim() -> None:
    store = MemoryDedupeStore()
    started: list[WebhookEvent] = []

    async def handler(event: WebhookEvent) -> None:
        started.append(event)
        await asyncio.Event().wait()  # still running when the app stops

    async def app_lifetime() -> None:
        receiver = WebhookReceiver(SECRET, handler, store=store)
        request = signed()
        answer = asyncio.ensure_future(receiver.handle_async(request.body, request.headers))
        while not started:  # let the handler start; asyncio.run then cancels both on exit
            await asyncio.sleep(0)
        assert not answer.done()

    asyncio.run(app_lifetime())
    assert len(started) == 1
    assert store.claim("breaking_news:1790000000000000001")  # free for the service's next retry


def test_an_event_that_cannot_be_dispatched_answers_503_and_frees_the_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryDedupeStore()
    receiver = WebhookReceiver(SECRET, Recorder(), store=store)

    def no_threads(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")  # what a process at its thread limit meets

    request = signed()
    with monkeypatch.context() as patched:
        patched.setattr(threading.Thread, "start", no_threads)
        assert receiver.handle(request.body, request.headers).status_code == 503
    assert store.claim("breaking_news:1790000000000000001")


def test_a_claim_held_by_a_worker_that_died_lapses_and_a_later_retry_is_processed(
    tmp_path: Path, clock: FakeClock
) -> None:
    dead_worker = SQLiteDedupeStore(tmp_path / "dedupe.db", lease=60, clock=clock)
    assert dead_worker.claim("breaking_news:1790000000000000001")  # then its process was killed
    handler = Recorder()
    store = SQLiteDedupeStore(tmp_path / "dedupe.db", lease=60, clock=clock)
    with WebhookReceiver(SECRET, handler, store=store, in_flight_wait=0) as receiver:
        early = signed(delivery_id="dlv_2")
        assert receiver.handle(early.body, early.headers).status_code == 409
        clock.advance(61)  # the service's next retry comes after the lease
        late = signed(delivery_id="dlv_3")
        assert receiver.handle(late.body, late.headers).status_code == 202
        assert receiver.wait_idle(WAIT)
    assert [e.delivery_id for e in handler.events] == ["dlv_3"]


class ThreadRecordingMemory(MemoryDedupeStore):
    def __init__(self) -> None:
        super().__init__()
        self.threads: set[str] = set()

    def claim(self, key: str) -> bool:
        self.threads.add(threading.current_thread().name)
        return super().claim(key)


class ThreadRecordingSQLite(SQLiteDedupeStore):
    threads: set[str]

    def claim(self, key: str) -> bool:
        self.threads.add(threading.current_thread().name)
        return super().claim(key)


def test_handle_async_claims_on_the_loop_for_the_memory_store_and_in_a_thread_for_sqlite(tmp_path: Path) -> None:
    memory = ThreadRecordingMemory()
    sqlite = ThreadRecordingSQLite(tmp_path / "dedupe.db")
    sqlite.threads = set()

    async def handler(event: WebhookEvent) -> None:
        pass

    async def scenario() -> None:
        for store in (memory, sqlite):
            receiver = WebhookReceiver(SECRET, handler, store=store)
            request = signed()
            assert (await receiver.handle_async(request.body, request.headers)).status_code == 202

    asyncio.run(scenario())
    loop_thread = threading.current_thread().name
    assert memory.threads == {loop_thread}  # awaited natively: no thread hop
    assert sqlite.threads and loop_thread not in sqlite.threads  # blocking I/O: offloaded
