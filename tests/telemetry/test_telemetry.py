"""Spans and metrics with OpenTelemetry's SDK: a poller, a receiver on a PostgreSQL inbox and a
CallBudget against the sandbox, read back from the in-memory exporters."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import pytest

from sports_posts import BudgetExhaustedError, CallBudget, SportsPosts
from sports_posts.polling import Lease, Poller
from sports_posts.polling import PostgresCheckpoint as PgCheckpoint
from sports_posts.sandbox import ChaosSettings, Sandbox
from sports_posts.webhooks import (
    PostgresDedupeStore,
    PostgresInbox,
    WebhookReceiver,
    build_test_request,
    sample_payload,
)
from tests.telemetry.conftest import Telemetry

SECRET = "whsec_test_telemetry_0123456789"


def spans_named(t: Telemetry, prefix: str) -> list[Any]:
    return [s for s in t.spans.get_finished_spans() if s.name.startswith(prefix)]


def test_a_fleet_against_the_sandbox_reads_back_as_spans_and_metrics(
    telemetry: Telemetry, pg: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    unique = uuid.uuid4().hex[:8]
    with Sandbox(seed=5, clock="manual", posts=60) as sb:
        # A retry: the first attempt meets a 503, the wait before the next clears the fault.
        waits: list[float] = []

        def sleep(seconds: float) -> None:
            waits.append(seconds)
            sb.set_chaos(None)

        # A monthly cap (the store's calendar month), so no minute boundary can refill it mid-test;
        # each attempt draws: the retried call takes two of the four.
        budget = CallBudget(pg, per_month=4, key=f"test:budget:{unique}")
        with SportsPosts(api_key=sb.api_key, base_url=sb.base_url, budget=budget, sleep=sleep) as client:
            sb.set_chaos(ChaosSettings(rate_503=1.0, retry_after=1))
            client.account.x_ids()
            assert waits, "the 503 was retried"
            client.posts.list(leagues="NBA", limit=5)
            client.posts.list(lat=40.7, lng=-74.0, limit=5)
            with pytest.raises(BudgetExhaustedError):
                client.posts.list(limit=5)  # the fifth draw
        budget.close()

        # Two pollers in turn on one feed under a lease: two holders.
        feed = f"test:feed:{unique}"
        with SportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
            for _ in range(2):
                sb.publish_post("NBA")  # each poller has a new post to deliver
                sb.advance(1)
                poller = Poller(client, sleep=sb.advance, since=sb.now() - timedelta(hours=6), clock=sb.now,
                                filters={"leagues": "NBA"}, checkpoint=PgCheckpoint(pg, key=feed),
                                lease=Lease(pg, key=feed))
                with poller:
                    assert next(iter(poller))

        # A receiver on a PostgreSQL inbox: accepted, a duplicate, a forgery, a dead letter.
        def handler(event: Any) -> None:
            if event.data.id == "1790000000000000002":
                raise RuntimeError("storage down")

        receiver = WebhookReceiver(SECRET, handler, store=PostgresDedupeStore(pg),
                                   inbox=PostgresInbox(pg, max_attempts=1), start_worker=False)
        first = build_test_request(sample_payload(id="1790000000000000001"), SECRET)
        assert receiver.handle(first.body, first.headers).status_code == 202
        assert receiver.handle(first.body, first.headers).outcome == "duplicate"
        forged = build_test_request(sample_payload(id="1790000000000000003"), "whsec_test_wrong")
        assert receiver.handle(forged.body, forged.headers).status_code == 401
        failing = build_test_request(sample_payload(id="1790000000000000002"), SECRET)
        assert receiver.handle(failing.body, failing.headers).status_code == 202
        assert receiver.run_inbox_once() == 2
        receiver.close()

    # -- spans of API calls ------------------------------------------------------------------
    x_ids = spans_named(telemetry, "GET /v1/account/x-ids")
    assert len(x_ids) == 1
    a = x_ids[0].attributes
    assert a["http.request.method"] == "GET" and a["url.template"] == "/v1/account/x-ids"
    assert a["server.address"] == "127.0.0.1" and a["http.response.status_code"] == 200
    assert a["sports_posts.attempts"] == 2 and a["http.request.resend_count"] == 1
    assert [e.name for e in x_ids[0].events] == ["sports_posts.retry_wait"]
    posts = spans_named(telemetry, "GET /v1/posts")
    modes = [s.attributes.get("sports_posts.mode") for s in posts]
    assert modes[:3] == ["league", "nearby", "trending"]
    refused = posts[2]
    assert refused.attributes["error.type"] == "BudgetExhaustedError"
    assert refused.attributes["sports_posts.budget.bound"] == "per_month"
    assert refused.status.status_code.name == "ERROR"

    # -- spans of webhook deliveries ---------------------------------------------------------
    deliveries = spans_named(telemetry, "process ")
    outcomes = [(s.attributes["sports_posts.webhook.outcome"], s.attributes.get("sports_posts.webhook.reason"))
                for s in deliveries]
    assert outcomes == [("accepted", None), ("duplicate", None), ("refused", "invalid_signature"),
                        ("accepted", None)]
    d = deliveries[0].attributes
    assert d["messaging.operation.type"] == "process" and d["messaging.destination.name"] == "breaking_news"
    queue = PostgresInbox(pg).queue  # one name per queue, whichever process reports it
    assert queue.startswith("postgres 127.0.0.1:") and queue.endswith(" sports_posts_inbox")
    assert d["sports_posts.webhook.inbox"] == queue and d["messaging.message.id"]

    # -- metrics -------------------------------------------------------------------------------
    t = telemetry
    assert t.total("sports_posts.retries", **{"url.template": "/v1/account/x-ids"}) == 1
    assert t.total("sports_posts.calls", **{"url.template": "/v1/account/x-ids"}) == 2
    assert t.total("sports_posts.calls", **{"url.template": "/v1/account/x-ids",
                                             "http.response.status_code": 503}) == 1
    assert t.total("sports_posts.budget.refusals", **{"sports_posts.budget.key": f"test:budget:{unique}"}) == 1
    left = {a["sports_posts.budget.window"]: v for a, v in t.metrics()["sports_posts.budget.left"]
            if a["sports_posts.budget.key"] == f"test:budget:{unique}"}
    assert left == {"month": 0}
    assert t.total("sports_posts.lease.changes", **{"sports_posts.lease.key": f"test:feed:{unique}",
                                                    "sports_posts.lease.change": "acquired"}) == 2
    assert t.total("sports_posts.poll.posts_delivered", **{"sports_posts.poll.feed": "leagues=NBA"}) >= 1
    lag = [v for a, v in t.metrics()["sports_posts.poll.lag"] if a["sports_posts.poll.feed"] == "leagues=NBA"]
    assert lag and lag[0] >= 0
    assert t.total("sports_posts.webhook.deliveries", **{"sports_posts.webhook.outcome": "duplicate"}) >= 1
    assert t.total("sports_posts.webhook.deliveries", **{"sports_posts.webhook.reason": "invalid_signature"}) >= 1
    assert t.total("sports_posts.inbox.dead", **{"sports_posts.inbox": queue}) == 1
    assert t.total("sports_posts.inbox.depth", **{"sports_posts.inbox": queue}) == 0
    assert t.total("sports_posts.inbox.in_progress", **{"sports_posts.inbox": queue}) == 0
    assert t.total("sports_posts.inbox.latency", **{"sports_posts.inbox": queue}) == 0  # nothing waits

    # -- no secret anywhere ----------------------------------------------------------------------
    exported = json.dumps([json.loads(s.to_json()) for s in t.spans.get_finished_spans()])
    exported += json.dumps(t.metrics(), default=str)
    assert sb.api_key not in exported and SECRET not in exported


def test_without_a_configured_provider_a_call_is_not_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    from sports_posts import _telemetry

    flow = iter(())
    monkeypatch.setattr(_telemetry, "_configured", lambda api: (False, False))
    assert _telemetry.traced_flow(flow, None, None) is flow  # type: ignore[arg-type]


def test_without_the_package_nothing_is_imported_and_calls_work(tmp_path: Any) -> None:
    import subprocess
    import sys

    script = """
