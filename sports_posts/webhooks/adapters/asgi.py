"""ASGI adapters: a plain ASGI app (no framework needed) and a Starlette / FastAPI endpoint."""

from __future__ import annotations

from collections.abc import Awaitable, MutableMapping
from typing import TYPE_CHECKING, Any, Callable

from ..receiver import WebhookReceiver, WebhookResponse
from ..signature import get_header
from ._body import JSON, MAX_BODY, NOT_ALLOWED, TOO_LARGE, check_max_body, declared_too_large

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = ["MAX_BODY", "WebhookASGIApp", "starlette_endpoint", "starlette_response"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_JSON = [(b"content-type", JSON.encode())]
_DEFAULT_HEADERS = WebhookResponse(0, b"").headers


class WebhookASGIApp:
    """A complete ASGI app for the webhook URL; mount it anywhere or serve it alone.

    Reads ``http.request`` messages into bytes itself, so no framework touches the body. As
    the top-level app it answers ``lifespan`` by starting and closing the receiver.
    """

    def __init__(self, receiver: WebhookReceiver, *, max_body: int = MAX_BODY) -> None:
        self.receiver = receiver
        self.max_body: int = check_max_body(max_body)

    def __repr__(self) -> str:
        return f"WebhookASGIApp({self.receiver!r})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if scope.get("method") != "POST":
            await _send(send, 405, NOT_ALLOWED, [(b"allow", b"POST"), *_JSON])
            return
        headers = scope.get("headers", [])
        if declared_too_large(_content_length(headers), self.max_body):
            await _send(send, 413, TOO_LARGE, _JSON)  # refused before reading a byte
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await _send(send, 413, TOO_LARGE, _JSON)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        response = await self.receiver.handle_async(b"".join(chunks), headers)
        await _send(send, response[0], response[1], _raw_headers(response))

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.receiver.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.receiver.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


def _content_length(headers: Any) -> object:
    """The ``Content-Length`` of an ASGI request: its servers pass lower-case byte names, as
    ASGI requires, and refuse a request with two lengths; anything else is read by ``get_header``."""
    try:
        for name, value in headers:
            if name == b"content-length":
                return value
    except (TypeError, ValueError):
        pass
    return get_header(headers, "content-length")


def _raw_headers(response: WebhookResponse) -> list[tuple[bytes, bytes]]:
    if response.headers is _DEFAULT_HEADERS:  # every answer of the receiver: encoded once
        return _JSON
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers]


_SENT_HEADERS: dict[bytes, list[tuple[bytes, bytes]]] = {}
"""The headers sent with each of the receiver's few bodies (its answers' ``_JSON`` headers
and their ``Content-Length``), made once per body: shared, never changed once made."""


async def _send(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    if headers is _JSON:
        sent = _SENT_HEADERS.get(body)
        if sent is None:
            sent = [*headers, (b"content-length", str(len(body)).encode())]
            if len(_SENT_HEADERS) < 64:  # the receiver's fixed answers; a refusal's error text varies
                _SENT_HEADERS[body] = sent
    else:
        sent = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": sent})
    await send({"type": "http.response.body", "body": body})


async def starlette_response(receiver: WebhookReceiver, request: Request, *, max_body: int = MAX_BODY) -> Response:
    """Answer a Starlette or FastAPI request from its raw body stream, never ``request.json()``;
    a body over ``max_body`` is answered 413 without being read further."""
    from starlette.responses import Response

    max_body = check_max_body(max_body)
    if request.method != "POST":
        return Response(NOT_ALLOWED, status_code=405, media_type=JSON, headers={"Allow": "POST"})
    if declared_too_large(request.headers.get("content-length"), max_body):
        return Response(TOO_LARGE, status_code=413, media_type=JSON)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():  # the raw bytes, stopping at the limit
        size += len(chunk)
        if size > max_body:
            return Response(TOO_LARGE, status_code=413, media_type=JSON)
        chunks.append(chunk)
    result = await receiver.handle_async(b"".join(chunks), request.headers)
    return Response(result.body, status_code=result.status_code, headers=dict(result.headers))


def starlette_endpoint(
    receiver: WebhookReceiver, *, max_body: int = MAX_BODY
) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint for ``Route(path, endpoint, methods=["POST"])`` or FastAPI's ``add_api_route``."""
    from starlette.requests import Request

    max_body = check_max_body(max_body)

    async def webhook_endpoint(request: Request) -> Response:
        return await starlette_response(receiver, request, max_body=max_body)

    # FastAPI reads the annotation to inject the request; make it a real class, not a string.
    webhook_endpoint.__annotations__ = {"request": Request, "return": None}
    return webhook_endpoint
