"""The shipped OpenAPI 3.1 document: well formed, served, and every sandbox answer validates against it."""

from __future__ import annotations

import json
from typing import Any, Callable

import httpx
import pytest
from jsonschema import Draft202012Validator

from sports_posts.sandbox import Sandbox

from .conftest import Receiver, client_for

Schema = Callable[[str], Draft202012Validator]


def check(validator: Draft202012Validator, body: Any) -> None:
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
    assert not errors, "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_document_is_openapi_3_1_with_every_path(sb: Sandbox) -> None:
    doc = sb.openapi()
    assert doc["openapi"].startswith("3.1") and doc["info"]["version"] == "1.0.0"
    assert {"/posts", "/account/information", "/account/x-ids", "/ids"} <= set(doc["paths"])
    assert all(doc["paths"][f"/posts/{m}"]["get"]["deprecated"] for m in ("leagues", "teams", "players", "nearby", "games", "trending"))
    params = {p["name"] for p in doc["paths"]["/posts"]["get"]["parameters"]}
    assert params == {"leagues", "league", "sports", "teams", "players", "id_type", "match", "start_time",
                      "include_pregame", "lat", "lng", "radius_km", "media_type", "aspect_ratio", "min_score",
                      "min_duration", "highlight", "has_player", "custom_sources", "user_location", "sort",
                      "since", "since_id", "limit", "page"}
    assert set(doc["webhooks"]) == {"breaking_news", "breaking_news.update"}
    assert {"bearerAuth", "bareKey"} == set(doc["components"]["securitySchemes"])
    for schema in doc["components"]["schemas"].values():
        Draft202012Validator.check_schema(schema)


def test_document_is_served(sb: Sandbox) -> None:
    assert httpx.get(sb.base_url + "/openapi.json").json() == sb.openapi()
    assert httpx.get(sb.url + "/openapi.json").json() == sb.openapi()


def test_schemas_reject_what_the_spec_forbids(schema_of: Schema) -> None:
    validator = schema_of("PostsResponse")
    assert not validator.is_valid({"pagination": {"page": 1}, "items": []})
    post_team = {"provider1_guid_id": "not-a-guid", "service_id": 1, "name": "x"}
    assert not schema_of("TaggedTeam").is_valid(post_team)
    assert not schema_of("Error").is_valid({"ok": True, "error_code": "X", "error_message": "y"})
    assert not schema_of("ComplianceList").is_valid({"ids_to_delete": [], "as_of": "yesterday"})
    assert not schema_of("ComplianceList").is_valid({"ids_to_delete": [], "as_of": "2026-01-01T00:00:00"})
    assert schema_of("ComplianceList").is_valid({"ids_to_delete": [], "as_of": "2026-01-01T00:00:00.000Z"})


@pytest.mark.parametrize("shape", ["flat", "nested", "both", "mixed"])
def test_posts_in_every_author_shape_validate(schema_of: Schema, shape: str) -> None:
    with Sandbox(seed=13, clock="manual", posts=400, author_shape=shape) as sb, client_for(sb) as c:
        for params in ({"limit": 100}, {"sort": "recent", "limit": 100, "page": 2}, {"media_type": "video"},
                       {"custom_sources": "true", "limit": 100}):
            check(schema_of("PostsResponse"), c.get("/posts", params=params).json())  # type: ignore[arg-type]


def test_every_post_of_the_world_validates(sb: Sandbox, schema_of: Schema) -> None:
    validator = schema_of("Post")
    for post in sb.world.posts:
        check(validator, post.to_wire("both"))


def test_account_compliance_and_ids_validate(client: httpx.Client, schema_of: Schema) -> None:
    check(schema_of("AccountInformation"), client.get("/account/information").json())
    check(schema_of("ComplianceList"), client.get("/account/x-ids").json())
    for league in ("NFL", "EPL", "PGA", "FIFA"):
        body = client.get("/ids", params={"entity": "teams", "league": league, "reference_id": "nba_id"}).json()
        check(schema_of("TeamsResponse"), body)
    for entity, league in (("players", "NBA"), ("leagues", "ALL"), ("posts", "NHL")):
        check(schema_of("IdsResponse"), client.get("/ids", params={"entity": entity, "league": league}).json())


def test_error_answers_validate(sb: Sandbox, client: httpx.Client, schema_of: Schema) -> None:
    validator = schema_of("Error")
    answers = [
        client.get("/posts", params={"limit": 0}),
        client.get("/posts", params={"since_id": "1"}),
        client.get("/posts", params={"teams": "ZZZ", "id_type": "code"}),
        client.get("/posts/leagues"),
        client.get("/nowhere"),
        httpx.get(sb.base_url + "/posts"),
    ]
    assert [r.status_code for r in answers] == [400, 400, 404, 410, 404, 401]
    for r in answers:
        check(validator, r.json())


def test_webhook_payloads_validate(schema_of: Schema, receiver: Receiver) -> None:
    with Sandbox(seed=13, clock="manual", posts=100) as sb:
        sb.subscribe(receiver.url, "s3cret")
        story = sb.send_breaking_news("NFL", alt_sources=2)
        update = sb.send_update(story["data"]["event_id"], "Out for the season")
        sb.wait_for_deliveries(timeout=5)
    check(schema_of("BreakingNewsEvent"), story)
    check(schema_of("BreakingNewsUpdateEvent"), update)
    sent = [json.loads(r["body"]) for r in receiver.requests]
    check(schema_of("BreakingNewsEvent"), sent[0])
    check(schema_of("BreakingNewsUpdateEvent"), sent[1])
