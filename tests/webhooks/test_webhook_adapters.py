"""Adapters read the raw body and move bytes; each is tested with its framework's own test client."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import Request, Response  # module level: FastAPI resolves string annotations here

from sports_posts.webhooks import WebhookEvent, WebhookReceiver, build_test_request, sample_payload
from sports_posts.webhooks.adapters.asgi import (
    WebhookASGIApp,
    starlette_endpoint,
    starlette_response,
)
from sports_posts.webhooks.adapters.django import django_view
from sports_posts.webhooks.adapters.wsgi import WebhookWSGIApp, flask_view
from tests.webhooks import webhook_helpers
from tests.webhooks.webhook_helpers import SECRET, Recorder, configure_django

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
WAIT = 10.0
# Odd spacing, key order and escapes: any parse-and-re-serialise step would break the signature.
ODD_BODY = (
    '{ "sent_at":"' + sample_payload()["sent_at"] + '" ,\n  "event" : "breaking_news", "data": '
    + json.dumps(sample_payload()["data"], indent=3, ensure_ascii=True).replace('"text"', '"te\\u0078t"')
    + "}"
).encode()


@pytest.fixture
def receiver(recorder: Recorder) -> Iterator[WebhookReceiver]:
    with WebhookReceiver(SECRET, recorder) as receiver:
        yield receiver


def _requests() -> dict[str, tuple[bytes, dict[str, str]]]:
    good = build_test_request(ODD_BODY, SECRET, delivery_id="dlv_odd")
    forged = dict(good.headers, **{"X-Service-Signature": "sha256=" + "0" * 64})
    unparsable = build_test_request(b'{"event": "breaking_news"}', SECRET)
    return {
        "good": (good.body, good.headers),
        "forged": (good.body, forged),
        "unsigned": (good.body, {"Content-Type": "application/json"}),
        "unparsable": (unparsable.body, unparsable.headers),
        "retry": (good.body, dict(good.headers, **{"X-Service-Delivery": "dlv_retry"})),
    }


EXPECTED = [("good", 202), ("forged", 401), ("unsigned", 401), ("unparsable", 400), ("retry", 200)]


def _check(post: Any, receiver: WebhookReceiver, recorder: Recorder) -> None:
    requests = _requests()
    for name, status in EXPECTED:
        body, headers = requests[name]
        response = post(body, headers)
        assert response.status_code == status, name
        assert response.headers["content-type"].startswith("application/json")
        assert receiver.wait_idle(WAIT)
    assert [e.delivery_id for e in recorder.events] == ["dlv_odd"]
    assert recorder.events[0].data.text == sample_payload()["data"]["text"]


def test_starlette_endpoint_verifies_the_raw_body(receiver: WebhookReceiver, recorder: Recorder) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Route
    from starlette.testclient import TestClient

    app = Starlette(routes=[Route("/webhooks", starlette_endpoint(receiver), methods=["POST"])])
    with TestClient(app) as client:
        _check(lambda body, headers: client.post("/webhooks", content=body, headers=headers), receiver, recorder)
        assert client.get("/webhooks").status_code == 405


def test_fastapi_route_verifies_the_raw_body(receiver: WebhookReceiver, recorder: Recorder) -> None:
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    app = FastAPI()
    app.add_api_route("/webhooks", starlette_endpoint(receiver), methods=["POST"])

    @app.post("/custom")
    async def custom(request: Request) -> Response:
        return await starlette_response(receiver, request)

    with TestClient(app) as client:
        _check(lambda body, headers: client.post("/webhooks", content=body, headers=headers), receiver, recorder)
        body, headers = _requests()["forged"]
        assert client.post("/custom", content=body, headers=headers).status_code == 401


def test_fastapi_with_an_async_handler_runs_it_as_a_task() -> None:
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    done = threading.Event()
    seen: list[str] = []

    async def handler(event: WebhookEvent) -> None:
        await asyncio.sleep(0)
        seen.append(event.data.id)
        done.set()

    receiver = WebhookReceiver(SECRET, handler)
    app = FastAPI()
    app.add_api_route("/webhooks", starlette_endpoint(receiver), methods=["POST"])
    body, headers = _requests()["good"]
    with TestClient(app) as client:
        assert client.post("/webhooks", content=body, headers=headers).status_code == 202
        assert done.wait(WAIT)
    receiver.close()
    assert seen == [json.loads(body)["data"]["id"]]


@pytest.mark.anyio
async def test_plain_asgi_app_verifies_the_raw_body(receiver: WebhookReceiver, recorder: Recorder) -> None:
    app = WebhookASGIApp(receiver)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://receiver") as client:
        requests = _requests()
        for name, status in EXPECTED:
            body, headers = requests[name]
            response = await client.post("/", content=body, headers=headers)
            assert response.status_code == status, name
            assert await receiver.wait_idle_async(WAIT)
        assert (await client.get("/")).status_code == 405
    assert [e.delivery_id for e in recorder.events] == ["dlv_odd"]


@pytest.mark.anyio
async def test_plain_asgi_app_starts_and_closes_the_receiver_on_lifespan(recorder: Recorder) -> None:
    receiver = WebhookReceiver(SECRET, recorder)
    started: list[str] = []
    receiver.start = lambda: started.append("start")  # type: ignore[method-assign]

    async def aclose(timeout: float | None = None) -> None:
        started.append("close")

    receiver.aclose = aclose  # type: ignore[method-assign]
    messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: Any) -> None:
        sent.append(message)

    await WebhookASGIApp(receiver)({"type": "lifespan"}, receive, send)
    assert started == ["start", "close"]
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


def test_flask_view_verifies_request_get_data(receiver: WebhookReceiver, recorder: Recorder) -> None:
    from flask import Flask

    app = Flask(__name__)
    app.add_url_rule("/webhooks", view_func=flask_view(receiver), methods=["POST"])
    client = app.test_client()
    _check(lambda body, headers: client.post("/webhooks", data=body, headers=headers), receiver, recorder)
    assert client.get("/webhooks").status_code == 405


def test_plain_wsgi_app_verifies_the_raw_body(receiver: WebhookReceiver, recorder: Recorder) -> None:
    app = WebhookWSGIApp(receiver)
    with httpx.Client(transport=httpx.WSGITransport(app=app), base_url="http://receiver") as client:
        _check(lambda body, headers: client.post("/", content=body, headers=headers), receiver, recorder)
        assert client.get("/").status_code == 405


def test_plain_wsgi_app_refuses_a_body_over_the_limit(receiver: WebhookReceiver) -> None:
    app = WebhookWSGIApp(receiver, max_body=100)
    with httpx.Client(transport=httpx.WSGITransport(app=app), base_url="http://receiver") as client:
        assert client.post("/", content=b"x" * 101).status_code == 413


def test_asgi_adapters_refuse_a_body_over_the_limit_without_reading_it_all(receiver: WebhookReceiver) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Route
    from starlette.testclient import TestClient

    plain = WebhookASGIApp(receiver, max_body=100)
    routed = Starlette(routes=[Route("/webhooks", starlette_endpoint(receiver, max_body=100), methods=["POST"])])
    with TestClient(plain) as a, TestClient(routed) as b:
        assert a.post("/", content=b"x" * 101).status_code == 413
        assert b.post("/webhooks", content=b"x" * 101).status_code == 413
        assert a.post("/", content=b"x" * 100).status_code == 401, "at the limit it is read and verified"


def _django_client(receiver: WebhookReceiver) -> Any:
    configure_django()
    from django.test import Client
    from django.urls import clear_url_caches, path

    webhook_helpers.urlpatterns = [path("webhooks/", django_view(receiver))]
    clear_url_caches()
    return Client(enforce_csrf_checks=True)  # the view must be csrf_exempt to pass


def test_django_view_is_csrf_exempt_and_verifies_request_body(receiver: WebhookReceiver, recorder: Recorder) -> None:
    client = _django_client(receiver)

    def post(body: bytes, headers: dict[str, str]) -> Any:
        return client.post("/webhooks/", data=body, content_type="application/json", headers=headers)

    _check(post, receiver, recorder)
    assert client.get("/webhooks/").status_code == 405


# -- the body limit and the method, the same in every adapter ---------------------------

FIVE_MIB = 5 * 1024 * 1024


class EndlessBody(io.RawIOBase):
    """A request body of ``size`` bytes that counts what the adapter actually read."""

    def __init__(self, size: int = FIVE_MIB) -> None:
        self.left = size
        self.read_total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = b"x" * n
        self.left -= n
        self.read_total += n
        return n


def _environ(method: str = "POST", content_length: str | None = None, chunked: bool = False,
             body: EndlessBody | None = None) -> dict[str, Any]:
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method, "PATH_INFO": "/webhooks", "SERVER_NAME": "testserver", "SERVER_PORT": "80",
        "wsgi.input": io.BufferedReader(body if body is not None else EndlessBody()), "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(), "wsgi.multithread": False, "wsgi.multiprocess": False,
        "wsgi.run_once": False, "wsgi.version": (1, 0),
    }
    if content_length is not None:
        environ["CONTENT_LENGTH"] = content_length
    if chunked:
        environ["wsgi.input_terminated"] = True
    return environ


def _call_wsgi(app: Any, environ: dict[str, Any]) -> tuple[int, dict[str, str]]:
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        seen["status"], seen["headers"] = int(status.split()[0]), dict(headers)

    b"".join(app(environ, start_response))
    return seen["status"], seen["headers"]


def _flask_app(receiver: WebhookReceiver) -> Any:
    from flask import Flask

    app = Flask(__name__)
    # Every method routed to the view: the view itself must refuse what is not a POST.
    app.add_url_rule("/webhooks", view_func=flask_view(receiver), methods=["GET", "POST", "PUT"])
    return app


WSGI_APPS = {
    "wsgi": lambda receiver: WebhookWSGIApp(receiver),
    "flask": lambda receiver: _flask_app(receiver).wsgi_app,
}


@pytest.mark.parametrize("kind", sorted(WSGI_APPS))
@pytest.mark.parametrize(
    ("content_length", "chunked", "most_read"),
    [
        (str(FIVE_MIB), False, 0),  # declared too large: refused before any read
        (None, True, (1 << 20) + 64 * 1024),  # chunked, no length: reading stops at the limit
        (str(FIVE_MIB - 1), True, 0),
    ],
)
def test_wsgi_and_flask_refuse_5_mib_with_413_without_reading_it_whole(
    receiver: WebhookReceiver, kind: str, content_length: str | None, chunked: bool, most_read: int
) -> None:
    body = EndlessBody()
    status, _ = _call_wsgi(WSGI_APPS[kind](receiver), _environ(content_length=content_length, chunked=chunked, body=body))
    assert status == 413
    assert body.read_total <= most_read + 8192  # the BufferedReader may read one buffer ahead


@pytest.mark.parametrize("kind", sorted(WSGI_APPS))
def test_wsgi_and_flask_read_no_more_than_a_lying_content_length(receiver: WebhookReceiver, kind: str) -> None:
    body = EndlessBody()
    status, _ = _call_wsgi(WSGI_APPS[kind](receiver), _environ(content_length="100", body=body))
    assert status == 401  # the 100 declared bytes were read and are not signed
    assert body.read_total <= 8192


@pytest.mark.parametrize("kind", sorted(WSGI_APPS))
@pytest.mark.parametrize("method", ["GET", "PUT"])
def test_wsgi_and_flask_answer_405_with_allow_post(receiver: WebhookReceiver, kind: str, method: str) -> None:
    status, headers = _call_wsgi(WSGI_APPS[kind](receiver), _environ(method=method, content_length="0"))
    assert (status, headers.get("Allow")) == (405, "POST")


def test_django_refuses_5_mib_with_413_and_other_methods_with_405(receiver: WebhookReceiver) -> None:
    from django.core.handlers.wsgi import WSGIHandler

    _django_client(receiver)
    handler = WSGIHandler()
    body = EndlessBody()
    environ = _environ(content_length=str(FIVE_MIB), body=body)
    environ["PATH_INFO"] = "/webhooks/"
    assert _call_wsgi(handler, environ)[0] == 413
    assert body.read_total <= 8192
    lying = EndlessBody()
    environ = _environ(content_length="100", body=lying)
    environ["PATH_INFO"] = "/webhooks/"
    assert _call_wsgi(handler, environ)[0] == 401
    assert lying.read_total <= 8192
    for method in ("GET", "PUT"):
        environ = _environ(method=method, content_length="0")
        environ["PATH_INFO"] = "/webhooks/"
        status, headers = _call_wsgi(handler, environ)
        assert (status, headers.get("Allow")) == (405, "POST")


@pytest.mark.anyio
async def test_plain_asgi_app_refuses_a_declared_5_mib_body_before_receiving_any() -> None:
    app = WebhookASGIApp(WebhookReceiver(SECRET, lambda e: None))
    received: list[Any] = []
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        received.append(1)
        return {"type": "http.request", "body": b"x" * 65536, "more_body": True}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "headers": [(b"content-length", str(FIVE_MIB).encode())]}
    await app(scope, receive, send)
    assert (sent[0]["status"], received) == (413, [])
    # Without a Content-Length the stream is read up to the limit, then refused.
    sent.clear()
    await app({"type": "http", "method": "POST", "headers": []}, receive, send)
    assert sent[0]["status"] == 413 and len(received) == (1 << 20) // 65536 + 1
    sent.clear()
    await app({"type": "http", "method": "PUT", "headers": []}, receive, send)
    assert sent[0]["status"] == 405 and (b"allow", b"POST") in sent[0]["headers"]


async def _asgi_post(app: WebhookASGIApp, body: bytes, headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes]:
    """One POST straight through the ASGI interface, with the header pairs exactly as given."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "http", "method": "POST", "path": "/", "headers": headers}, receive, send)  # type: ignore[arg-type]
    return sent[0]["status"], sent[1]["body"]


