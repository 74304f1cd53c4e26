"""GET /posts over loopback with plain httpx: statuses, error bodies, parameters, author shapes."""

from __future__ import annotations

from datetime import datetime

import httpx
import pytest

from sports_posts.sandbox import Sandbox

from .conftest import client_for
from .test_sandbox_query import INVALID


def test_base_url_ends_in_v1(sb: Sandbox) -> None:
    assert sb.base_url.endswith("/v1") and sb.base_url.startswith("http://127.0.0.1:")


def test_default_is_a_page_of_20_trending_posts(client: httpx.Client) -> None:
    r = client.get("/posts")
    assert r.status_code == 200
    body = r.json()
    assert body["pagination"] == {"page": 1, "limit": 20, "has_next": True, "has_prev": False}
    assert len(body["items"]) == 20


@pytest.mark.parametrize(("params", "named"), INVALID)
def test_invalid_parameters_answer_400_with_the_error_body(client: httpx.Client, params: dict[str, str], named: str) -> None:
    r = client.get("/posts", params=params)
    assert r.status_code == 400
    body = r.json()
    assert body["ok"] is False and body["error_code"] == "INVALID_PARAMETER"
    assert f"'{named}'" in body["error_message"]


def test_leagues_case_insensitive_and_league_spelling(client: httpx.Client) -> None:
    a = client.get("/posts", params={"leagues": "nfl", "sort": "recent"}).json()["items"]
    b = client.get("/posts", params={"league": "NFL", "sort": "recent"}).json()["items"]
    assert a == b and {p["league"] for p in a} == {"NFL"}


def test_soccer_alias_returns_football_leagues(client: httpx.Client) -> None:
    items = client.get("/posts", params={"sports": "SOCCER", "limit": 100}).json()["items"]
    assert {p["league"] for p in items} <= {"EPL", "MLS", "FIFA", "SOCCER"} and len(items) == 100


def test_team_not_found_is_404(client: httpx.Client) -> None:
    r = client.get("/posts", params={"teams": "NOPE", "id_type": "code"})
    assert r.status_code == 404 and r.json()["error_code"] == "NOT_FOUND"


def test_team_by_provider1_guid(client: httpx.Client, sb: Sandbox) -> None:
    chiefs = sb.world.team("NFL", "KC")
    items = client.get("/posts", params={"teams": chiefs.provider1_guid, "id_type": "provider1_guid"}).json()["items"]
    assert items and all(any(t["provider1_guid_id"] == chiefs.provider1_guid for t in p["teams"]) for p in items)


def test_since_id_not_found(client: httpx.Client) -> None:
    r = client.get("/posts", params={"since_id": "1"})
    assert r.status_code == 400 and r.json()["error_code"] == "SINCE_ID_NOT_FOUND"


def test_since_and_since_id_over_http(client: httpx.Client) -> None:
    items = client.get("/posts", params={"leagues": "NBA", "sort": "recent", "limit": 50}).json()["items"]
    pivot = items[5]
    newer = client.get("/posts", params={"leagues": "NBA", "sort": "recent", "since_id": pivot["id"]}).json()["items"]
    assert [p["id"] for p in newer] == [p["id"] for p in items[:5]]
    since = client.get("/posts", params={"leagues": "NBA", "sort": "recent", "since": pivot["created_at"]}).json()["items"]
    assert pivot["id"] not in [p["id"] for p in since]
    assert all(datetime.fromisoformat(p["created_at"].replace("Z", "+00:00")) >
               datetime.fromisoformat(pivot["created_at"].replace("Z", "+00:00")) for p in since)


def test_pagination_flags(client: httpx.Client) -> None:
    first = client.get("/posts", params={"leagues": "GOLF", "limit": 100, "sort": "recent"}).json()
    total = len(first["items"])
    assert not first["pagination"]["has_next"]
    last_page = (total + 9) // 10
    last = client.get("/posts", params={"leagues": "GOLF", "limit": 10, "page": last_page, "sort": "recent"}).json()
    assert last["pagination"] == {"page": last_page, "limit": 10, "has_next": False, "has_prev": True}
    beyond = client.get("/posts", params={"leagues": "GOLF", "limit": 10, "page": last_page + 1}).json()
    assert beyond["items"] == [] and beyond["pagination"]["has_prev"] is True


@pytest.mark.parametrize("shape", ["flat", "nested", "both", "mixed"])
def test_author_shapes(shape: str) -> None:
    with Sandbox(seed=3, clock="manual", posts=200, author_shape=shape) as sandbox, client_for(sandbox) as c:
        items = c.get("/posts", params={"limit": 50}).json()["items"]
    flat = ["author_username" in p and "author_id" in p for p in items]
    nested = ["author" in p for p in items]
    if shape == "flat":
        assert all(flat) and not any(nested)
    elif shape == "nested":
        assert all(nested) and not any(flat)
        assert set(items[0]["author"]) == {"username", "name", "profile_image_url", "verified"}
    elif shape == "both":
        assert all(flat) and all(nested)
    else:
        assert any(flat) and any(nested) and all(a != b for a, b in zip(flat, nested))


def test_new_posts_appear_when_the_clock_moves(fresh: Sandbox, fresh_client: httpx.Client) -> None:
    top = fresh_client.get("/posts", params={"sort": "recent", "leagues": "ALL", "limit": 1}).json()["items"][0]
    fresh.advance(120)
    newer = fresh_client.get("/posts", params={"sort": "recent", "since_id": top["id"], "limit": 100}).json()["items"]
    expected = [p for p in fresh.visible_posts() if p.live and not p.author.custom]
    assert len(newer) == len(expected) >= 3


def test_late_indexed_post_shows_up_behind_newer_posts(fresh: Sandbox, fresh_client: httpx.Client) -> None:
    late = fresh.publish_post("NFL", index_delay=60, author=fresh.world.sources[0])
    fresh.advance(30)
    on_time = fresh.publish_post("NFL", author=fresh.world.sources[0])
    ids = [p["id"] for p in fresh_client.get("/posts", params={"leagues": "NFL", "sort": "recent"}).json()["items"]]
    assert on_time.id in ids and late.id not in ids
    fresh.advance(31)
    ids = [p["id"] for p in fresh_client.get("/posts", params={"leagues": "NFL", "sort": "recent"}).json()["items"]]
    assert ids.index(on_time.id) < ids.index(late.id)


def test_deleted_post_leaves_posts_and_enters_x_ids(fresh: Sandbox, fresh_client: httpx.Client) -> None:
    victim = fresh_client.get("/posts", params={"sort": "recent"}).json()["items"][0]["id"]
    fresh.delete_post(victim)
    assert victim not in [p["id"] for p in fresh_client.get("/posts", params={"sort": "recent"}).json()["items"]]
    assert victim in fresh_client.get("/account/x-ids").json()["ids_to_delete"]
    r = fresh_client.get("/posts", params={"since_id": victim})
    assert r.status_code == 400 and r.json()["error_code"] == "SINCE_ID_NOT_FOUND"


def test_unknown_route_and_wrong_method_answer_error_bodies(client: httpx.Client) -> None:
    r = client.get("/nothing-here")
    assert r.status_code == 404 and r.json()["ok"] is False
    r = client.post("/posts")
    assert r.status_code == 405 and r.json()["error_code"] == "METHOD_NOT_ALLOWED"
