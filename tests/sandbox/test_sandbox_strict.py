"""The strict profile (the default): every reading the specification leaves open goes against the client."""

from __future__ import annotations

import warnings
from datetime import timedelta, timezone

import pytest

from sports_posts import CombinedModesWarning, ParameterError, SportsPosts, SportsPostsWarning
from sports_posts.sandbox import Sandbox
from sports_posts.sandbox.clock import DEFAULT_START
from sports_posts.sandbox.errors import ApiError
from sports_posts.sandbox.query import parse_posts_query, run_posts_query
from sports_posts.sandbox.world import Game, World

from .conftest import client_for

NOW = DEFAULT_START


@pytest.fixture(scope="module")
def world() -> World:
    return World(7, start=DEFAULT_START)


def strict(world: World, **params: str):  # type: ignore[no-untyped-def]
    query = parse_posts_query(params, world.leagues, strict=True)
    return run_posts_query(world, query, NOW, None, games_exact=True)


def a_game(world: World, league: str = "NFL") -> Game:
    return next(p.game for p in world.posts if p.game is not None and p.game.league == league)


def game_params(game: Game, **extra: str) -> dict[str, str]:
    return {"match": f"{game.home.code},{game.away.code}", "id_type": "code",
            "start_time": game.start_time.isoformat(), "limit": "100", **extra}


# -- the profile ------------------------------------------------------------------------------


def test_strict_is_the_default_and_lenient_is_named() -> None:
    assert Sandbox(posts=0).profile.name == "strict"
    assert Sandbox(posts=0).author_shape == "mixed"
    lenient = Sandbox(posts=0, profile="lenient")
    assert (lenient.profile.name, lenient.author_shape) == ("lenient", "both")
    assert Sandbox(posts=0, author_shape="flat").author_shape == "flat"
    with pytest.raises(ParameterError, match="profile must be one of strict, lenient"):
        Sandbox(posts=0, profile="forgiving")
    assert Sandbox(posts=0).state()["profile"] == "strict"


# -- one author form per post -----------------------------------------------------------------


def test_each_post_carries_one_author_form_a_seeded_mix() -> None:
    with Sandbox(seed=3, clock="manual", posts=300) as sb, client_for(sb) as c:
        items = c.get("/posts", params={"limit": 100, "sort": "recent"}).json()["items"]
    flat = ["author_username" in p and "author_id" in p for p in items]
    nested = ["author" in p for p in items]
    assert all(f != n for f, n in zip(flat, nested))  # exactly one form each
    # Both forms on one page, and not a plain alternation a reader could accidentally line up with.
    assert 25 <= sum(flat) <= 75
    assert any(flat[i] == flat[i + 1] for i in range(len(flat) - 1))


def test_code_reading_one_form_fails_here_and_the_sdk_fills_what_it_can() -> None:
    with Sandbox(seed=3, clock="manual", posts=300) as sb, \
            SportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
        posts = client.posts.list(sort="recent", limit=100).items
    # Portable: the handle, from either form.
    assert all(p.author is not None and p.author.username and p.author_username == p.author.username
               for p in posts)
    # Not portable: the display name only comes with the nested form, the id only with the flat one.
    assert any(p.author is not None and p.author.name is None for p in posts)
    assert any(p.author_id is None for p in posts)
    with pytest.raises(AttributeError):
        [p.author.name.upper() for p in posts]  # type: ignore[union-attr]


# -- combined modes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"teams": "KC", "id_type": "code", "lat": "39.0", "lng": "-94.5"}, "lat"),
        ({"teams": "KC", "id_type": "code", "players": "x", "leagues": "NFL"}, "players"),
        ({"teams": "KC", "id_type": "code", "match": "KC,DET", "start_time": "2026-01-12T23:00:00Z"}, "match"),
        ({"lat": "39.0", "lng": "-94.5", "match": "KC,DET", "start_time": "2026-01-12T23:00:00Z"}, "match"),
        ({"players": "x", "id_type": "code", "start_time": "2026-01-12T23:00:00Z"}, "start_time"),
    ],
)
def test_parameters_of_several_modes_are_refused(world: World, params: dict[str, str], named: str) -> None:
    with pytest.raises(ApiError) as info:
        strict(world, **params)
    assert (info.value.status, info.value.error_code) == (400, "INVALID_PARAMETER")
    assert f"'{named}'" in info.value.message and "not defined" in info.value.message
    # The lenient profile answers them, dropping some of the parameters (today's behaviour).
    lenient = {k: v for k, v in params.items() if k != "players"} if "teams" in params else params
    if "start_time" not in lenient or "match" in lenient:
        run_posts_query(world, parse_posts_query(lenient, world.leagues), NOW)


