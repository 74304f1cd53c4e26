"""WSGI adapters: a plain WSGI app and a Flask view, both over the raw body bytes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Callable

from ..receiver import WebhookReceiver
from ._body import (
    JSON,
    MAX_BODY,
    NOT_ALLOWED,
    TOO_LARGE,
    check_max_body,
    declared_length,
    declared_too_large,
    read_limited,
)

if TYPE_CHECKING:
    from flask.typing import ResponseReturnValue

__all__ = ["WebhookWSGIApp", "flask_view"]

StartResponse = Callable[..., Any]


class WebhookWSGIApp:
    """A complete WSGI app for the webhook URL: reads ``wsgi.input`` itself, up to ``max_body``."""

    def __init__(self, receiver: WebhookReceiver, *, max_body: int = MAX_BODY) -> None:
        self.receiver = receiver
        self.max_body: int = check_max_body(max_body)

    def __repr__(self) -> str:
        return f"WebhookWSGIApp({self.receiver!r})"

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST":
            return _refuse(start_response, 405, NOT_ALLOWED, [("Allow", "POST")])
        declared = environ.get("CONTENT_LENGTH")
        if declared_too_large(declared, self.max_body):
            return _refuse(start_response, 413, TOO_LARGE)
        length = declared_length(declared)
        stream = environ["wsgi.input"]
        if length:
            raw = read_limited(_upto(stream.read, length), self.max_body)
        elif environ.get("wsgi.input_terminated"):  # chunked: the server marks the end
            raw = read_limited(stream.read, self.max_body)
        else:
            raw = b""  # without a length, reading could block for ever
        if raw is None:
            return _refuse(start_response, 413, TOO_LARGE)
        headers = [
            (key[5:].replace("_", "-"), value)
            for key, value in environ.items()
            if key.startswith("HTTP_") and isinstance(value, str)
        ]
        response = self.receiver.handle(raw, headers)
        start_response(_status_line(response.status_code),
                       [*response.headers, ("Content-Length", str(len(response.body)))])
        return [response.body]


def _upto(read: Callable[[int], bytes], length: int) -> Callable[[int], bytes]:
    """``read`` that ends after ``length`` bytes: a WSGI stream may block past its length."""
    left = [length]

    def bounded(size: int) -> bytes:
        if left[0] <= 0:
            return b""
        chunk = read(min(size, left[0]))
        left[0] -= len(chunk)
        return chunk

    return bounded


def _refuse(
    start_response: StartResponse, status: int, body: bytes, extra: list[tuple[str, str]] = []  # noqa: B006 - never mutated
) -> list[bytes]:
    start_response(_status_line(status), [*extra, ("Content-Type", JSON), ("Content-Length", str(len(body)))])
    return [body]


def _status_line(status: int) -> str:
    return f"{status} {_REASONS.get(status, 'Unknown')}"


_REASONS = {
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    401: "Unauthorized",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    503: "Service Unavailable",
}


def flask_view(receiver: WebhookReceiver, *, max_body: int = MAX_BODY) -> Callable[[], ResponseReturnValue]:
    """A Flask view: ``app.add_url_rule("/webhooks", view_func=flask_view(r), methods=["POST"])``.

    Reads ``request.stream`` (the raw bytes), never ``request.get_json()``, and stops at
    ``max_body``: 413 for a larger body, 405 (``Allow: POST``) for other methods.
    """
    from flask import request

    max_body = check_max_body(max_body)

    def sports_posts_webhook() -> ResponseReturnValue:
        if request.method != "POST":
            return NOT_ALLOWED, 405, [("Allow", "POST"), ("Content-Type", JSON)]
        if declared_too_large(request.headers.get("Content-Length"), max_body):
            return TOO_LARGE, 413, [("Content-Type", JSON)]
        # werkzeug bounds request.stream by Content-Length, and to the server's end mark
        # for a chunked body; read_limited bounds it by max_body on top.
        raw = read_limited(request.stream.read, max_body)
        if raw is None:
            return TOO_LARGE, 413, [("Content-Type", JSON)]
        response = receiver.handle(raw, request.headers)
        return response.body, response.status_code, list(response.headers)

    return sports_posts_webhook
