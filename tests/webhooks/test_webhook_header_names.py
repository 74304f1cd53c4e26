"""Renamed webhook headers (``WebhookHeaders``): validated once, read case-insensitively by
``construct_event``, the receiver and every adapter, and spec 6.2's names by default."""

from __future__ import annotations

import contextlib
import json
import logging
import string
from collections.abc import Iterator
from typing import Any, Callable
from wsgiref.simple_server import WSGIRequestHandler, make_server

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sports_posts import ParameterError, SignatureVerificationError
from sports_posts.sandbox import Sandbox
from sports_posts.testing import serve_asgi
from sports_posts.webhooks import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    SignedRequest,
    WebhookEvent,
    WebhookHeaders,
    WebhookReceiver,
    build_test_request,
    construct_event,
    sample_payload,
    sign_payload,
    verify_signature,
)
from sports_posts.webhooks.adapters.asgi import WebhookASGIApp, starlette_endpoint
from sports_posts.webhooks.adapters.django import django_view
from sports_posts.webhooks.adapters.wsgi import WebhookWSGIApp, flask_view
from tests.serving import serving
from tests.webhooks.webhook_helpers import SECRET, SENT_AT, Recorder, configure_django

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

ACME = WebhookHeaders.with_prefix("X-Acme-")
WAIT = 10.0


def acme_request(delivery_id: str = "dlv_acme", names: WebhookHeaders = ACME) -> SignedRequest:
    return build_test_request(sample_payload(sent_at=SENT_AT), SECRET, delivery_id=delivery_id, header_names=names)


# -- the value itself ---------------------------------------------------------------------------


def test_the_default_names_are_the_spec_names_byte_for_byte() -> None:
    names = WebhookHeaders()
    assert (names.event, names.delivery, names.signature) == (
        "X-Service-Event", "X-Service-Delivery", "X-Service-Signature"
    )
    assert (names.event, names.delivery, names.signature) == (EVENT_HEADER, DELIVERY_HEADER, SIGNATURE_HEADER)
    request = build_test_request(sample_payload(), SECRET, delivery_id="d1")
    assert list(request.headers) == ["Content-Type", "X-Service-Signature", "X-Service-Delivery", "X-Service-Event"]


def test_a_prefix_names_all_three_and_a_missing_dash_is_added() -> None:
    assert WebhookHeaders(event="X-Acme-Event", delivery="X-Acme-Delivery", signature="X-Acme-Signature") == ACME
    assert WebhookHeaders.with_prefix("X-Acme") == ACME
    assert ACME.as_dict() == {"event": "X-Acme-Event", "delivery": "X-Acme-Delivery", "signature": "X-Acme-Signature"}
    assert {ACME: 1}[WebhookHeaders.with_prefix("X-Acme-")] == 1  # frozen and hashable
    assert "X-Acme-Signature" in repr(ACME) and "_lookup" not in repr(ACME)
    with pytest.raises(AttributeError):
        ACME.signature = "X-Other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "field", "says"),
    [
        ({"signature": ""}, "signature", "must not be empty"),
        ({"event": "X Acme"}, "event", "HTTP token"),
        ({"delivery": "X-Acme:"}, "delivery", "HTTP token"),
        ({"signature": "X-Ac\u00e9me"}, "signature", "HTTP token"),
        ({"signature": "X_Acme_Signature"}, "signature", "'_'"),
        ({"event": 5}, "event", "must be a str"),
        ({"delivery": "X-" + "a" * 300}, "delivery", "at most 256"),
        ({"signature": "Content-Type"}, "signature", "standard HTTP header"),
        ({"signature": "x-service-event"}, "signature", "same as the event header"),
        ({"delivery": "X-SERVICE-SIGNATURE"}, "signature", "same as the delivery header"),
    ],
)
def test_an_unusable_name_is_a_parameter_error_naming_the_field(kwargs: dict[str, Any], field: str, says: str) -> None:
    with pytest.raises(ParameterError) as caught:
        WebhookHeaders(**kwargs)
    assert caught.value.parameter == field and says in str(caught.value)
    assert str(caught.value).startswith(field)


