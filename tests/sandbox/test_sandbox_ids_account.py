"""GET /ids (spec 2.8, 4.4), /account/information, /account/x-ids and the deprecated routes (410)."""

from __future__ import annotations

import httpx
import pytest

from sports_posts.sandbox import Sandbox


def test_teams_alphabetical_by_location_in_the_envelope(client: httpx.Client) -> None:
    body = client.get("/ids", params={"entity": "teams", "league": "NFL"}).json()
    assert body["ok"] is True and body["count"] == 32 == len(body["items"])
    locations = [t["location"] for t in body["items"]]
    assert locations == sorted(locations)
    assert set(body["items"][0]) == {"service_id", "location", "name", "conference", "division", "league"}


def test_reference_id_adds_a_column_named_after_its_value(client: httpx.Client) -> None:
    items = client.get("/ids", params={"entity": "teams", "league": "NBA", "reference_id": "nba_id"}).json()["items"]
    assert all(item["nba_id"].startswith("16106127") for item in items)
    items = client.get("/ids", params={"entity": "teams", "league": "NHL", "reference_id": "grid_id"}).json()["items"]
    assert all("grid_id" in item and "nba_id" not in item for item in items)


def test_lookup_by_service_id_or_by_reference_column(client: httpx.Client, sb: Sandbox) -> None:
    celtics = sb.world.team("NBA", "BOS")
    one = client.get("/ids", params={"entity": "teams", "league": "NBA", "lookup": str(celtics.service_id)}).json()
    assert one["count"] == 1 and one["items"][0]["name"] == "Celtics"
    by_ref = client.get("/ids", params={"entity": "teams", "league": "NBA", "reference_id": "nba_id",
                                        "lookup": "1610612738"}).json()
    assert by_ref["items"] == [{**one["items"][0], "nba_id": "1610612738"}]
    missing = client.get("/ids", params={"entity": "teams", "league": "NBA", "lookup": "999999"})
    assert missing.status_code == 404 and missing.json()["error_code"] == "NOT_FOUND"


def test_lookup_never_matches_a_missing_reference(client: httpx.Client) -> None:
    for value in ("None", "null", ""):
        r = client.get("/ids", params={"entity": "teams", "league": "NFL", "reference_id": "nba_id", "lookup": value})
        assert r.status_code == 404


def test_lookup_with_reference_id_does_not_match_service_id(client: httpx.Client, sb: Sandbox) -> None:
    celtics = sb.world.team("NBA", "BOS")
    r = client.get("/ids", params={"entity": "teams", "league": "NBA", "reference_id": "nba_id",
                                   "lookup": str(celtics.service_id)})
    assert r.status_code == 404


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"league": "NFL"}, "entity"),
        ({"entity": "stadiums", "league": "NFL"}, "entity"),
        ({"entity": "teams"}, "league"),
        ({"entity": "teams", "league": "XFL"}, "league"),
        ({"entity": "teams", "league": "NFL", "reference_id": "espn_id"}, "reference_id"),
    ],
)
def test_ids_validation(client: httpx.Client, params: dict[str, str], named: str) -> None:
    r = client.get("/ids", params=params)
    assert r.status_code == 400 and r.json()["error_code"] == "INVALID_PARAMETER" and named in r.json()["error_message"]


def test_players_leagues_and_posts_entities(client: httpx.Client, sb: Sandbox) -> None:
    players = client.get("/ids", params={"entity": "players", "league": "PGA"}).json()
    assert players["ok"] and players["count"] == 30
    assert all(p["team_service_id"] is None and p["provider1_guid_id"] for p in players["items"])
    leagues = client.get("/ids", params={"entity": "leagues", "league": "all"}).json()
    assert leagues["count"] == 16 and {"code", "name", "sport", "team_count"} <= set(leagues["items"][0])
    nfl = client.get("/ids", params={"entity": "leagues", "league": "NFL"}).json()["items"]
    assert nfl == [{"code": "NFL", "name": "National Football League", "sport": "americanfootball",
                    "team_count": 32, "player_count": 128}]
    posts = client.get("/ids", params={"entity": "posts", "league": "MMA"}).json()
    assert 0 < posts["count"] <= 1000 and {p["league"] for p in posts["items"]} == {"MMA"}


def test_account_information_shape(client: httpx.Client) -> None:
    body = client.get("/account/information").json()
    assert body["company"] == {"name": "Sandbox Sports Media", "plan": "paid", "subscription_status": "active"}
    assert isinstance(body["usage"]["current_calls"], int)


def test_x_ids_lists_deleted_posts_as_of_now(sb: Sandbox, client: httpx.Client) -> None:
    body = client.get("/account/x-ids").json()
    assert body["ids_to_delete"] == [p.id for p in sb.world.deleted_posts(sb.now())]
    assert body["ids_to_delete"] and body["as_of"].endswith("Z")


def test_x_ids_grows_with_scheduled_deletions(fresh: Sandbox, fresh_client: httpx.Client) -> None:
    before = fresh_client.get("/account/x-ids").json()["ids_to_delete"]
    fresh.advance(3600)
    after = fresh_client.get("/account/x-ids").json()["ids_to_delete"]
    assert after[: len(before)] == before and len(after) == len(before) + 4


@pytest.mark.parametrize("mode", ["leagues", "teams", "players", "nearby", "games", "trending"])
def test_deprecated_per_mode_routes_answer_410(client: httpx.Client, mode: str) -> None:
    r = client.get(f"/posts/{mode}", params={"leagues": "NFL"})
    assert r.status_code == 410
    body = r.json()
    assert body["ok"] is False and body["error_code"] and "/posts" in body["error_message"]
