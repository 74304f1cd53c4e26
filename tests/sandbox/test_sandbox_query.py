"""GET /posts as pure functions: every validation rule, mode inference, filters, sorting, paging."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from sports_posts.sandbox.clock import DEFAULT_START
from sports_posts.sandbox.errors import ApiError
from sports_posts.sandbox.query import parse_datetime, parse_posts_query, run_posts_query
from sports_posts.sandbox.world import World

NOW = DEFAULT_START


@pytest.fixture(scope="module")
def world() -> World:
    return World(7, start=DEFAULT_START)


def parse(world: World, **params: str):  # type: ignore[no-untyped-def]
    return parse_posts_query(params, world.leagues)


def run(world: World, allowed: frozenset[str] | None = None, /, **params: str):  # type: ignore[no-untyped-def]
    return run_posts_query(world, parse(world, **params), NOW, allowed)


INVALID = [
        ({"leagues": "NFL,XFL"}, "leagues"),
        ({"league": "nope"}, "league"),
        ({"leagues": ""}, "leagues"),
        ({"sports": "quidditch"}, "sports"),
        ({"teams": ",".join(str(i) for i in range(11)), "id_type": "code"}, "teams"),
        ({"players": ",".join(str(i) for i in range(101)), "id_type": "code"}, "players"),
        ({"teams": "KC"}, "id_type"),
        ({"players": "x"}, "id_type"),
        ({"teams": "KC", "id_type": "carrier_pigeon"}, "id_type"),
        ({"match": "KC"}, "match"),
        ({"match": "KC,DET,BUF", "start_time": "2026-01-01T00:00:00Z"}, "match"),
        ({"match": "KC,DET"}, "start_time"),
        ({"match": "KC,DET", "start_time": "yesterday"}, "start_time"),
        ({"include_pregame": "maybe"}, "include_pregame"),
        ({"lat": "40"}, "lng"),
        ({"lng": "-70"}, "lat"),
        ({"lat": "91", "lng": "0"}, "lat"),
        ({"lat": "0", "lng": "181"}, "lng"),
        ({"lat": "abc", "lng": "0"}, "lat"),
        ({"lat": "0", "lng": "0", "radius_km": "0"}, "radius_km"),
        ({"lat": "0", "lng": "0", "radius_km": "4831"}, "radius_km"),
        ({"media_type": "hologram"}, "media_type"),
        ({"aspect_ratio": "round"}, "aspect_ratio"),
        ({"min_score": "9.5"}, "min_score"),
        ({"min_score": "-1"}, "min_score"),
        ({"min_score": "nan"}, "min_score"),
        ({"min_duration": "long"}, "min_duration"),
        ({"min_duration": "-5"}, "min_duration"),
        ({"highlight": "yes please"}, "highlight"),
        ({"has_player": "2"}, "has_player"),
        ({"custom_sources": "on"}, "custom_sources"),
        ({"user_location": "XX"}, "user_location"),
        ({"user_location": "USA"}, "user_location"),
        ({"sort": "random"}, "sort"),
        ({"since": "2026-13-01T00:00:00Z"}, "since"),
        ({"since": "last week"}, "since"),
        ({"since_id": ""}, "since_id"),
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"page": "0"}, "page"),
        ({"page": "1.5"}, "page"),
]
"""Every validation rule of spec 4.1 and 8: (parameters, the parameter the 400 must name)."""


@pytest.mark.parametrize(("params", "named"), INVALID)
def test_invalid_parameter_is_400_naming_the_parameter(world: World, params: dict[str, str], named: str) -> None:
    with pytest.raises(ApiError) as info:
        parse_posts_query(params, world.leagues)
    assert info.value.status == 400
    assert info.value.error_code == "INVALID_PARAMETER"
    assert f"'{named}'" in info.value.message


@pytest.mark.parametrize(
    ("params", "mode"),
    [
        ({}, "trending"),
        ({"sort": "trending", "leagues": "NFL"}, "trending"),
        ({"leagues": "NFL"}, "league"),
        ({"league": "nba", "sort": "recent"}, "league"),
        ({"teams": "KC", "id_type": "code", "lat": "1", "lng": "1"}, "team"),
        ({"players": "x", "id_type": "code"}, "player"),
        ({"lat": "39.0", "lng": "-94.5"}, "nearby"),
        ({"match": "KC,DET", "start_time": "2026-01-12T23:00:00Z"}, "game"),
        ({"start_time": "2026-01-12T23:00:00Z"}, "trending"),
    ],
)
def test_mode_inference(world: World, params: dict[str, str], mode: str) -> None:
    assert parse(world, **params).mode == mode


def test_leagues_are_case_insensitive_all_and_both_spellings(world: World) -> None:
    assert parse(world, leagues="nfl,Nba").leagues == {"NFL", "NBA"}
    assert parse(world, leagues="ALL").leagues == set(world.leagues)
    assert parse(world, leagues="NFL", league="mlb").leagues == {"NFL", "MLB"}


def test_sports_expand_to_leagues_with_soccer_alias(world: World) -> None:
    assert parse(world, sports="Soccer").leagues == {"EPL", "MLS", "FIFA", "SOCCER"}
    assert parse(world, sports="football").leagues == parse(world, sports="soccer").leagues
    assert parse(world, sports="americanfootball,GOLF").leagues == {"NFL", "NCAAFB", "PGA", "GOLF"}


def test_datetimes_accept_z_offsets_naive_and_a_decoded_plus() -> None:
    expected = datetime(2026, 1, 15, 17, 0, tzinfo=timezone.utc)
    assert parse_datetime("since", "2026-01-15T17:00:00Z") == expected
    assert parse_datetime("since", "2026-01-15T18:00:00+01:00") == expected
    assert parse_datetime("since", "2026-01-15T18:00:00 01:00") == expected
    assert parse_datetime("since", "2026-01-15T17:00:00") == expected
    assert parse_datetime("since", "2026-01-15T17:00:00.123456789Z") == expected + timedelta(microseconds=123456)


def test_recent_is_newest_first_with_created_at_then_id_tiebreak(world: World) -> None:
    items = run(world, leagues="NFL", sort="recent", limit="100").items
    keys = [(p.created_at, int(p.id)) for p in items]
    assert keys == sorted(keys, reverse=True)


def test_top_orders_by_score(world: World) -> None:
    items = run(world, sort="top", limit="100").items
    assert [p.score for p in items] == sorted((p.score for p in items), reverse=True)
    assert items[0].score == max(p.score for p in world.visible_posts(NOW) if not p.author.custom)


def test_default_sort_is_trending_for_trending_and_league_modes(world: World) -> None:
    assert parse(world).effective_sort == "trending"
    assert parse(world, leagues="NFL").effective_sort == "trending"
    assert parse(world, lat="1", lng="1").effective_sort == "recent"


def test_pages_partition_the_result(world: World) -> None:
    whole = run(world, leagues="NHL", sort="recent", limit="100")
    assert not whole.has_prev
    ids: list[str] = []
    page = 1
    while True:
        result = run(world, leagues="NHL", sort="recent", limit="7", page=str(page))
        ids += [p.id for p in result.items]
        assert result.has_prev == (page > 1)
        if not result.has_next:
            break
        page += 1
    assert ids == [p.id for p in run(world, leagues="NHL", sort="recent", limit="100").items] + ids[100:]
    assert len(ids) == len(set(ids)) == whole.total


def test_since_is_exclusive_and_since_id_follows_the_post(world: World) -> None:
    recent = run(world, leagues="MLB", sort="recent", limit="100").items
    pivot = recent[10]
    after = run(world, leagues="MLB", sort="recent", limit="100", since=pivot.created_at.isoformat()).items
    assert pivot not in after and all(p.created_at > pivot.created_at for p in after)
    after_id = run(world, leagues="MLB", sort="recent", limit="100", since_id=pivot.id).items
    assert after_id == recent[:10]


def test_since_id_unknown_or_deleted_is_since_id_not_found(world: World) -> None:
    deleted = world.deleted_posts(NOW)[0]
    for since_id in ("123", deleted.id):
        with pytest.raises(ApiError) as info:
            run(world, since_id=since_id)
        assert (info.value.status, info.value.error_code) == (400, "SINCE_ID_NOT_FOUND")


def test_team_mode_by_every_id_type(world: World) -> None:
    chiefs = world.team("NFL", "KC")
    for id_type, value in chiefs.ids().items():
        items = run(world, teams=value, id_type=id_type, limit="100", leagues="NFL").items
        assert items and all(chiefs in p.teams for p in items)


def test_unknown_team_or_player_is_404(world: World) -> None:
    for params in ({"teams": "ZZZ", "id_type": "code"}, {"players": "00000000-0000-4000-8000-000000000000",
                                                        "id_type": "provider1_guid"}):
        with pytest.raises(ApiError) as info:
            run(world, **params)
        assert (info.value.status, info.value.error_code) == (404, "NOT_FOUND")


def test_a_team_player_or_match_of_a_league_off_the_plan_is_403(world: World) -> None:
    allowed = frozenset({"NBA"})
    player = next(p for post in world.posts if post.league == "NFL" for p in post.players)
    game = next(p.game for p in world.posts if p.game is not None and p.game.league == "NFL")
    for params in ({"teams": "KC", "id_type": "code"},
                   {"players": player.provider1_guid, "id_type": "provider1_guid"},
                   {"match": f"{game.home.code},{game.away.code}", "id_type": "code",
                    "start_time": game.start_time.isoformat()}):
        with pytest.raises(ApiError) as info:
            run(world, allowed, **params)
        assert (info.value.status, info.value.error_code) == (403, "FORBIDDEN"), params
        assert "NFL" in info.value.message
    # The same ids with the plan's league named find nothing there: 404, not 403.
    with pytest.raises(ApiError) as info:
        run(world, allowed, teams="KC", id_type="code", leagues="NBA")
    assert (info.value.status, info.value.error_code) == (404, "NOT_FOUND")


def test_player_mode(world: World) -> None:
    tagged = next(p for p in world.posts if p.players and p.visible_at(NOW) and not p.author.custom)
    player = tagged.players[0]
    items = run(world, players=player.provider1_guid, id_type="provider1_guid").items
    assert tagged in items or len(items) == 20
    assert all(player in p.players for p in items)


def test_game_mode_window_and_pregame(world: World) -> None:
    game = next(p.game for p in world.posts if p.game is not None and p.game.league == "NFL")
    assert game in world.games_of("NFL")
    params = {"match": f"{game.home.code},{game.away.code}", "id_type": "code", "leagues": "NFL",
              "start_time": game.start_time.isoformat(), "limit": "100"}
    during = run(world, **params).items
    with_pregame = run(world, include_pregame="true", **params).items
    assert during and all(game.start_time <= p.created_at < game.start_time + timedelta(hours=4) for p in during)
    assert len(with_pregame) > len(during)
    assert any(p.created_at < game.start_time for p in with_pregame)


def test_nearby_respects_the_radius(world: World) -> None:
    near = run(world, lat="39.049", lng="-94.484", radius_km="25", limit="100").items
    assert near and all(p.geo is not None and abs(p.geo[0] - 39.05) < 0.3 for p in near)
    wide = run(world, lat="39.049", lng="-94.484", radius_km="4830", limit="100")
    assert wide.total > len(near)


@pytest.mark.parametrize(
    ("params", "check"),
    [
        ({"media_type": "photo"}, lambda p: p.media_type in ("photo", "image")),
        ({"media_type": "image"}, lambda p: p.media_type in ("photo", "image")),
        ({"media_type": "animated_gif"}, lambda p: p.media_type in ("gif", "animated_gif")),
        ({"media_type": "none"}, lambda p: p.media == []),
        ({"aspect_ratio": "portrait"}, lambda p: p.media[0].height > p.media[0].width),
        ({"aspect_ratio": "square"}, lambda p: p.media[0].height == p.media[0].width),
        ({"min_score": "8"}, lambda p: p.score >= 8),
        ({"min_duration": "60000"}, lambda p: p.max_duration_ms >= 60000),
        ({"highlight": "true"}, lambda p: p.highlight),
        ({"has_player": "true"}, lambda p: bool(p.players)),
        ({"user_location": "gb"}, lambda p: "GB" in p.author.regions),
        ({"custom_sources": "false"}, lambda p: not p.author.custom),
    ],
)
def test_filters(world: World, params: dict[str, str], check) -> None:  # type: ignore[no-untyped-def]
    result = run(world, limit="100", **params)
    assert result.items and all(check(p) for p in result.items)
    assert result.total < len(world.visible_posts(NOW))


def test_user_location_excludes_sources_not_cleared_there(world: World) -> None:
    us = run(world, user_location="US", limit="100").total
    assert us < run(world, limit="100").total
    assert all("US" in p.author.regions for p in run(world, user_location="US", limit="100").items)


def test_custom_sources_are_included_only_on_request(world: World) -> None:
    assert not any(p.author.custom for p in run(world, limit="100", sort="recent").items)
    with_custom = run(world, custom_sources="true", limit="100", sort="recent", leagues="ALL")
    assert with_custom.total > run(world, limit="100", sort="recent").total


def test_plan_leagues_403_for_a_named_league_and_restrict_all(world: World) -> None:
    allowed = frozenset({"NBA"})
    with pytest.raises(ApiError) as info:
        run(world, allowed, leagues="NFL")
    assert (info.value.status, info.value.error_code) == (403, "FORBIDDEN")
    with pytest.raises(ApiError):
        run(world, allowed, teams="KC", id_type="code", leagues="NFL")
    assert {p.league for p in run(world, allowed, leagues="ALL", limit="100").items} == {"NBA"}
    assert {p.league for p in run(world, allowed, limit="100").items} == {"NBA"}