@pytest.mark.parametrize("prefix", ["", "X Acme-", "X_Acme-", 7])
def test_an_unusable_prefix_is_a_parameter_error_naming_the_prefix(prefix: Any) -> None:
    with pytest.raises(ParameterError) as caught:
        WebhookHeaders.with_prefix(prefix)
    assert caught.value.parameter == "prefix"


@pytest.mark.parametrize("call", [
    lambda: WebhookReceiver(SECRET, print, header_names="X-Acme-"),  # type: ignore[arg-type]
    lambda: construct_event(b"{}", {}, SECRET, header_names={"signature": "X-Sig"}),  # type: ignore[arg-type]
    lambda: build_test_request(sample_payload(), SECRET, header_names="X-Acme-"),  # type: ignore[arg-type]
])
def test_header_names_must_be_a_webhook_headers(call: Callable[[], object]) -> None:
    with pytest.raises(ParameterError, match="WebhookHeaders") as caught:
        call()
    assert caught.value.parameter == "header_names"


def test_verify_signature_refuses_bad_header_names_even_when_the_signature_matches() -> None:
    body = b'{"a":1}'
    with pytest.raises(ParameterError):
        verify_signature(body, sign_payload(body, SECRET), SECRET, header_names="X-Acme-")  # type: ignore[arg-type]


TCHARS = frozenset(string.ascii_letters + string.digits + "!#$%&'*+-.^`|~")
RESERVED = {"content-type", "content-length", "user-agent", "host", "transfer-encoding", "connection"}
OTHERS = {"x-service-event", "x-service-delivery"}


@settings(max_examples=300, deadline=None, database=None)
@given(st.one_of(st.text(min_size=0, max_size=12), st.text(alphabet=sorted(TCHARS | {"_", " "}), max_size=300)))
def test_a_signature_name_is_accepted_exactly_when_usable_and_then_read_in_any_case(name: str) -> None:
    usable = (
        0 < len(name) <= 256 and set(name) <= TCHARS and name.lower() not in RESERVED and name.lower() not in OTHERS
    )
    try:
        names = WebhookHeaders(signature=name)
    except ParameterError as exc:
        assert not usable and exc.parameter == "signature"
        return
    assert usable
    payload = sample_payload(sent_at=SENT_AT)
    body = json.dumps(payload).encode()
    for spelled in (name, name.upper(), name.lower(), name.swapcase()):
        event = construct_event(body, {spelled: sign_payload(body, SECRET)}, SECRET, header_names=names)
        assert event.data.id == payload["data"]["id"]


# -- reading renamed headers ---------------------------------------------------------------------


def _shapes(request: SignedRequest) -> dict[str, Any]:
    """The same headers as a framework may hand them over: mapping, str pairs, ASGI bytes pairs."""
    return {
        "dict": request.headers,
        "lower dict": {k.lower(): v for k, v in request.headers.items()},
        "upper pairs": [(k.upper(), v) for k, v in request.headers.items()],
        "asgi": [(k.lower().encode(), v.encode()) for k, v in request.headers.items()],
        "mixed bytes": [(k.swapcase().encode(), v.encode()) for k, v in request.headers.items()],
    }


@pytest.mark.parametrize("shape", ["dict", "lower dict", "upper pairs", "asgi", "mixed bytes"])
def test_construct_event_reads_renamed_headers_case_insensitively(shape: str) -> None:
    request = acme_request("dlv_7")
    event = construct_event(request.body, _shapes(request)[shape], SECRET, header_names=ACME)
    assert event.delivery_id == "dlv_7"


def test_renamed_headers_replace_the_spec_names_and_errors_name_the_configured_one() -> None:
    spec = build_test_request(sample_payload(sent_at=SENT_AT), SECRET, delivery_id="d")
    with pytest.raises(SignatureVerificationError, match="^missing X-Acme-Signature header$"):
        construct_event(spec.body, spec.headers, SECRET, header_names=ACME)
    with pytest.raises(SignatureVerificationError, match="^empty X-Acme-Signature header$"):
        construct_event(spec.body, {"x-acme-signature": ""}, SECRET, header_names=ACME)
    with pytest.raises(SignatureVerificationError, match="^missing X-Service-Signature header$"):
        construct_event(spec.body, acme_request().headers, SECRET)
    with pytest.raises(SignatureVerificationError, match="^missing X-Acme-Signature header$"):
        verify_signature(spec.body, None, SECRET, header_names=ACME)


