"""No 500 from the sandbox: calendar limits, bad admin bodies, malformed requests, repeated parameters."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from sports_posts.sandbox import Sandbox

from .conftest import Receiver, client_for


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"since": "0001-01-01T00:00:00+01:00"}, "since"),  # before the first instant in UTC
        ({"since": "9999-12-31T23:59:59-01:00"}, "since"),  # after the last one
        ({"match": "KC,DET", "start_time": "9999-12-31T22:00:00Z"}, "start_time"),  # the game runs past it
        ({"match": "KC,DET", "start_time": "0001-01-01T01:00:00Z", "include_pregame": "true"}, "start_time"),
        ({"since": "2026-01-15T18:00:00+24:00"}, "since"),  # an offset out of range
    ],
)
def test_timestamps_at_the_calendar_limits_are_400(client: httpx.Client, params: dict[str, str], named: str) -> None:
    r = client.get("/posts", params=params)
    assert r.status_code == 400, r.text
    assert r.json()["error_code"] == "INVALID_PARAMETER" and f"'{named}'" in r.json()["error_message"]


def test_the_first_and_last_instants_themselves_are_fine(client: httpx.Client) -> None:
    assert client.get("/posts", params={"since": "0001-01-01T00:00:00Z"}).status_code == 200
    assert client.get("/posts", params={"since": "9999-12-31T23:59:59.999999Z"}).json()["items"] == []


def test_the_clock_refuses_to_leave_the_calendar(fresh: Sandbox) -> None:
    admin = fresh.url + "/_sandbox/advance"
    for seconds in (1e300, 8e12, float("inf")):
        r = httpx.post(admin, content=json.dumps({"seconds": seconds}).replace("Infinity", "1e999"))
        assert r.status_code == 400 and r.json()["error_code"] == "INVALID_PARAMETER", r.text
    assert httpx.post(admin, json={"seconds": "soon"}).status_code == 400
    with client_for(fresh) as c:  # and the service still answers
        assert c.get("/posts").status_code == 200


def test_a_retry_that_would_fall_past_the_calendar_ends_the_delivery(receiver: Receiver) -> None:
    receiver.default_status = 500
    with Sandbox(seed=4, clock="manual", posts=100, time_scale=1e15) as sb:
        sb.subscribe(receiver.url, "s3cret")
        sb.send_breaking_news("NFL")
        sb.wait_for_deliveries(timeout=5)
        [job] = sb.delivery_jobs
    assert job.state == "dead" and len(job.attempts) == 1
    assert "calendar" in (job.attempts[0].error or "")


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"burst": {"requests": {"a": 1}}}, "burst.requests"),
        ({"burst": [5, 1]}, "burst"),
        ({"plan": "platinum"}, "plan"),
        ({"monthly_quota": "lots"}, "monthly_quota"),
        ({"monthly_quota": 1.5}, "monthly_quota"),
        ({"monthly_quota": -1}, "monthly_quota"),
        ({"active": "yes"}, "active"),
        ({"leagues": ["NFL", "XFL"]}, "XFL"),
        ({"endpoints": ["posts", "everything"]}, "endpoints"),
        ({"chaos": {"rate_500": 2}}, "chaos"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_bad_key_bodies_are_400_naming_the_field_and_create_nothing(fresh: Sandbox, body: dict[str, object],
                                                                  named: str) -> None:
    keys = len(fresh.accounts.all())
    r = httpx.post(fresh.url + "/_sandbox/keys", json=body)
    assert r.status_code == 400, r.text
    assert r.json()["error_code"] == "INVALID_PARAMETER" and named in r.json()["error_message"]
    assert len(fresh.accounts.all()) == keys


def test_a_valid_key_body_makes_a_working_key(fresh: Sandbox) -> None:
    r = httpx.post(fresh.url + "/_sandbox/keys", json={"plan": "free", "burst": {"requests": 5}, "monthly_quota": 3,
                                                         "leagues": ["NBA"], "endpoints": ["posts"]})
    assert r.status_code == 201
    with client_for(fresh, r.json()["api_key"]) as c:
        assert c.get("/posts", params={"leagues": "NBA"}).status_code == 200
        assert c.get("/ids", params={"entity": "teams", "league": "NBA"}).status_code == 403


@pytest.mark.parametrize(
    ("route", "body"),
    [("/_sandbox/keys", b"[1, 2]"), ("/_sandbox/keys", b"{not json"), ("/_sandbox/chaos", b'{"rate_500": "x"}'),
     ("/_sandbox/chaos", b'{"nope": 1}'), ("/_sandbox/posts", b'{"score": 99}'), ("/_sandbox/events", b'{"event": 3}'),
     ("/_sandbox/subscriptions", b'{"url": "http://127.0.0.1:1/h"}'), ("/_sandbox/posts", b'{"index_delay": 1e300}')],
)
def test_every_admin_body_is_validated(fresh: Sandbox, route: str, body: bytes) -> None:
    r = httpx.post(fresh.url + route, content=body)
    assert r.status_code == 400 and r.json()["error_code"] == "INVALID_PARAMETER", r.text


def test_a_malformed_request_line_gets_the_json_error_body(sb: Sandbox) -> None:
    with socket.create_connection(("127.0.0.1", sb.port), timeout=5) as sock:
        sock.sendall(b"NOT A REQUEST\r\n\r\n")
        raw = b""
        while chunk := sock.recv(4096):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"content-type: application/json" in head.lower()
    assert json.loads(body)["error_code"] == "INVALID_PARAMETER"


def test_405_lists_the_allowed_methods(sb: Sandbox) -> None:
    r = httpx.post(sb.base_url + "/posts")
    assert r.status_code == 405 and r.json()["error_code"] == "METHOD_NOT_ALLOWED"
    assert {m.strip() for m in r.headers["Allow"].split(",")} == {"GET", "HEAD"}


def test_repeated_list_parameters_combine_like_commas(client: httpx.Client) -> None:
    repeated = client.get("/posts?leagues=NFL&leagues=NBA&limit=100&sort=recent").json()
    joined = client.get("/posts?leagues=NFL,NBA&limit=100&sort=recent").json()
    spellings = client.get("/posts?leagues=NFL&league=NBA&limit=100&sort=recent").json()
    assert repeated == joined == spellings and {p["league"] for p in repeated["items"]} == {"NFL", "NBA"}


@pytest.mark.parametrize("query", ["limit=1&limit=2", "sort=recent&sort=top", "since_id=1&since_id=2"])
def test_other_repeated_parameters_are_400(client: httpx.Client, query: str) -> None:
    r = client.get("/posts?" + query)
    assert r.status_code == 400 and "more than once" in r.json()["error_message"]
    assert client.get("/ids?entity=teams&entity=teams&league=NFL").status_code == 400
