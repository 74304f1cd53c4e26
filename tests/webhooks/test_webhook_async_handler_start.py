"""An ``async def`` handler runs as a task of the request's loop: from Python 3.12 an eager
one, so that a handler that never waits is answered without a trip through the event loop;
one that waits goes on as a task with its context, its cancellation and ``handler_timeout``."""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Generator
from typing import Any

import pytest

from sports_posts.webhooks import WebhookEvent, WebhookReceiver
from sports_posts.webhooks.receiver import _delivery_id
from tests.webhooks.webhook_helpers import SECRET, signed

WAIT = 5.0
VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="caller")



def others() -> list[asyncio.Task[object]]:
    """The tasks of the running loop other than this one: what the receiver left running
    (asyncio's public view, not the receiver's internals)."""
    current = asyncio.current_task()
    return [task for task in asyncio.all_tasks() if task is not current]

def test_a_handler_that_never_waits_is_answered_without_a_trip_through_the_event_loop_from_3_12() -> None:
    """From 3.12 an eager task; before, a task started on the loop's next turn (asyncio has
    no public way to start one sooner), done by the answer all the same."""
    handled: list[str] = []

    async def handler(event: WebhookEvent) -> None:
        handled.append(event.dedupe_key)

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        loop_ran: list[bool] = []
        asyncio.get_running_loop().call_soon(loop_ran.append, True)
        response = await receiver.handle_async(request.body, request.headers)
        assert (response.status_code, response.outcome) == (202, "accepted")
        assert loop_ran == ([] if sys.version_info >= (3, 12) else [True])
        assert not others()  # nothing left behind to wait for
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
        (task,) = others()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not receiver.store.is_complete("breaking_news:1790000000000000001")
        assert (await receiver.handle_async(request.body, request.headers)).outcome == "handler_timeout"
        for task in others():
            task.cancel()

    asyncio.run(scenario())
    assert started == [1, 1]  # the retry after the cancellation ran the handler again


def test_a_handler_gets_the_values_and_the_cancellations_of_what_it_waits_on() -> None:
    got: list[object] = []
    waits: list[asyncio.Future[int]] = []

    async def handler(event: WebhookEvent) -> None:
        got.append(await waits[0])
        waits.append(asyncio.get_running_loop().create_future())
        try:
            await waits[1]
        except asyncio.CancelledError:
            got.append("cancelled")

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        waits.append(loop.create_future())
        loop.call_soon(waits[0].set_result, 7)
        loop.call_later(0.01, lambda: waits[1].cancel())
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 202

    asyncio.run(scenario())
    assert got == [7, "cancelled"]


def test_a_handler_that_yields_what_no_task_can_wait_on_answers_503() -> None:
    class Bad:
        def __await__(self) -> Generator[Any, Any, None]:
            yield "not a future"

    async def handler(event: WebhookEvent) -> None:
        await Bad()

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).outcome == "handler_failed"

    asyncio.run(scenario())


class _Yield:
    """A bare yield, the way asyncio.sleep(0) hands control back to the loop."""

    def __await__(self) -> Generator[Any, Any, None]:
        yield


def test_a_handler_that_yields_bare_to_the_loop_goes_on_after_the_loops_turn() -> None:
    steps: list[str] = []

    async def handler(event: WebhookEvent) -> None:
        await _Yield()
        steps.append("after")

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 202

    asyncio.run(scenario())
    assert steps == ["after"]


def test_an_overrunning_handler_goes_on_in_its_own_context_and_completes_its_claim() -> None:
    seen: list[str] = []
    gate: list[asyncio.Event] = []

    async def handler(event: WebhookEvent) -> None:
        VAR.set("handler")
        await gate[0].wait()
        seen.append(VAR.get())

    async def scenario() -> None:
        gate.append(asyncio.Event())
        receiver = WebhookReceiver(SECRET, handler, handler_timeout=0.01)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).outcome == "handler_timeout"
        assert VAR.get() == "caller"
        assert not await receiver.wait_idle_async(0.01)  # still running, as a task of its own
        gate[0].set()
        assert await receiver.wait_idle_async(WAIT)
        assert (await receiver.handle_async(request.body, request.headers)).outcome == "duplicate"

    asyncio.run(scenario())
    assert seen == ["handler"]