def test_build_test_request_sends_only_the_renamed_headers() -> None:
    request = acme_request("dlv_1")
    assert request.headers == {
        "Content-Type": "application/json",
        "X-Acme-Signature": sign_payload(request.body, SECRET),
        "X-Acme-Delivery": "dlv_1",
        "X-Acme-Event": "breaking_news",
    }


# -- the receiver ----------------------------------------------------------------------------------


@pytest.fixture
def receiver(recorder: Recorder) -> Iterator[WebhookReceiver]:
    with WebhookReceiver(SECRET, recorder, header_names=ACME) as receiver:
        yield receiver


def test_a_renamed_receiver_accepts_renamed_headers_and_refuses_the_spec_names(
    receiver: WebhookReceiver, recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    assert receiver.header_names is ACME and "X-Acme-" in repr(receiver)
    spec = build_test_request(sample_payload(sent_at=SENT_AT), SECRET, delivery_id="dlv_spec")
    caplog.set_level(logging.WARNING, "sports_posts.webhooks")
    refused = receiver.handle(spec.body, spec.headers)
    assert (refused.status_code, json.loads(refused.body)) == (
        401, {"ok": False, "status": "invalid_signature", "error": "missing X-Acme-Signature header"}
    )
    assert "missing X-Acme-Signature header" in caplog.text
    request = acme_request("dlv_acme")
    assert receiver.handle(request.body, [(k.lower().encode(), v.encode()) for k, v in request.headers.items()]).status == 202
    assert receiver.wait_idle(WAIT)
    assert [e.delivery_id for e in recorder.events] == ["dlv_acme"]


def test_a_default_receiver_refuses_renamed_headers_naming_the_spec_header(recorder: Recorder) -> None:
    with WebhookReceiver(SECRET, recorder) as receiver:
        response = receiver.handle(acme_request().body, acme_request().headers)
    assert response.status_code == 401
    assert json.loads(response.body)["error"] == "missing X-Service-Signature header"
    assert recorder.events == []


# -- every adapter, with the framework's own client ----------------------------------------------------


def _check_adapter(post: Callable[[bytes, dict[str, str]], Any], receiver: WebhookReceiver, recorder: Recorder) -> None:
    """Spec names: 401 naming the configured header; renamed (lower-cased on the way): 202, once."""
    spec = build_test_request(sample_payload(sent_at=SENT_AT), SECRET, delivery_id="dlv_spec")
    refused = post(spec.body, spec.headers)
    assert refused.status_code == 401
    assert json.loads(refused.content)["error"] == "missing X-Acme-Signature header"
    request = acme_request("dlv_adapter")
    assert post(request.body, {k.lower(): v for k, v in request.headers.items()}).status_code == 202
    assert receiver.wait_idle(WAIT)
    assert [e.delivery_id for e in recorder.events] == ["dlv_adapter"]


@pytest.mark.parametrize("kind", ["asgi", "starlette", "fastapi"])
def test_asgi_adapters_read_the_receivers_header_names(receiver: WebhookReceiver, recorder: Recorder, kind: str) -> None:
    from starlette.testclient import TestClient

    if kind == "asgi":
        app: Any = WebhookASGIApp(receiver)
    elif kind == "starlette":
        from starlette.applications import Starlette
        from starlette.routing import Route

        app = Starlette(routes=[Route("/", starlette_endpoint(receiver), methods=["POST"])])
    else:
        from fastapi import FastAPI

        app = FastAPI()
        app.add_api_route("/", starlette_endpoint(receiver), methods=["POST"])
    with TestClient(app) as client:
        _check_adapter(lambda body, headers: client.post("/", content=body, headers=headers), receiver, recorder)


@pytest.mark.parametrize("kind", ["wsgi", "flask"])
def test_wsgi_adapters_read_the_receivers_header_names(receiver: WebhookReceiver, recorder: Recorder, kind: str) -> None:
    if kind == "wsgi":
        app: Any = WebhookWSGIApp(receiver)
    else:
        from flask import Flask

        app = Flask(__name__)
        app.add_url_rule("/", view_func=flask_view(receiver), methods=["POST"])
    with httpx.Client(transport=httpx.WSGITransport(app=app), base_url="http://receiver") as client:
        _check_adapter(lambda body, headers: client.post("/", content=body, headers=headers), receiver, recorder)


def test_the_django_view_reads_the_receivers_header_names(receiver: WebhookReceiver, recorder: Recorder) -> None:
    configure_django()
    from django.test import RequestFactory

    view = django_view(receiver)
    factory = RequestFactory()

    def post(body: bytes, headers: dict[str, str]) -> Any:
        extra = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        return view(factory.post("/webhooks/", data=body, content_type="application/json", headers=extra))

    _check_adapter(post, receiver, recorder)


# -- end to end: the sandbox's sender over loopback to real servers ---------------------------------------


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _served(receiver: WebhookReceiver, stack: str) -> Iterator[str]:
    """``receiver`` behind a real server: wsgiref (HTTP_* environ names) or uvicorn (ASGI bytes)."""
    if stack == "asgi":
        with serve_asgi(WebhookASGIApp(receiver), lifespan="off") as root:
            yield root + "/webhooks"
        return
    with serving(make_server("127.0.0.1", 0, WebhookWSGIApp(receiver), handler_class=_Quiet)) as port:
        yield f"http://127.0.0.1:{port}/webhooks"


@pytest.fixture
def acme_sandbox() -> Iterator[Sandbox]:
    """A sandbox whose sender renames the headers, as a white-label deployment would."""
    with Sandbox(seed=7, clock="manual", posts=50, webhook_header_names=WebhookHeaders.with_prefix("X-Acme-")) as box:
        yield box


def _clock(sandbox: Sandbox) -> Callable[[], float]:
    return lambda: sandbox.now().timestamp()  # sent_at is stamped by the sandbox's manual clock


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
def test_the_renamed_sender_is_accepted_by_a_receiver_configured_the_same(acme_sandbox: Sandbox, stack: str) -> None:
    events: list[WebhookEvent] = []
    receiver = WebhookReceiver(SECRET, events.append, header_names=ACME, clock=_clock(acme_sandbox))
    with receiver, _served(receiver, stack) as url:
        acme_sandbox.subscribe(url, SECRET)
        sent = acme_sandbox.send_breaking_news("NFL")
        acme_sandbox.drain_deliveries(timeout=30)
        assert receiver.wait_idle(WAIT)
    (attempt,) = acme_sandbox.deliveries
    assert (attempt.status_code, attempt.outcome) == (202, "delivered")
    assert [(e.data.id, e.delivery_id) for e in events] == [(sent["data"]["id"], attempt.delivery_id)]


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
def test_the_renamed_sender_is_refused_by_a_default_receiver_naming_the_header(
    acme_sandbox: Sandbox, stack: str, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[WebhookEvent] = []
    caplog.set_level(logging.WARNING, "sports_posts.webhooks")
    receiver = WebhookReceiver(SECRET, events.append, clock=_clock(acme_sandbox))
    with receiver, _served(receiver, stack) as url:
        acme_sandbox.subscribe(url, SECRET)
        acme_sandbox.send_breaking_news("NBA")
        acme_sandbox.drain_deliveries(timeout=30)
    assert [a.status_code for a in acme_sandbox.deliveries] == [401] * 6  # retried, then dead
    assert acme_sandbox.delivery_jobs[0].state == "dead"
    assert events == [] and receiver.store.claim(f"breaking_news:{acme_sandbox.deliveries[0].post_id}")  # never claimed
    warnings = [r.getMessage() for r in caplog.records if r.name == "sports_posts.webhooks"]
    assert warnings and all(m == "webhook rejected (401): missing X-Service-Signature header" for m in warnings)