import sys
sys.modules["opentelemetry"] = None  # as if not installed: importing it raises ImportError
from sports_posts import SportsPosts, _telemetry
from sports_posts.sandbox import Sandbox
with Sandbox(seed=1) as sb, SportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
    client.account.x_ids()
    client.posts.list(limit=1)
assert _telemetry._api is False, _telemetry._api
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr


@pytest.mark.anyio
async def test_the_async_client_and_receiver_report_the_same_spans(telemetry: Telemetry) -> None:
    from sports_posts import AsyncSportsPosts, NotFoundError

    with Sandbox(seed=2) as sb:
        async with AsyncSportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
            with pytest.raises(NotFoundError):  # the sandbox knows no team "1"
                await client.posts.list(match=("1", "2"), start_time="2026-01-01T00:00:00Z", limit=1)

    receiver = WebhookReceiver(SECRET, lambda event: None)
    request = build_test_request(sample_payload(id="1790000000000000009"), SECRET)
    assert (await receiver.handle_async(request.body, request.headers)).status_code == 202
    assert (await receiver.handle_async(request.body, request.headers)).outcome == "duplicate"
    await receiver.aclose()

    (call,) = spans_named(telemetry, "GET /v1/posts")
    assert call.attributes["sports_posts.mode"] == "game" and call.attributes["http.response.status_code"] == 404
    assert call.attributes["error.type"] == "NotFoundError" and call.attributes["sports_posts.error_code"] == "NOT_FOUND"
    assert call.status.status_code.name == "ERROR"
    outcomes = [s.attributes["sports_posts.webhook.outcome"] for s in spans_named(telemetry, "process ")]
    assert outcomes == ["accepted", "duplicate"]
    assert all("sports_posts.webhook.inbox" not in s.attributes for s in spans_named(telemetry, "process "))
