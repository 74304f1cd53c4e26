"""WSGI adapters: a plain WSGI app and a Flask view, both over the raw body bytes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Callable

from ..receiver import WebhookReceiver

if TYPE_CHECKING:
    from flask.typing import ResponseReturnValue

__all__ = ["WebhookWSGIApp", "flask_view"]

StartResponse = Callable[..., Any]


class WebhookWSGIApp:
    """A complete WSGI app for the webhook URL: reads ``wsgi.input`` itself, up to ``max_body``."""

    def __init__(self, receiver: WebhookReceiver, *, max_body: int = 1 << 20) -> None:
        self.receiver = receiver
        self.max_body = max_body

    def __repr__(self) -> str:
        return f"WebhookWSGIApp({self.receiver!r})"

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST":
            body = b'{"ok":false,"status":"method_not_allowed"}'
            start_response("405 Method Not Allowed", [("Allow", "POST"), ("Content-Type", "application/json"),
                                                      ("Content-Length", str(len(body)))])
            return [body]
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > self.max_body:
            length = self.max_body + 1  # read no more than that; answered 413 below
        stream = environ["wsgi.input"]
        if length:
            raw = stream.read(length)
        elif environ.get("wsgi.input_terminated"):  # chunked: the server marks the end
            raw = stream.read(self.max_body + 1)
        else:
            raw = b""  # without a length, reading could block for ever
        if len(raw) > self.max_body:
            body = b'{"ok":false,"status":"too_large"}'
            start_response("413 Content Too Large", [("Content-Type", "application/json"),
                                                     ("Content-Length", str(len(body)))])
            return [body]
        headers = [
            (key[5:].replace("_", "-"), value)
            for key, value in environ.items()
            if key.startswith("HTTP_") and isinstance(value, str)
        ]
        response = self.receiver.handle(raw, headers)
        status = f"{response.status_code} {_REASONS.get(response.status_code, 'Unknown')}"
        start_response(status, [*response.headers, ("Content-Length", str(len(response.body)))])
        return [response.body]


_REASONS = {
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    401: "Unauthorized",
    409: "Conflict",
    503: "Service Unavailable",
}


def flask_view(receiver: WebhookReceiver) -> Callable[[], ResponseReturnValue]:
    """A Flask view: ``app.add_url_rule("/webhooks", view_func=flask_view(r), methods=["POST"])``.

    Reads ``request.get_data()`` (the raw bytes), never ``request.get_json()``.
    """
    from flask import request

    def sports_posts_webhook() -> ResponseReturnValue:
        response = receiver.handle(request.get_data(cache=False), request.headers)
        return response.body, response.status_code, list(response.headers)

    return sports_posts_webhook
