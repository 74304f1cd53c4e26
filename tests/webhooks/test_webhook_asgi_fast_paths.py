"""The short cuts of the usual delivery keep every answer: the ASGI app reads the declared
length from lower-case pairs and falls back to ``get_header`` for anything else, and only
the memory store itself (not a subclass) is called without its async methods."""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any

import pytest

from sports_posts.webhooks import MemoryDedupeStore, WebhookEvent, WebhookReceiver
from sports_posts.webhooks.adapters.asgi import WebhookASGIApp, _content_length
from tests.webhooks.webhook_helpers import SECRET, signed

BIG = str(5 << 20).encode()


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([(b"host", b"x"), (b"content-length", b"12")], b"12"),
        ([(b"Content-Length", b"12")], "12"),  # not ASGI's form: get_header reads it
        ([(b"host", b"x")], None),
        ([(b"a", b"b", b"c")], None),  # not pairs: get_header ignores them, nothing raises
        (None, None),
    ],
)
def test_the_declared_length_is_read_from_any_header_shape(headers: Any, expected: object) -> None:
    assert _content_length(headers) == expected


@pytest.mark.parametrize("name", [b"content-length", b"Content-Length"])
def test_a_declared_length_over_the_limit_is_refused_before_reading_in_either_case(name: bytes) -> None:
    app = WebhookASGIApp(WebhookReceiver(SECRET, lambda event: None))
    sent: list[dict[str, Any]] = []
    read: list[int] = []

    async def receive() -> dict[str, Any]:
        read.append(1)
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    asyncio.run(app({"type": "http", "method": "POST", "headers": [(b"host", b"x"), (name, BIG)]}, receive, send))
    assert (sent[0]["status"], read) == (413, [])


def test_a_subclass_of_the_memory_store_is_called_through_its_async_methods() -> None:
    calls: list[str] = []

    class Counting(MemoryDedupeStore):
        async def aclaim(self, key: str) -> bool:
            calls.append("aclaim")
            return await super().aclaim(key)

        async def acomplete(self, key: str) -> None:
            calls.append("acomplete")
            await super().acomplete(key)

    async def handler(event: WebhookEvent) -> None:
        pass

    async def scenario() -> None:
        receiver = WebhookReceiver(SECRET, handler, store=Counting())
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 202

    asyncio.run(scenario())
    assert calls == ["aclaim", "acomplete"]


def test_the_memory_store_claims_and_completes_under_handle_async() -> None:
    async def handler(event: WebhookEvent) -> None:
        pass

    async def scenario() -> None:
        store = MemoryDedupeStore()
        receiver = WebhookReceiver(SECRET, handler, store=store)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 202
        assert store.is_complete("breaking_news:1790000000000000001")
        assert (await receiver.handle_async(request.body, request.headers)).outcome == "duplicate"

    asyncio.run(scenario())


def _recorded(fail_on: str = "") -> tuple[MemoryDedupeStore, list[str]]:
    """A memory store itself (the receiver's direct path is for its type alone) whose calls
    are recorded: its methods are wrapped on the instance."""
    store, calls = MemoryDedupeStore(), []

    def wrapped(name: str) -> Any:
        method = getattr(store, name)

        def call(key: str) -> Any:
            calls.append(name)
            if name == fail_on:
                raise ConnectionError(f"{name} failed")
            return method(key)

        return call

    for name in ("claim", "complete", "release", "is_complete"):
        setattr(store, name, wrapped(name))
    return store, calls


def test_the_memory_store_is_asked_once_per_step_on_the_direct_path() -> None:
    # The first claim is made by handle_async itself: a refused one goes on to the claim's
    # next step (is the story done?), never claims the story a second time.
    async def handler(event: WebhookEvent) -> None:
        pass

    async def scenario() -> tuple[list[str], list[str]]:
        store, calls = _recorded()
        receiver = WebhookReceiver(SECRET, handler, store=store)
        assert receiver._engine.memory_store, "the direct path"
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 202
        first = list(calls)
        del calls[:]
        assert (await receiver.handle_async(request.body, request.headers)).outcome == "duplicate"
        return first, calls

    first, again = asyncio.run(scenario())
    assert first == ["claim", "complete"]
    assert again == ["claim", "is_complete"]


def test_a_memory_store_failing_its_claim_on_the_direct_path_is_a_503_and_runs_no_handler() -> None:
    ran: list[WebhookEvent] = []

    async def handler(event: WebhookEvent) -> None:
        ran.append(event)

    async def scenario() -> Any:
        store, calls = _recorded(fail_on="claim")
        receiver = WebhookReceiver(SECRET, handler, store=store)
        request = signed()
        return await receiver.handle_async(request.body, request.headers), calls

    response, calls = asyncio.run(scenario())
    assert (response.status_code, response.outcome) == (503, "store_unavailable")
    assert calls == ["claim"] and ran == []
