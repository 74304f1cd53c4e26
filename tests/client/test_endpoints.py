"""Every endpoint: what goes on the wire and what comes back."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable

import pytest
import respx

import sports_posts as sp
from tests.runner import Runner
from tests.wire import spec_compliance

from .conftest import page, post


def _query(route: respx.Route, n: int = 0) -> dict[str, str]:
    return dict(route.calls[n].request.url.params)


def test_posts_list_sends_every_parameter(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/posts").respond(200, json=page([post("9")]))
    items = runner.run(
        lambda c: c.posts.list(
            leagues=["NFL", "NBA"], sports="basketball", media_type="video", aspect_ratio="landscape",
            min_score=7, min_duration=1000, highlight=True, has_player=False, custom_sources=True,
            user_location="US", sort="recent", since=datetime(2024, 5, 1, tzinfo=timezone.utc),
            since_id="8", limit=50, page=2,
        )
    )
    assert [p.id for p in items] == ["9"]
    assert _query(route) == {
        "leagues": "NFL,NBA", "sports": "basketball", "media_type": "video", "aspect_ratio": "landscape",
        "min_score": "7", "min_duration": "1000", "highlight": "true", "has_player": "false",
        "custom_sources": "true", "user_location": "US", "sort": "recent", "since": "2024-05-01T00:00:00Z",
        "since_id": "8", "limit": "50", "page": "2",
    }
    assert route.calls[0].request.method == "GET"


MODES: list[tuple[str, Callable[[Any], Any], dict[str, str]]] = [
    ("trending", lambda c: c.posts.trending(), {"sort": "trending"}),
    ("trending-league", lambda c: c.posts.trending(leagues="NBA"), {"sort": "trending", "leagues": "NBA"}),
    ("league", lambda c: c.posts.by_league("NHL", highlight=True), {"leagues": "NHL", "highlight": "true"}),
    ("sport", lambda c: c.posts.by_sport(["soccer"]), {"sports": "soccer"}),
    ("team", lambda c: c.posts.by_team(["1", "2"], id_type="service"), {"teams": "1,2", "id_type": "service"}),
    ("player", lambda c: c.posts.by_player("p1", id_type="provider1_guid"), {"players": "p1", "id_type": "provider1_guid"}),
    ("nearby", lambda c: c.posts.nearby(51.5, -0.12, radius_km=25), {"lat": "51.5", "lng": "-0.12", "radius_km": "25"}),
    ("nearby-default", lambda c: c.posts.nearby(51.5, -0.12), {"lat": "51.5", "lng": "-0.12"}),
    (
        "game",
        lambda c: c.posts.for_game(("10", "20"), "2024-05-01T19:00:00Z", include_pregame=True),
        {"match": "10,20", "start_time": "2024-05-01T19:00:00Z", "include_pregame": "true"},
    ),
]


@pytest.mark.parametrize(("name", "call", "expected"), MODES, ids=[m[0] for m in MODES])
def test_mode_helpers_send_one_get_posts(
    runner: Runner, api: respx.MockRouter, name: str, call: Callable[[Any], Any], expected: dict[str, str]
) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    assert runner.run(call) == []
    assert route.call_count == 1
    assert _query(route) == expected


def test_account_information(runner: Runner, api: respx.MockRouter) -> None:
    api.get("/account/information").respond(200, json={
        "company": {"name": "Acme", "plan": "free", "subscription_status": "active"},
        "billing_cycle": {"current_period_start": "2024-05-01T00:00:00-07:00",
                          "current_period_end": "2024-06-01T00:00:00+00:00"},
        "usage": {"current_calls": 17},
        "support_tier": "gold",
    })
    info = runner.run(lambda c: c.account.information())
    assert isinstance(info, sp.AccountInformation)
    assert (info.company.name, info.company.plan, info.company.subscription_status) == ("Acme", "free", "active")
    assert info.billing_cycle.current_period_start == datetime(2024, 5, 1, 7, tzinfo=timezone.utc)
    assert info.billing_cycle.current_period_end.tzinfo is not None
    assert info.usage.current_calls == 17
    assert info.model_extra == {"support_tier": "gold"}


def test_account_x_ids(runner: Runner, api: respx.MockRouter) -> None:
    api.get("/account/x-ids").respond(200, json={"ids_to_delete": ["1", "2"], "as_of": "2024-05-01T00:00:00Z"})
    result = runner.run(lambda c: c.account.x_ids())
    assert isinstance(result, sp.ComplianceList)
    assert result.ids_to_delete == ["1", "2"]
    assert result.as_of == datetime(2024, 5, 1, tzinfo=timezone.utc)


TEAMS = {
    "ok": True,
    "count": 2,
    "items": [
        {"service_id": 1, "location": "Boston", "name": "Celtics", "conference": "Eastern", "division": "Atlantic",
         "league": "NBA", "nba_id": "1610612738"},
        {"service_id": 2, "location": "Chicago", "name": "Bulls", "conference": None, "division": None,
         "league": "NBA", "nba_id": "1610612741"},
    ],
}


def test_ids_teams_exposes_the_reference_column(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/ids").respond(200, json=TEAMS)
    teams = runner.run(lambda c: c.ids.teams("NBA", reference_id="nba_id"))
    assert _query(route) == {"entity": "teams", "league": "NBA", "reference_id": "nba_id"}
    assert isinstance(teams, sp.TeamList) and teams.ok and teams.count == 2
    assert [t.reference for t in teams] == ["1610612738", "1610612741"]
    assert [t.location for t in teams] == ["Boston", "Chicago"]
    assert teams.items[1].conference is None


def test_ids_teams_without_reference_and_with_lookup(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/ids").respond(200, json={"ok": True, "count": 1, "items": [TEAMS["items"][0]]})  # type: ignore[index]
    teams = runner.run(lambda c: c.ids.teams("NBA", lookup=1))
    assert _query(route) == {"entity": "teams", "league": "NBA", "lookup": "1"}
    assert teams.items[0].reference is None
    assert teams.items[0].model_extra == {"nba_id": "1610612738"}


def test_ids_list_keeps_every_field(runner: Runner, api: respx.MockRouter) -> None:
    body = {"ok": True, "count": 1, "items": [{"id": "a-uuid", "name": "Jayson Tatum", "team_service_id": 1, "grid_id": "g1"}]}
    route = api.get("/ids").respond(200, json=body)
    players = runner.run(lambda c: c.ids.list("players", "NBA", reference_id="grid_id"))
    assert _query(route) == {"entity": "players", "league": "NBA", "reference_id": "grid_id"}
    assert isinstance(players, sp.IdList) and len(players) == 1
    item = next(iter(players))
    assert item.reference == "g1"
    assert item.model_dump(exclude={"reference"}) == body["items"][0]  # type: ignore[index]


def test_auth_bearer_by_default_and_bare_on_request(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/account/x-ids").respond(200, json=spec_compliance())
    runner.run(lambda c: c.account.x_ids(), api_key="k1")
    runner.run(lambda c: c.account.x_ids(), api_key="k2", auth_scheme="bare")
    assert route.calls[0].request.headers["authorization"] == "Bearer k1"
    assert route.calls[1].request.headers["authorization"] == "k2"


def test_user_agent_names_the_sdk_and_its_version(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/account/x-ids").respond(200, json=spec_compliance())
    runner.run(lambda c: c.account.x_ids(), default_headers={"X-Team": "data"})
    headers = route.calls[0].request.headers
    assert headers["user-agent"].startswith(f"sports-posts-python/{sp.__version__}")
    assert headers["x-team"] == "data"
    assert headers["accept"] == "application/json"


def test_client_counts_its_calls(runner: Runner, api: respx.MockRouter) -> None:
    api.get("/account/x-ids").respond(200, json=spec_compliance())

    def three_calls(c: Any) -> Any:
        async def go() -> int:
            for _ in range(3):
                await c.account.x_ids()
            return int(c.calls)

        if isinstance(c, sp.AsyncSportsPosts):
            return go()
        for _ in range(3):
            c.account.x_ids()
        return c.calls

    assert runner.run(three_calls) == 3
