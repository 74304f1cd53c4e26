"""An ``async def`` handler starts at once, on every Python: a handler that never waits is
answered without a task or a trip through the event loop; one that waits goes on as a task
with its context, its cancellation and ``handler_timeout`` as before."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Generator
from typing import Any

import pytest
from webhook_helpers import SECRET, signed

from sports_posts.webhooks import WebhookEvent, WebhookReceiver
from sports_posts.webhooks.receiver import _delivery_id, _start_task

WAIT = 5.0
VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="caller")


def test_a_handler_that_never_waits_is_answered_without_a_trip_through_the_event_loop() -> None:
    handled: list[str] = []

    async def handler(event: WebhookEvent) -> None:
        handled.append(event.dedupe_key)

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        loop_ran: list[bool] = []
        asyncio.get_running_loop().call_soon(loop_ran.append, True)
        response = await receiver.handle_async(request.body, request.headers)
        assert (response.status_code, response.outcome, loop_ran) == (202, "accepted", [])
        assert not receiver._tasks  # nothing left behind to wait for
        assert (await receiver.handle_async(request.body, request.headers)).outcome == "duplicate"

    asyncio.run(scenario())
    assert handled == ["breaking_news:1790000000000000001"]


def test_a_handler_that_waits_goes_on_as_a_task_and_is_answered_when_it_returns() -> None:
    steps: list[str] = []

    async def handler(event: WebhookEvent) -> None:
        steps.append("first")
        await asyncio.sleep(0)
        steps.append("second")
        await asyncio.sleep(0.001)
        steps.append("third")

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        response = await receiver.handle_async(request.body, request.headers)
        assert (response.status_code, steps) == (202, ["first", "second", "third"])
        assert await receiver.wait_idle_async(WAIT)

    asyncio.run(scenario())


def test_the_handler_sees_its_own_context_from_start_to_end_and_the_caller_keeps_its_own() -> None:
    seen: list[str] = []

    async def handler(event: WebhookEvent) -> None:
        seen.append(VAR.get())
        VAR.set("handler")
        await asyncio.sleep(0)
        seen.append(VAR.get())

    async def scenario() -> None:
        VAR.set("request")
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 202
        assert VAR.get() == "request"

    asyncio.run(scenario())
    assert seen == ["request", "handler"]


def test_a_handler_that_raises_after_waiting_answers_503_and_releases_the_claim() -> None:
    calls: list[int] = []

    async def handler(event: WebhookEvent) -> None:
        calls.append(1)
        await asyncio.sleep(0)
        if len(calls) == 1:
            raise RuntimeError("boom")

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 503
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 202

    asyncio.run(scenario())
    assert calls == [1, 1]


def test_a_handler_cancelled_while_it_waits_releases_its_claim() -> None:
    started = []

    async def handler(event: WebhookEvent) -> None:
        started.append(1)
        await asyncio.sleep(3600)

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler, handler_timeout=0.01)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).outcome == "handler_timeout"
        (task,) = receiver._tasks
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not await receiver.store.ais_complete("breaking_news:1790000000000000001")
        assert (await receiver.handle_async(request.body, request.headers)).outcome == "handler_timeout"
        for task in list(receiver._tasks):
            task.cancel()

    asyncio.run(scenario())
    assert started == [1, 1]  # the retry after the cancellation ran the handler again


def test_a_started_coroutine_gets_the_values_and_exceptions_its_waits_end_with() -> None:
    async def value(future: asyncio.Future[int]) -> bool:
        await asyncio.sleep(0)
        return await future == 7

    async def catches() -> bool:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            return False
        return True

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()
        task = _start_task(loop, value(future))
        assert not task.done()
        loop.call_soon(future.set_result, 7)
        assert await task is True
        task = _start_task(loop, catches())
        await asyncio.sleep(0)
        task.cancel()
        assert await task is False

    asyncio.run(scenario())


def test_a_coroutine_that_ends_or_is_cancelled_in_its_first_step_gives_a_settled_future() -> None:
    async def returns() -> bool:
        return True

    async def cancelled() -> bool:
        raise asyncio.CancelledError

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        done = _start_task(loop, returns())
        assert done.done() and done.result() is True
        stopped = _start_task(loop, cancelled())
        assert stopped.cancelled()

    asyncio.run(scenario())


class _Yield:
    """A bare yield, the way asyncio.sleep(0) hands control back to the loop."""

    def __await__(self) -> Generator[Any, Any, None]:
        yield


def test_a_bare_yield_in_the_first_step_is_resumed_by_the_loop() -> None:
    async def body() -> bool:
        await _Yield()
        return True

    async def scenario() -> None:
        task = _start_task(asyncio.get_running_loop(), body())
        assert not task.done()
        assert await asyncio.wait_for(task, WAIT) is True

    asyncio.run(scenario())


def test_the_delivery_id_for_telemetry_is_each_requests_own_when_requests_interleave() -> None:
    gate: list[asyncio.Event] = []

    async def handler(event: WebhookEvent) -> None:
        if event.delivery_id == "dlv_a":
            await gate[0].wait()

    async def scenario() -> None:
        gate.append(asyncio.Event())
        receiver = WebhookReceiver(SECRET, handler)
        first, second = signed(delivery_id="dlv_a", id="1"), signed(delivery_id="dlv_b", id="2")
        a = asyncio.ensure_future(receiver.handle_async(first.body, first.headers))
        await asyncio.sleep(0)
        assert (await receiver.handle_async(second.body, second.headers)).status_code == 202
        assert _delivery_id(receiver, second.headers) == "dlv_b"
        gate[0].set()
        assert (await a).status_code == 202
        assert _delivery_id(receiver, first.headers) == "dlv_a"  # read again: another request came between
        assert _delivery_id(receiver, second.headers) == "dlv_b"

    asyncio.run(scenario())