@pytest.mark.anyio
async def test_plain_asgi_app_reads_length_signature_and_delivery_from_any_pairs() -> None:
    # One pass over the headers serves the 413 check and the receiver: it must still read
    # names a non-conforming server left in capitals, and treat a repeated header that
    # disagrees with itself as missing.
    events: list[WebhookEvent] = []

    async def handler(event: WebhookEvent) -> None:
        events.append(event)

    app = WebhookASGIApp(WebhookReceiver(SECRET, handler), max_body=10_000)
    request = build_test_request(sample_payload(id="caps"), SECRET, delivery_id="dlv_caps")
    capitals = [(k.encode(), v.encode()) for k, v in request.headers.items()]
    assert any(k != k.lower() for k, _ in capitals)
    assert await _asgi_post(app, request.body, capitals) == (202, b'{"ok":true,"status":"accepted"}')
    assert [(e.data.id, e.delivery_id) for e in events] == [("caps", "dlv_caps")]

    second = build_test_request(sample_payload(id="twice"), SECRET)
    lower = [(k.lower().encode(), v.encode()) for k, v in second.headers.items()]
    forged = (b"x-service-signature", ("sha256=" + "0" * 64).encode())
    status, body = await _asgi_post(app, second.body, [*lower, forged])
    assert status == 401 and b"invalid_signature" in body
    status, _ = await _asgi_post(app, second.body, [*lower, (b"Content-Length", b"20000")])
    assert status == 413  # a declared length over the limit, in capitals: refused unread
    assert [e.data.id for e in events] == ["caps"]
