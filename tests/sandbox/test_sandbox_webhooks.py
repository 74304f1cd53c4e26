"""The webhook sender: signing (6.2), payloads (6.3), filters (6.4), retries and death (6.5), the log."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta

import httpx
import pytest

from sports_posts.sandbox import Sandbox

from .conftest import Receiver

SECRET = "whsec_sandbox_test_secret"


@pytest.fixture
def hooks() -> Iterator[Sandbox]:
    sb = Sandbox(seed=4, clock="manual", posts=200, time_scale=1.0, webhook_timeout=2.0)
    sb.start()
    yield sb
    sb.stop()


def expected_signature(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_breaking_news_is_signed_with_the_spec_headers(hooks: Sandbox, receiver: Receiver) -> None:
    hooks.subscribe(receiver.url, SECRET)
    payload = hooks.send_breaking_news("NFL", news_type="injury", alt_sources=2)
    hooks.wait_for_deliveries(timeout=5)
    assert len(receiver.requests) == 1
    request = receiver.requests[0]
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert headers["content-type"] == "application/json"
    assert headers["x-service-event"] == "breaking_news"
    assert uuid.UUID(headers["x-service-delivery"])
    assert hmac.compare_digest(headers["x-service-signature"], expected_signature(request["body"]))
    assert json.loads(request["body"]) == payload


def test_breaking_news_payload_fields(hooks: Sandbox, receiver: Receiver) -> None:
    hooks.subscribe(receiver.url, SECRET)
    payload = hooks.send_breaking_news("NBA", news_type="trade", news_status="rumor", alt_sources=2)
    assert payload["event"] == "breaking_news"
    sent_at = payload["sent_at"]
    assert sent_at.endswith("Z") and len(sent_at.split(".")[1]) == 4  # milliseconds + Z
    data = payload["data"]
    assert {"id", "post_url", "text", "league", "media_type", "created_at", "news_type", "news_status",
            "news_origin", "news_attribution", "players", "teams", "event_id", "alt_sources"} <= set(data)
    assert data["league"] == "NBA" and data["news_type"] == "trade" and data["news_origin"] == "breaking"
    assert all(set(t) == {"service", "name"} and isinstance(t["service"], int) for t in data["teams"] + data["players"])
    assert len(data["alt_sources"]) == 2 and all(a["role"] == "alt" for a in data["alt_sources"])
    assert hooks.world.get_post(data["id"]) is not None  # the news post is in the world too


def test_update_threads_on_event_id(hooks: Sandbox, receiver: Receiver) -> None:
    hooks.subscribe(receiver.url, SECRET)
    first = hooks.send_breaking_news("NFL", alt_sources=0)
    assert first["data"]["alt_sources"] == []
    update = hooks.send_update(first["data"]["event_id"], "Torn ACL confirmed; out for the season")
    hooks.wait_for_deliveries(timeout=5)
    assert [r["headers"]["X-Service-Event"] for r in receiver.requests] == ["breaking_news", "breaking_news.update"]
    data = update["data"]
    assert data["event_id"] == data["update_of"] == first["data"]["event_id"]
    assert data["whats_new"] == "Torn ACL confirmed; out for the season"
    assert data["id"] != first["data"]["id"]
    with pytest.raises(KeyError):
        hooks.send_update("evt_unknown", "nothing")


def test_filters_and_within_or_across_groups(hooks: Sandbox, receiver: Receiver) -> None:
    hooks.subscribe(receiver.url + "?s=1", SECRET, leagues=["nfl", "NBA"], news_types=["injury"])
    verified = hooks.subscribe(receiver.url + "?s=2", SECRET, news_statuses=["verified"], news_origins=["breaking"])
    hooks.send_breaking_news("NFL", news_type="injury", news_status="confirmed")
    hooks.send_breaking_news("NBA", news_type="trade", news_status="verified")
    hooks.send_breaking_news("MLB", news_type="injury", news_status="rumor")
    hooks.send_breaking_news("NHL", news_type="injury", news_status="verified", news_origin="relaying")
    hooks.wait_for_deliveries(timeout=5)
    got: dict[str, list[str]] = {}
    for r in receiver.requests:
        got.setdefault(r["path"][-1], []).append(json.loads(r["body"])["data"]["league"])
    assert sorted(got["1"]) == ["NFL"]
    assert sorted(got["2"]) == ["NBA", "NFL"]  # confirmed counts as verified
    assert verified.to_public()["news_statuses"] == ["verified"]


def test_updates_go_only_to_subscriptions_that_got_the_story(hooks: Sandbox, receiver: Receiver) -> None:
    hooks.subscribe(receiver.url + "?nba", SECRET, leagues=["NBA"])
    story = hooks.send_breaking_news("NFL")
    hooks.subscribe(receiver.url + "?all", SECRET)
    hooks.send_update(story["data"]["event_id"], "more")
    hooks.wait_for_deliveries(timeout=5)
    assert receiver.requests == []


def test_retries_follow_1_2_4_8_16_minutes_then_dead(hooks: Sandbox, receiver: Receiver) -> None:
    receiver.default_status = 500
    hooks.subscribe(receiver.url, SECRET)
    hooks.send_breaking_news("NFL")
    hooks.wait_for_deliveries(timeout=5)
    assert len(receiver.requests) == 1
    for minutes in (1, 2, 4, 8, 16):
        hooks.advance(minutes * 60 - 1)
        hooks.wait_for_deliveries(timeout=5)
        before = len(receiver.requests)
        hooks.advance(1)
        hooks.wait_for_deliveries(timeout=5)
        assert len(receiver.requests) == before + 1
    hooks.advance(3600)
    hooks.wait_for_deliveries(timeout=5)
    assert len(receiver.requests) == 6
    log = hooks.deliveries
    assert [a.attempt for a in log] == [1, 2, 3, 4, 5, 6]
    assert [a.outcome for a in log] == ["retry_scheduled"] * 5 + ["dead"]
    assert all(a.status_code == 500 for a in log)
    gaps = [(b.started_at - a.started_at) for a, b in zip(log, log[1:])]
    assert gaps == [timedelta(minutes=m) for m in (1, 2, 4, 8, 16)]
    assert hooks.delivery_jobs[0].state == "dead"
    bodies = {r["body"] for r in receiver.requests}
    ids = {r["headers"]["X-Service-Delivery"] for r in receiver.requests}
    assert len(bodies) == 1 and len(ids) == 6  # same payload, new delivery id per attempt


def test_a_retry_succeeds_and_stops_the_schedule(hooks: Sandbox, receiver: Receiver) -> None:
    receiver.statuses = [503, 302]
    hooks.subscribe(receiver.url, SECRET)
    hooks.send_breaking_news("NFL")
    hooks.drain_deliveries(timeout=5)
    assert [a.status_code for a in hooks.deliveries] == [503, 302, 200]
    assert hooks.deliveries[-1].outcome == "delivered"
    assert hooks.delivery_jobs[0].state == "delivered"


def test_time_scale_shrinks_the_backoff() -> None:
    with Sandbox(seed=4, clock="manual", posts=100, time_scale=0.01) as sb:
        r = Receiver()
        try:
            r.default_status = 400
            sb.subscribe(r.url, SECRET)
            sb.send_breaking_news("NFL")
            sb.drain_deliveries(timeout=10)
        finally:
            r.close()
        log = sb.deliveries
    assert len(log) == 6 and log[-1].outcome == "dead"
    assert (log[1].started_at - log[0].started_at) == timedelta(seconds=0.6)
    assert (log[-1].started_at - log[0].started_at) == timedelta(seconds=(1 + 2 + 4 + 8 + 16) * 0.6)


def test_no_answer_within_the_timeout_is_a_failure(receiver: Receiver) -> None:
    receiver.block = threading.Event()
    with Sandbox(seed=4, clock="manual", posts=100, webhook_timeout=0.2) as sb:
        sb.subscribe(receiver.url, SECRET)
        sb.send_breaking_news("NFL")
        sb.wait_for_deliveries(timeout=5)
        receiver.block.set()
        attempt = sb.deliveries[0]
    assert attempt.status_code is None and attempt.error is not None and "timeout" in attempt.error
    assert attempt.outcome == "retry_scheduled"


def test_unreachable_target_is_a_failure_with_an_error(hooks: Sandbox) -> None:
    hooks.subscribe("http://127.0.0.1:9/hook", SECRET)
    hooks.send_breaking_news("NFL")
    hooks.wait_for_deliveries(timeout=5)
    assert hooks.deliveries[0].error and hooks.deliveries[0].status_code is None


def test_secret_is_not_in_reprs_or_admin_listing(hooks: Sandbox, receiver: Receiver) -> None:
    sub = hooks.subscribe(receiver.url, SECRET)
    assert SECRET not in repr(sub)
    listing = httpx.get(hooks.url + "/_sandbox/subscriptions").text
    assert SECRET not in listing and sub.id in listing


def test_admin_routes_drive_the_sender_over_http(hooks: Sandbox, receiver: Receiver) -> None:
    admin = hooks.url + "/_sandbox"
    r = httpx.post(admin + "/subscriptions", json={"url": receiver.url, "secret": SECRET, "leagues": ["NHL"]})
    assert r.status_code == 201 and r.json()["leagues"] == ["NHL"]
    r = httpx.post(admin + "/events", json={"event": "breaking_news", "league": "NHL", "news_type": "trade"})
    assert r.status_code == 202
    story = r.json()
    r = httpx.post(admin + "/events", json={"event": "breaking_news.update", "event_id": story["data"]["event_id"],
                                            "whats_new": "Second-round pick included"})
    assert r.status_code == 202 and r.json()["data"]["update_of"] == story["data"]["event_id"]
    hooks.wait_for_deliveries(timeout=5)
    log = httpx.get(admin + "/deliveries").json()["items"]
    assert [row["event"] for row in log] == ["breaking_news", "breaking_news.update"]
    assert all(row["status_code"] == 200 and row["outcome"] == "delivered" for row in log)
    assert httpx.post(admin + "/events", json={"event": "nope"}).status_code == 400
    assert httpx.post(admin + "/subscriptions", json={"url": "ftp://x", "secret": "s"}).status_code == 400
    sub_id = httpx.get(admin + "/subscriptions").json()["items"][0]["id"]
    assert httpx.delete(f"{admin}/subscriptions/{sub_id}").status_code == 200
    assert httpx.get(admin + "/subscriptions").json()["items"] == []


def test_admin_routes_for_time_posts_keys_and_chaos(hooks: Sandbox) -> None:
    admin = hooks.url + "/_sandbox"
    before = hooks.now()
    now = httpx.post(admin + "/advance", json={"seconds": 60}).json()["now"]
    assert datetime.fromisoformat(now.replace("Z", "+00:00")) == before + timedelta(seconds=60)
    post = httpx.post(admin + "/posts", json={"league": "MLS", "text": "Admin post"}).json()
    assert post["text"] == "Admin post" and post["league"] == "MLS"
    assert httpx.delete(f"{admin}/posts/{post['id']}").json() == {"ok": True, "id": post["id"]}
    dated = httpx.post(admin + "/posts", json={"league": "NFL", "created_at": "2026-01-15T17:00:00Z", "teams": ["KC"]})
    assert dated.status_code == 201 and dated.json()["created_at"] == "2026-01-15T17:00:00.000Z"
    assert dated.json()["teams"][0]["name"] == "Kansas City Chiefs"
    assert httpx.post(admin + "/posts", json={"author": "me"}).status_code == 400
    assert httpx.post(admin + "/posts", json={"created_at": "soon"}).status_code == 400
    assert httpx.delete(admin + "/posts/123").status_code == 404
    key = httpx.post(admin + "/keys", json={"plan": "free", "leagues": ["MLS"]}).json()["api_key"]
    assert hooks.accounts.get(key) is not None and hooks.accounts.get(key).config.plan == "free"  # type: ignore[union-attr]
    assert httpx.put(admin + "/chaos", json={"rate_500": 1.0, "key": key}).status_code == 200
    assert httpx.get(hooks.base_url + "/posts", headers={"Authorization": key}).status_code == 500
    assert httpx.get(hooks.base_url + "/posts", headers={"Authorization": hooks.api_key}).status_code == 200
    state = httpx.get(admin + "/state").json()
    assert state["seed"] == 4 and state["visible_posts"] > 0