def test_wait_idle_async_waits_for_a_handler_still_running_in_a_request() -> None:
    gate: list[asyncio.Event] = []

    async def handler(event: WebhookEvent) -> None:
        await gate[0].wait()

    async def scenario() -> None:
        gate.append(asyncio.Event())
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        answer = asyncio.ensure_future(receiver.handle_async(request.body, request.headers))
        await asyncio.sleep(0.01)
        assert not await receiver.wait_idle_async(0.01)
        gate[0].set()
        assert await receiver.wait_idle_async(WAIT)
        assert (await answer).status_code == 202

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


def test_the_handler_runs_in_one_task_from_its_first_step_to_its_last() -> None:
    seen: list[Any] = []

    async def handler(event: WebhookEvent) -> None:
        seen.append(asyncio.current_task())
        await asyncio.sleep(0.001)
        seen.append(asyncio.current_task())

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 202
        assert seen[0] is seen[1] and seen[0] is not None

    asyncio.run(scenario())


def test_a_timeout_the_handler_sets_on_its_task_cancels_the_handler_and_the_request_still_answers() -> None:
    outcomes: list[str] = []

    async def handler(event: WebhookEvent) -> None:
        # What asyncio.timeout and anyio's cancel scopes do: cancel the task they were entered in.
        mine = asyncio.current_task()
        assert mine is not None
        asyncio.get_running_loop().call_later(0.001, mine.cancel)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            outcomes.append("handler cancelled")
            raise RuntimeError("gave up") from None

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        response = await receiver.handle_async(request.body, request.headers)
        assert (response.status_code, response.outcome) == (503, "handler_failed")

    asyncio.run(scenario())
    assert outcomes == ["handler cancelled"]


def test_the_request_task_is_current_again_after_the_handlers_first_step() -> None:
    async def handler(event: WebhookEvent) -> None:
        pass

    async def scenario() -> None:
        me = asyncio.current_task()
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 202
        assert asyncio.current_task() is me
        await asyncio.sleep(0)
        assert asyncio.current_task() is me

    asyncio.run(scenario())


def test_a_cancelled_request_on_python_3_9_to_3_11_cancels_its_handler_and_what_it_waits_on() -> None:
    seen: list[str] = []
    inner: list[asyncio.Future[None]] = []

    async def handler(event: WebhookEvent) -> None:
        inner.append(asyncio.ensure_future(asyncio.sleep(3600)))
        try:
            await inner[0]  # a task: cancelling it takes a turn of the loop
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler)
        request = signed()
        answer = asyncio.ensure_future(receiver.handle_async(request.body, request.headers))
        await asyncio.sleep(0.01)
        answer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await answer
        if sys.version_info < (3, 12):  # the request's task was the handler's
            assert seen == ["cancelled"] and inner[0].cancelled()
            assert receiver.store.claim("breaking_news:1790000000000000001")  # released for the retry
        else:  # an eager task of its own: it goes on
            assert seen == [] and not inner[0].done()
        for task in others():
            task.cancel()
        for future in inner:
            future.cancel()
        await asyncio.sleep(0)

    asyncio.run(scenario())


def test_the_package_reaches_no_private_part_of_asyncio() -> None:
    """Handlers run through asyncio's public API only: no ``_asyncio_*`` attribute of a
    future (the one a hand-stepped coroutine needs), nothing private of the ``asyncio`` module."""
    import ast
    import pathlib

    import sports_posts

    def rooted_in_asyncio(node: ast.expr) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id == "asyncio"

    found = []
    for path in sorted(pathlib.Path(sports_posts.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and (
                node.attr.startswith("_asyncio") or rooted_in_asyncio(node.value)
            ):
                found.append(f"{path.name}:{node.lineno}: {node.attr}")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("asyncio"):
                found += [f"{path.name}:{node.lineno}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert found == []