def test_start_time_without_match_is_refused(world: World) -> None:
    with pytest.raises(ApiError) as info:
        strict(world, leagues="NFL", start_time="2026-01-12T23:00:00Z")
    assert "start_time" in info.value.message and "without match" in info.value.message


def test_one_mode_with_filters_and_leagues_is_answered(world: World) -> None:
    page = strict(world, teams="KC", id_type="code", leagues="NFL", media_type="video", sort="recent")
    assert all(p.media_type == "video" for p in page.items)


def test_the_http_answer_is_the_spec_error_body() -> None:
    with Sandbox(seed=3, clock="manual", posts=100) as sb, client_for(sb) as c:
        answer = c.get("/posts", params={"teams": "KC", "id_type": "code", "lat": 39, "lng": -94})
        lenient = Sandbox(seed=3, clock="manual", posts=100, profile="lenient")
        with lenient, client_for(lenient) as lc:
            assert lc.get("/posts", params={"teams": "KC", "id_type": "code", "lat": 39, "lng": -94}).status_code == 200
    assert answer.status_code == 400
    body = answer.json()
    assert body["ok"] is False and body["error_code"] == "INVALID_PARAMETER"
    assert "not defined" in body["error_message"]


def test_the_sdk_refuses_a_combination_before_sending_and_the_sandbox_refuses_it_too() -> None:
    with Sandbox(seed=3, clock="manual", posts=100) as sb, \
            SportsPosts(api_key=sb.api_key, base_url=sb.base_url, max_retries=0) as client:
        with pytest.raises(ParameterError, match="teams, lat, lng"):
            client.posts.list(teams="KC", id_type="code", lat=39.0, lng=-94.5)
        assert client.calls == 0
        with warnings.catch_warnings():
            warnings.simplefilter("error", SportsPostsWarning)
            client.posts.list(teams="KC", id_type="code", leagues="NFL")  # one mode: no warning
        assert issubclass(CombinedModesWarning, SportsPostsWarning)


# -- games ------------------------------------------------------------------------------------


def test_game_mode_returns_that_games_posts_and_nothing_else(world: World) -> None:
    game = a_game(world)
    during = strict(world, **game_params(game)).items
    with_pregame = strict(world, **game_params(game, include_pregame="true")).items
    assert during and all(p.game is game for p in during)
    assert all(game.start_time <= p.created_at < game.start_time + timedelta(hours=4) for p in during)
    assert len(with_pregame) > len(during)
    assert all(p.game is game for p in with_pregame)
    assert {t.service_id for p in with_pregame for t in p.teams} == {game.home.service_id, game.away.service_id}
    # The lenient window reads "either team in the window": posts of other games come back.
    loose = run_posts_query(world, parse_posts_query(game_params(game), world.leagues), NOW).items
    assert set(map(id, during)) <= set(map(id, loose))


def test_a_match_never_played_or_at_another_time_returns_none(world: World) -> None:
    game = a_game(world)
    other = next(t for t in world.league_teams("NFL") if t not in (game.home, game.away))
    never = {**game_params(game), "match": f"{game.home.code},{other.code}"}
    assert not any(g for g in world.games if {g.home.service_id, g.away.service_id}
                   == {game.home.service_id, other.service_id} and g.start_time == game.start_time)
    assert strict(world, **never).items == []
    # The right game at a start time read in the wrong zone (the local time sent as UTC).
    shifted = game.start_time.astimezone(timezone(timedelta(hours=-5))).replace(tzinfo=None).isoformat()
    assert strict(world, **{**game_params(game), "start_time": shifted}).items == []
    # Teams of two leagues never met in a game.
    nba = world.league_teams("NBA")[0]
    cross = {**game_params(game), "match": f"{game.home.service_id},{nba.service_id}", "id_type": "service"}
    assert strict(world, **cross).items == []


