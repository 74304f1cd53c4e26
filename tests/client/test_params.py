"""Parameter encoding of GET /posts and the checks made before anything is sent."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

import sports_posts
from sports_posts import (
    BadRequestError,
    InvalidParameterError,
    InvalidRequestError,
    ParameterError,
    SportsPostsError,
)
from sports_posts._params import Unchecked, encode_posts_params
from sports_posts._request import MAX_URL_LENGTH
from tests.runner import Runner

from .conftest import BASE_URL, page


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"leagues": "NFL,NBA"}, {"leagues": "NFL,NBA"}),
        ({"leagues": ["NFL", "NBA"]}, {"leagues": "NFL,NBA"}),
        ({"leagues": ("nfl", " nba ")}, {"leagues": "nfl,nba"}),
        ({"league": "NHL"}, {"league": "NHL"}),
        ({"league": "NFL,NBA"}, {"league": "NFL,NBA"}),
        ({"leagues": "NFL,NBA"}, {"leagues": "NFL,NBA"}),
        ({"sports": ["soccer", "basketball"]}, {"sports": "soccer,basketball"}),
        ({"sports": "Soccer,AmericanFootball"}, {"sports": "Soccer,AmericanFootball"}),
        ({"teams": ["1", 2], "id_type": "service"}, {"teams": "1,2", "id_type": "service"}),
        ({"players": "a,b", "id_type": "provider1_guid"}, {"players": "a,b", "id_type": "provider1_guid"}),
        (
            {"match": ("10", "20"), "start_time": "2024-05-01T19:30:00-04:00", "include_pregame": True},
            {"match": "10,20", "start_time": "2024-05-01T23:30:00Z", "include_pregame": "true"},
        ),
        ({"lat": 40.7128, "lng": -74, "radius_km": 145}, {"lat": "40.7128", "lng": "-74", "radius_km": "145"}),
        ({"lat": 40.0, "lng": -74.0, "radius_km": 50.0}, {"lat": "40", "lng": "-74", "radius_km": "50"}),
        ({"lat": 0, "lng": 0, "radius_km": 12.5}, {"lat": "0", "lng": "0", "radius_km": "12.5"}),
        ({"media_type": "animated_gif", "aspect_ratio": "portrait"}, {"media_type": "animated_gif", "aspect_ratio": "portrait"}),
        ({"min_score": 7.5, "min_duration": 3000}, {"min_score": "7.5", "min_duration": "3000"}),
        ({"min_score": 7.0}, {"min_score": "7"}),
        ({"highlight": False, "has_player": True, "custom_sources": False},
         {"highlight": "false", "has_player": "true", "custom_sources": "false"}),
        ({"user_location": "gb"}, {"user_location": "GB"}),
        ({"sort": "top", "limit": 100, "page": 3}, {"sort": "top", "limit": "100", "page": "3"}),
        ({"since": datetime(2024, 5, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))}, {"since": "2024-05-01T12:00:00Z"}),
        ({"since": datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)}, {"since": "2024-05-01T12:00:00.123456Z"}),
        ({"since": "2024-05-01T12:00:00Z", "since_id": "1789"}, {"since": "2024-05-01T12:00:00Z", "since_id": "1789"}),
        ({"leagues": None, "limit": None, "highlight": None}, {}),
    ],
)
def test_parameters_encode_as_the_wire_expects(params: dict[str, Any], expected: dict[str, str]) -> None:
    assert encode_posts_params(params) == expected


@pytest.mark.parametrize(
    ("params", "value"),
    [
        ({"leagues": Unchecked("XFL")}, "XFL"),
        ({"teams": "a", "id_type": "provider9"}, "provider9"),
        ({"media_type": Unchecked("hologram")}, "hologram"),
        ({"league": Unchecked("XFL")}, "XFL"),
    ],
)
def test_open_vocabularies_pass_through(params: dict[str, Any], value: str) -> None:
    assert value in encode_posts_params(params).values()


BAD_PARAMS = [
    ({"teams": [str(i) for i in range(11)], "id_type": "service"}, "teams"),
    ({"players": [str(i) for i in range(101)], "id_type": "service"}, "players"),
    ({"teams": "1"}, "id_type"),
    ({"players": "1"}, "id_type"),
    ({"match": "1", "start_time": "2024-05-01T00:00:00Z"}, "match"),
    ({"match": ["1", "2", "3"], "start_time": "2024-05-01T00:00:00Z"}, "match"),
    ({"match": "1,2"}, "start_time"),
    ({"lat": 1.0}, "lng"),
    ({"lng": 1.0}, "lat"),
    ({"lat": 91.0, "lng": 0.0}, "lat"),
    ({"min_score": -0.1}, "min_score"),
    ({"min_score": 9.5}, "min_score"),
    ({"radius_km": 0}, "radius_km"),
    ({"radius_km": 4830.5}, "radius_km"),
    ({"limit": 0}, "limit"),
    ({"limit": 101}, "limit"),
    ({"page": 0}, "page"),
    ({"user_location": "USA"}, "user_location"),
    ({"user_location": "1A"}, "user_location"),
    ({"since": datetime(2024, 5, 1)}, "since"),
    ({"since": "2024-05-01T00:00:00"}, "since"),
    ({"start_time": "yesterday", "match": "1,2"}, "start_time"),
    ({"since": 1714560000}, "since"),
    ({"limit": "20"}, "limit"),
    ({"limit": True}, "limit"),
    ({"highlight": "yes"}, "highlight"),
    ({"lat": float("nan"), "lng": 0}, "lat"),
    ({"leagues": 5}, "leagues"),
    ({"leagues": ""}, "leagues"),
    ({"leagues": ["NFL", None]}, "leagues"),
    ({"league": "NFL", "leagues": "NBA"}, "league"),
    ({"league": "NFL", "leagues": "NFL"}, "league"),
    ({"bogus": 1}, "bogus"),
    # closed vocabularies of spec 4.1
    ({"sort": "newest"}, "sort"),
    ({"sort": "Recent"}, "sort"),
    ({"aspect_ratio": "wide"}, "aspect_ratio"),
    ({"sports": "football,curling"}, "sports"),
    ({"sports": ["NFL"]}, "sports"),
    ({"include_pregame": "true", "match": "1,2", "start_time": "2024-05-01T00:00:00Z"}, "include_pregame"),
    ({"custom_sources": 1}, "custom_sources"),
    # careless callers: control characters, commas inside items, non-string items, sizes
    ({"leagues": "NFL\r\nX-Injected: 1"}, "leagues"),
    ({"since_id": "123\n"}, "since_id"),
    ({"id_type": "service\x00", "teams": "1"}, "id_type"),
    ({"media_type": "video\u2028"}, "media_type"),
    ({"user_location": "U\tS"}, "user_location"),
    ({"leagues": ["NFL", "NBA,MLB"]}, "leagues"),
    ({"teams": ["1", "2,3"], "id_type": "service"}, "teams"),
    ({"leagues": ["NFL\n"]}, "leagues"),
    ({"leagues": ["NFL", True]}, "leagues"),
    ({"leagues": ["NFL", 1.5]}, "leagues"),
    ({"leagues": [["NFL"]]}, "leagues"),
    ({"leagues": [b"NFL"]}, "leagues"),
    ({"leagues": {"NFL"}}, "leagues"),
    ({"players": ["\ud800"], "id_type": "service"}, "players"),
    ({"page": 2**64}, "page"),
    ({"min_duration": 10**5000}, "min_duration"),
    ({"lat": 10**400, "lng": 0}, "lat"),
    ({"players": ["p" * 8200], "id_type": "service"}, "players"),
    ({"players": ["p" * 80] * 100, "id_type": "service"}, "players"),
    ({"since_id": "9" * 9000}, "since_id"),
]


@pytest.mark.parametrize(("params", "parameter"), BAD_PARAMS)
def test_bad_parameters_raise_before_any_request(
    runner: Runner, api: respx.MockRouter, params: dict[str, Any], parameter: str
) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    with pytest.raises(ParameterError) as info:
        runner.run(lambda c: c.posts.list(**params))
    assert info.value.parameter == parameter
    assert isinstance(info.value, ValueError)
    assert parameter in str(info.value)
    assert route.call_count == 0


def test_mode_helper_checks_too(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    with pytest.raises(ParameterError):
        runner.run(lambda c: c.posts.nearby(0.0, 0.0, radius_km=5000))
    assert route.call_count == 0


IDS_BAD = [
    (lambda c: c.ids.teams(""), "league"),
    (lambda c: c.ids.teams("  "), "league"),
    (lambda c: c.ids.teams(None), "league"),
    (lambda c: c.ids.teams("NBA\r\n"), "league"),
    (lambda c: c.ids.teams("NBA", lookup=1.5), "lookup"),
    (lambda c: c.ids.teams("NBA", lookup="1\n2"), "lookup"),
    (lambda c: c.ids.teams("NBA", lookup=2**70), "lookup"),
    (lambda c: c.ids.teams("NBA", reference_id="nba_id\x00"), "reference_id"),
    (lambda c: c.ids.teams("NBA", lookup="x" * 9000), "lookup"),
    (lambda c: c.ids.list("", "NBA"), "entity"),
    (lambda c: c.ids.list("players\t", "NBA"), "entity"),
    (lambda c: c.ids.list(["teams"], "NBA"), "entity"),
    (lambda c: c.ids.list("teams", "NBA", bogus=1), "bogus"),
]


@pytest.mark.parametrize(("call", "parameter"), IDS_BAD)
def test_ids_checks_before_sending(runner: Runner, api: respx.MockRouter, call: Any, parameter: str) -> None:
    route = api.get("/ids").respond(200, json={"ok": True, "count": 0, "items": []})
    with pytest.raises(ParameterError) as info:
        runner.run(call)
    assert info.value.parameter == parameter
    assert route.call_count == 0


def test_league_and_leagues_go_on_the_wire_under_the_name_the_caller_used(
    runner: Runner, api: respx.MockRouter
) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    runner.run(lambda c: c.posts.list(league="NFL,NBA"))
    runner.run(lambda c: c.posts.list(leagues=["NFL", "NBA"]))
    assert [dict(call.request.url.params) for call in route.calls] == [
        {"league": "NFL,NBA"}, {"leagues": "NFL,NBA"}
    ]


def test_whole_radius_goes_on_the_wire_without_a_decimal_point(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    runner.run(lambda c: c.posts.nearby(40.5, -74.0, radius_km=50.0))
    assert route.calls[0].request.url.query == b"lat=40.5&lng=-74&radius_km=50"


def test_the_url_limit_counts_the_whole_url(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    prefix = len(f"{BASE_URL}/posts?since_id=")
    runner.run(lambda c: c.posts.list(since_id="9" * (MAX_URL_LENGTH - prefix)))  # exactly at the limit
    assert len(str(route.calls[0].request.url)) == MAX_URL_LENGTH
    with pytest.raises(ParameterError, match="8,193 bytes.*since_id") as info:
        runner.run(lambda c: c.posts.list(since_id="9" * (MAX_URL_LENGTH - prefix + 1)))
    assert info.value.parameter == "since_id"
    with pytest.raises(ParameterError):  # a longer base URL leaves less room for the query
        runner.run(
            lambda c: c.posts.list(since_id="9" * (MAX_URL_LENGTH - prefix)),
            base_url=BASE_URL.replace("api.test", "api.example.test"),
        )
    assert route.call_count == 1


def test_one_class_catches_a_refused_parameter_on_either_side(runner: Runner, api: respx.MockRouter) -> None:
    api.get("/posts").respond(
        400, json={"ok": False, "error_code": "INVALID_PARAMETER", "error_message": "user_location: ZZ"}
    )
    caught = []
    for call in (lambda c: c.posts.list(sort="newest"), lambda c: c.posts.list(user_location=sports_posts.Unchecked("ZZ"))):
        try:
            runner.run(call)
        except InvalidRequestError as exc:
            caught.append(type(exc))
    assert caught == [ParameterError, InvalidParameterError]
    assert issubclass(ParameterError, ValueError)
    assert issubclass(InvalidParameterError, BadRequestError)
    assert "InvalidRequestError" in sports_posts.__all__


_values = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
    st.lists(st.one_of(st.text(max_size=4), st.integers(), st.none()), max_size=12),
    st.datetimes(timezones=st.one_of(st.none(), st.timezones())), st.binary(max_size=4),
)
_names = st.sampled_from(
    ["leagues", "league", "sports", "teams", "players", "id_type", "match", "start_time",
     "include_pregame", "lat", "lng", "radius_km", "media_type", "aspect_ratio", "min_score",
     "min_duration", "highlight", "has_player", "custom_sources", "user_location", "sort", "since",
     "since_id", "limit", "page", "unknown"]
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_names, _values, max_size=6))
def test_any_arguments_encode_or_raise_parameter_error(params: dict[str, Any]) -> None:
    try:
        query = encode_posts_params(params)
    except SportsPostsError as exc:
        assert isinstance(exc, ParameterError)
        return
    assert all(isinstance(v, str) for v in query.values())
    httpx.Request("GET", "https://api.test/v1/posts", params=query)  # encodable on the wire


SELF_KEYWORD = [
    lambda c: c.posts.list(**{"self": 1}),
    lambda c: c.posts.trending(**{"self": 1}),
    lambda c: c.posts.by_league("NFL", **{"self": 1}),
    lambda c: c.posts.by_sport("soccer", **{"self": 1}),
    lambda c: c.posts.by_team("1", id_type="service", **{"self": 1}),
    lambda c: c.posts.by_player("1", id_type="service", **{"self": 1}),
    lambda c: c.posts.nearby(1, 2, **{"self": 1}),
    lambda c: c.posts.for_game("1,2", "2024-05-01T00:00:00Z", **{"self": 1}),
    lambda c: c.ids.teams("NFL", **{"self": 1}),
    lambda c: c.ids.list("players", "NFL", **{"self": 1}),
    lambda c: c.account.information(**{"self": 1}),
    lambda c: c.account.x_ids(**{"self": 1}),
    lambda c: c.posts.poll(**{"self": 1}),
]


@pytest.mark.parametrize("call", SELF_KEYWORD)
def test_a_keyword_named_self_is_an_unknown_parameter_not_a_type_error(
    runner: Runner, api: respx.MockRouter, call: Any
) -> None:
    """Found by the parameter fuzz: ``**{"self": ...}`` collided with the bound instance."""
    route = api.get(url__regex=".*").respond(200, json=page([]))
    with pytest.raises(ParameterError) as info:
        runner.run(call)
    assert info.value.parameter == "self"
    assert route.call_count == 0


def test_every_public_method_that_takes_keywords_binds_self_positionally() -> None:
    """So that no keyword a caller passes can collide with the instance (the test above, for new methods)."""
    import inspect

    from sports_posts.resources import account, ids, posts

    checked = 0
    for module in (account, ids, posts):
        for cls in vars(module).values():
            if not (inspect.isclass(cls) and cls.__module__ == module.__name__):
                continue
            for name, method in vars(cls).items():
                if name.startswith("_") or not inspect.isfunction(method):
                    continue
                parameters = list(inspect.signature(method).parameters.values())
                if any(p.kind is p.VAR_KEYWORD for p in parameters):
                    assert parameters[0].kind is parameters[0].POSITIONAL_ONLY, f"{cls.__name__}.{name}"
                    checked += 1
    assert checked >= 16
