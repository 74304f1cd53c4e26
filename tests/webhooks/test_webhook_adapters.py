"""Adapters read the raw body and move bytes; each is tested with its framework's own test client."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import Request, Response  # module level: FastAPI resolves string annotations here
from webhook_helpers import SECRET

from sports_posts.webhooks import WebhookEvent, WebhookReceiver, build_test_request, sample_payload
from sports_posts.webhooks.adapters.asgi import (
    WebhookASGIApp,
    starlette_endpoint,
    starlette_response,
)
from sports_posts.webhooks.adapters.django import django_view
from sports_posts.webhooks.adapters.wsgi import WebhookWSGIApp, flask_view

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
WAIT = 10.0
# Odd spacing, key order and escapes: any parse-and-re-serialise step would break the signature.
ODD_BODY = (
    '{ "sent_at":"' + sample_payload()["sent_at"] + '" ,\n  "event" : "breaking_news", "data": '
    + json.dumps(sample_payload()["data"], indent=3, ensure_ascii=True).replace('"text"', '"te\\u0078t"')
    + "}"
).encode()


class Recorder:
    def __init__(self) -> None:
        self.events: list[WebhookEvent] = []
        self.lock = threading.Lock()

    def __call__(self, event: WebhookEvent) -> None:
        with self.lock:
            self.events.append(event)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


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
    assert seen == [sample_payload()["data"]["id"]]


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
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            DEBUG=False,
            SECRET_KEY="django-test-only",
            ALLOWED_HOSTS=["testserver"],
            ROOT_URLCONF=__name__,
            MIDDLEWARE=["django.middleware.csrf.CsrfViewMiddleware"],
            INSTALLED_APPS=[],
        )
        django.setup()
    global urlpatterns
    from django.urls import clear_url_caches, path

    urlpatterns = [path("webhooks/", django_view(receiver))]
    clear_url_caches()
    from django.test import Client

    return Client(enforce_csrf_checks=True)  # the view must be csrf_exempt to pass


urlpatterns: list[Any] = []


def test_django_view_is_csrf_exempt_and_verifies_request_body(receiver: WebhookReceiver, recorder: Recorder) -> None:
    client = _django_client(receiver)

    def post(body: bytes, headers: dict[str, str]) -> Any:
        return client.post("/webhooks/", data=body, content_type="application/json", headers=headers)

    _check(post, receiver, recorder)
    assert client.get("/webhooks/").status_code == 405