def test_a_published_post_of_a_game_belongs_to_it() -> None:
    with Sandbox(seed=5, clock="manual", posts=200) as sb:
        game = next(g for g in sb.world.games if g.league == "NHL" and g.start_time > sb.now())
        sb.advance((game.start_time - sb.now()).total_seconds() + 600)
        post = sb.publish_post("NHL", teams=[game.home, game.away], text="Goal!")
        assert post.game is game
        alone = sb.publish_post("NHL", teams=[game.home])
        assert alone.game is None
        with client_for(sb) as c:
            items = c.get("/posts", params=game_params(game)).json()["items"]
        assert [p["id"] for p in items] == [post.id]


def test_the_sandbox_answers_game_mode_over_http() -> None:
    with Sandbox(seed=7, clock="manual", posts=1500) as sb, client_for(sb) as c:
        game = a_game(sb.world)
        items = c.get("/posts", params=game_params(game, include_pregame="true")).json()["items"]
        names = {game.home.full_name, game.away.full_name}
        assert items and all({t["name"] for t in p["teams"]} == names for p in items)
        mine = {p.id for p in sb.world.posts if p.game is game and p.visible_at(sb.now()) and not p.author.custom}
        assert {p["id"] for p in items} == mine


def test_lenient_keeps_the_window_reading() -> None:
    with Sandbox(seed=7, clock="manual", posts=1500, profile="lenient") as sb, client_for(sb) as c:
        game = a_game(sb.world)
        answer = c.get("/posts", params={**game_params(game), "teams": game.home.code})
    assert answer.status_code == 200



# -- data the specification types and orders ---------------------------------------------------


def test_both_media_type_vocabularies_are_served(world: World) -> None:
    kinds = {p.media_type for p in world.posts}
    assert kinds >= {"image", "photo", "video", "gif", "animated_gif", "none"}
    assert all(m.type == p.media_type for p in world.posts for m in p.media)


def test_news_status_takes_the_samples_confirmed_too() -> None:
    with Sandbox(seed=4, clock="manual", posts=50) as sb:
        statuses = {sb.send_breaking_news("NBA")["data"]["news_status"] for _ in range(30)}
        assert statuses == {"verified", "rumor", "confirmed"}
        assert sb.send_breaking_news("NBA", news_status="rumor")["data"]["news_status"] == "rumor"
    with Sandbox(seed=4, clock="manual", posts=50, profile="lenient") as sb:
        assert {sb.send_breaking_news("NBA")["data"]["news_status"] for _ in range(5)} == {"verified"}


@pytest.mark.parametrize("profile", ["strict", "lenient"])
def test_alt_sources_are_dated_at_or_before_the_event(profile: str) -> None:
    with Sandbox(seed=4, clock="manual", posts=50, profile=profile) as sb:
        story = sb.send_breaking_news("NFL", alt_sources=3)
        update = sb.send_update(story["data"]["event_id"], "Out for the season", alt_sources=2)
        for payload in (story, update):
            sent_at = payload["sent_at"]
            alts = payload["data"]["alt_sources"]
            assert alts and all(alt["created_at"] <= sent_at for alt in alts)
        assert all(alt["created_at"] >= story["data"]["created_at"] for alt in story["data"]["alt_sources"])


@pytest.mark.parametrize("profile", ["strict", "lenient"])
def test_ids_reference_columns_are_strings_or_absent_never_null(profile: str) -> None:
    with Sandbox(seed=4, clock="manual", posts=50, profile=profile) as sb, client_for(sb) as c:
        for entity in ("teams", "players"):
            items = c.get("/ids", params={"entity": entity, "league": "NFL", "reference_id": "nba_id"}).json()["items"]
            assert items and all("nba_id" not in item for item in items)
        nba = c.get("/ids", params={"entity": "teams", "league": "NBA", "reference_id": "nba_id"}).json()["items"]
        assert nba and all(isinstance(item["nba_id"], str) for item in nba)


def test_the_sdks_game_helper_gets_the_game_and_a_wrong_zone_gets_nothing() -> None:
    with Sandbox(seed=7, clock="manual", posts=1500) as sb, \
            SportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
        game = a_game(sb.world)
        teams = f"{game.home.service_id},{game.away.service_id}"
        page = client.posts.for_game(teams, game.start_time, include_pregame=True, id_type="service")
        assert page.items and all({t.service_id for t in p.teams} == {game.home.service_id, game.away.service_id}
                                  for p in page.items)
        # A naive datetime of the local evening, sent as if it were UTC, names another instant.
        local = game.start_time.astimezone(timezone(timedelta(hours=-5))).replace(tzinfo=timezone.utc)
        assert client.posts.for_game(teams, local, id_type="service").items == []
