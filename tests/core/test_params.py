"""Parameter encoding of GET /posts and the checks made before anything is sent."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

from sports_posts import ParameterError, SportsPostsError
from sports_posts._params import encode_posts_params
from tests.runner import Runner

from .conftest import page


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"leagues": "NFL,NBA"}, {"leagues": "NFL,NBA"}),
        ({"leagues": ["NFL", "NBA"]}, {"leagues": "NFL,NBA"}),
        ({"leagues": ("nfl", " nba ")}, {"leagues": "nfl,nba"}),
        ({"league": "NHL"}, {"leagues": "NHL"}),
        ({"league": "NHL", "leagues": ["NHL"]}, {"leagues": "NHL"}),
        ({"sports": ["soccer", "basketball"]}, {"sports": "soccer,basketball"}),
        ({"teams": ["1", 2], "id_type": "service"}, {"teams": "1,2", "id_type": "service"}),
        ({"players": "a,b", "id_type": "provider1_guid"}, {"players": "a,b", "id_type": "provider1_guid"}),
        (
            {"match": ("10", "20"), "start_time": "2024-05-01T19:30:00-04:00", "include_pregame": True},
            {"match": "10,20", "start_time": "2024-05-01T23:30:00Z", "include_pregame": "true"},
        ),
        ({"lat": 40.7128, "lng": -74, "radius_km": 145}, {"lat": "40.7128", "lng": "-74", "radius_km": "145"}),
        ({"media_type": "animated_gif", "aspect_ratio": "portrait"}, {"media_type": "animated_gif", "aspect_ratio": "portrait"}),
        ({"min_score": 7.5, "min_duration": 3000}, {"min_score": "7.5", "min_duration": "3000"}),
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
        ({"leagues": "XFL"}, "XFL"),
        ({"teams": "a", "id_type": "provider9"}, "provider9"),
        ({"media_type": "hologram"}, "hologram"),
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
    ({"bogus": 1}, "bogus"),
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


def test_ids_checks_before_sending(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/ids").respond(200, json={"ok": True, "count": 0, "items": []})
    with pytest.raises(ParameterError) as info:
        runner.run(lambda c: c.ids.teams(""))
    assert info.value.parameter == "league"
    with pytest.raises(ParameterError):
        runner.run(lambda c: c.ids.teams("NBA", lookup=1.5))
    assert route.call_count == 0


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
