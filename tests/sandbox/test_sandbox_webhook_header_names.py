"""The sender's header names: spec 6.2's on the wire by default, renamed per sandbox or per
subscription (a proxy or white-label deployment), from Python and from the admin route."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator

import httpx
import pytest

from sports_posts import ParameterError
from sports_posts.sandbox import Sandbox
from sports_posts.webhooks import WebhookHeaders

from .conftest import Receiver

SECRET = "whsec_sandbox_header_names"
SPEC_NAMES = {"X-Service-Event", "X-Service-Delivery", "X-Service-Signature"}
ACME_NAMES = {"X-Acme-Event", "X-Acme-Delivery", "X-Acme-Signature"}


@pytest.fixture
def acme() -> Iterator[Sandbox]:
    with Sandbox(seed=3, clock="manual", posts=50, webhook_header_names=WebhookHeaders.with_prefix("X-Acme-")) as sb:
        yield sb


def _signature(body: bytes) -> str:
    """Computed here with hmac, independently of both the sender and the SDK."""
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


def test_the_default_sender_sends_the_spec_names_byte_for_byte(fresh: Sandbox, receiver: Receiver) -> None:
    fresh.subscribe(receiver.url, SECRET)
    fresh.send_breaking_news("NFL")
    fresh.wait_for_deliveries(timeout=5)
    (request,) = receiver.requests
    assert set(request["headers"]) >= SPEC_NAMES  # exactly as spelled in spec 6.2, case included
    assert request["headers"]["X-Service-Signature"] == _signature(request["body"])


def test_a_renamed_sandbox_sends_only_the_renamed_headers(acme: Sandbox, receiver: Receiver) -> None:
    acme.subscribe(receiver.url, SECRET)
    acme.send_breaking_news("NBA")
    acme.wait_for_deliveries(timeout=5)
    (request,) = receiver.requests
    headers = request["headers"]
    assert set(headers) >= ACME_NAMES and not {name.lower() for name in SPEC_NAMES} & {k.lower() for k in headers}
    assert headers["X-Acme-Signature"] == _signature(request["body"])
    assert headers["X-Acme-Event"] == "breaking_news"
    assert headers["X-Acme-Delivery"] == acme.deliveries[0].delivery_id


def test_a_subscription_may_rename_them_itself(acme: Sandbox, receiver: Receiver) -> None:
    own = WebhookHeaders(event="X-Ev", delivery="X-Dlv", signature="X-Sig")
    acme.subscribe(receiver.url + "?own", SECRET, header_names=own)
    spec = acme.subscribe(receiver.url + "?spec", SECRET, header_names=WebhookHeaders())
    acme.send_breaking_news("NFL")
    acme.wait_for_deliveries(timeout=5)
    by_path = {r["path"]: r["headers"] for r in receiver.requests}
    assert {"X-Ev", "X-Dlv", "X-Sig"} <= set(by_path["/hook?own"])
    assert set(by_path["/hook?spec"]) >= SPEC_NAMES
    assert spec.to_public()["header_names"] == {
        "event": "X-Service-Event", "delivery": "X-Service-Delivery", "signature": "X-Service-Signature"
    }
    with pytest.raises(ParameterError) as caught:
        acme.subscribe(receiver.url, SECRET, header_names="X-Other-")  # type: ignore[arg-type]
    assert caught.value.parameter == "header_names"


def test_the_admin_route_takes_a_prefix_or_explicit_names(fresh: Sandbox) -> None:
    route = fresh.url + "/_sandbox/subscriptions"
    target = "http://127.0.0.1:9/hook"
    by_prefix = httpx.post(route, json={"url": target, "secret": SECRET, "header_prefix": "X-Acme"})
    assert by_prefix.status_code == 201
    assert by_prefix.json()["header_names"] == {
        "event": "X-Acme-Event", "delivery": "X-Acme-Delivery", "signature": "X-Acme-Signature"
    }
    by_names = httpx.post(route, json={"url": target, "secret": SECRET, "header_names": {"signature": "X-Sig"}})
    assert by_names.status_code == 201
    assert by_names.json()["header_names"]["signature"] == "X-Sig"
    assert by_names.json()["header_names"]["event"] == "X-Service-Event"  # the others keep the spec's


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"header_prefix": "X Acme"}, "header prefix"),
        ({"header_prefix": ""}, "prefix"),
        ({"header_names": {"signature": "X_Sig"}}, "signature header name"),
        ({"header_names": {"event": "x-sig", "signature": "X-SIG"}}, "signature header name"),
        ({"header_names": {"signature": 5}}, "header_names.signature"),
        ({"header_names": {"sig": "X-Sig"}}, "header_names.sig"),
        ({"header_prefix": "X-A", "header_names": {"signature": "X-Sig"}}, "not both"),
    ],
)
def test_the_admin_route_refuses_unusable_names_with_400_and_subscribes_nothing(
    fresh: Sandbox, extra: dict[str, object], says: str
) -> None:
    answer = httpx.post(fresh.url + "/_sandbox/subscriptions", json={"url": "http://127.0.0.1:9/h", "secret": SECRET, **extra})
    assert answer.status_code == 400
    assert answer.json()["error_code"] == "INVALID_PARAMETER" and says in answer.json()["error_message"]
    assert fresh.sender.subscriptions == {}
