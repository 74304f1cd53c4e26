"""What the service refuses is refused before sending (spec 4.1 and 7): ``start_time``
without ``match``, parameters of several modes, a ``user_location`` that is not an assigned
ISO 3166-1 alpha-2 code, a near miss of a known ``id_type``; each with its escape hatch
where the vocabulary is open."""

from __future__ import annotations

from typing import Any, Callable

import pytest
import respx
from hypothesis import given
from hypothesis import strategies as st

import sports_posts as sp
from sports_posts._params import COUNTRIES, ID_TYPES, Unchecked, encode_posts_params
from sports_posts._vocabulary import near_id_type
from tests.runner import Runner

from .conftest import page

START = "2024-05-01T19:00:00Z"

REFUSED = [
    ({"start_time": START}, "start_time", "start_time requires match"),
    ({"start_time": START, "leagues": "NFL"}, "start_time", "use since"),
    ({"teams": "KC", "players": "p1", "id_type": "service"}, "players", "team and player modes"),
    ({"teams": "KC", "id_type": "service", "lat": 39.0, "lng": -94.5}, "lat", "teams, lat, lng"),
    ({"players": "p1", "id_type": "service", "lat": 1.0, "lng": 2.0}, "lat", "player and nearby"),
    ({"teams": "KC", "id_type": "code", "match": "KC,BUF", "start_time": START}, "match", "team and game"),
    ({"lat": 1.0, "lng": 2.0, "match": "1,2", "start_time": START}, "match", "nearby and game"),
    ({"user_location": "XX"}, "user_location", "not an assigned ISO 3166-1"),
    ({"user_location": "zz"}, "user_location", "Unchecked('zz')"),
    ({"user_location": "UK"}, "user_location", "did you mean 'GB'?"),
    ({"user_location": "el"}, "user_location", "did you mean 'GR'?"),
    ({"user_location": "USA"}, "user_location", "two letters"),
    ({"user_location": 840}, "user_location", "non-empty string"),
    ({"teams": "KC", "id_type": "servce"}, "id_type", "did you mean 'service'?"),
    ({"teams": "KC", "id_type": "Service"}, "id_type", "did you mean 'service'?"),
    ({"players": "p", "id_type": "provider1_giud"}, "id_type", "did you mean 'provider1_guid'?"),
    ({"players": "p", "id_type": "provdier2"}, "id_type", "did you mean 'provider2'?"),
    ({"teams": "KC", "id_type": "cdoe"}, "id_type", "did you mean 'code'?"),
]


@pytest.mark.parametrize(("params", "parameter", "says"), REFUSED)
def test_what_the_service_refuses_is_refused_before_sending(
    runner: Runner, api: respx.MockRouter, params: dict[str, Any], parameter: str, says: str
) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    with pytest.raises(sp.ParameterError) as info:
        runner.run(lambda c: c.posts.list(**params))
    assert info.value.parameter == parameter
    assert says in str(info.value)
    assert route.call_count == 0


@pytest.mark.parametrize(
    ("params", "sent"),
    [
        ({"teams": "KC", "id_type": Unchecked("servce")}, {"teams": "KC", "id_type": "servce"}),
        ({"teams": "KC", "id_type": "provider9"}, {"teams": "KC", "id_type": "provider9"}),
        ({"teams": "KC", "id_type": "provider4"}, {"teams": "KC", "id_type": "provider4"}),
        ({"teams": "KC", "id_type": "espn"}, {"teams": "KC", "id_type": "espn"}),
        ({"players": "p", "id_type": "provider1_guid"}, {"players": "p", "id_type": "provider1_guid"}),
        ({"user_location": "gb"}, {"user_location": "GB"}),
        ({"user_location": Unchecked("xk")}, {"user_location": "XK"}),
        ({"match": "1,2", "start_time": START, "leagues": "NFL"},
         {"leagues": "NFL", "match": "1,2", "start_time": START}),
        ({"teams": "KC", "id_type": "code", "leagues": "NFL", "sort": "top"},
         {"leagues": "NFL", "teams": "KC", "id_type": "code", "sort": "top"}),
    ],
)
def test_what_the_service_takes_is_sent(
    runner: Runner, api: respx.MockRouter, params: dict[str, Any], sent: dict[str, str]
) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    runner.run(lambda c: c.posts.list(**params))
    assert route.call_count == 1
    assert dict(route.calls.last.request.url.params) == sent


def test_every_assigned_country_code_passes_in_either_case() -> None:
    assert len(COUNTRIES) == 249
    for code in COUNTRIES:
        for written in (code, code.lower()):
            assert encode_posts_params({"user_location": written}) == {"user_location": code}


@given(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=2))
def test_a_two_letter_code_passes_exactly_when_it_is_assigned(code: str) -> None:
    try:
        encode_posts_params({"user_location": code})
    except sp.ParameterError as exc:
        assert code not in COUNTRIES and f"Unchecked({code!r})" in str(exc)
    else:
        assert code in COUNTRIES
    assert encode_posts_params({"user_location": Unchecked(code)}) == {"user_location": code}


@given(st.sampled_from(ID_TYPES), st.integers(0, 20), st.sampled_from("abcdefghijklmnopqrstuvwxyz_"))
def test_one_slip_on_a_known_id_type_is_caught(known: str, at: int, letter: str) -> None:
    at = at % len(known)
    for typo in (known[:at] + known[at + 1:], known[:at] + letter + known[at + 1:],
                 known[:at] + letter + known[at:]):
        if typo in ID_TYPES or not typo:
            continue
        assert near_id_type(typo) is not None, typo
        with pytest.raises(sp.ParameterError, match="did you mean"):
            encode_posts_params({"teams": "1", "id_type": typo})
        assert encode_posts_params({"teams": "1", "id_type": Unchecked(typo)})["id_type"] == typo


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=16))
def test_an_id_type_far_from_every_known_one_passes(value: str) -> None:
    guess = near_id_type(value)
    if guess is None:
        assert encode_posts_params({"teams": "1", "id_type": value})["id_type"] == value
    else:
        with pytest.raises(sp.ParameterError, match=f"did you mean {guess!r}"):
            encode_posts_params({"teams": "1", "id_type": value})


def test_the_known_id_types_pass_and_the_mode_helpers_check_too(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    def by_team(id_type: str) -> Callable[[Any], Any]:
        return lambda c: c.posts.by_team("KC", id_type=id_type)

    for id_type in ID_TYPES:
        assert near_id_type(id_type) is None
        runner.run(by_team(id_type))
    assert route.call_count == len(ID_TYPES)
    with pytest.raises(sp.ParameterError, match="did you mean 'service'"):
        runner.run(lambda c: c.posts.by_team("KC", id_type="srevice"))
    assert route.call_count == len(ID_TYPES)


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"teams": "KC", "limit": 0}, "id_type"),  # a mode rule before a range
        ({"lat": 1.0, "limit": 500, "page": 0}, "lng"),
        ({"limit": 0, "page": 0}, "limit"),  # ranges in the table's order
        ({"min_score": 12, "limit": 0}, "min_score"),
        ({"leagues": "NFX", "limit": 0}, "limit"),  # the rules before each value's encoding
        ({"leagues": ["NFL", "NFX"]}, "leagues"),
    ],
)
def test_of_several_mistakes_the_first_rule_broken_is_named(params: dict[str, Any], named: str) -> None:
    with pytest.raises(sp.ParameterError) as caught:
        encode_posts_params(params)
    assert caught.value.parameter == named


def test_a_sequence_of_league_codes_checks_each_unless_unchecked() -> None:
    assert encode_posts_params({"leagues": ["nfl", Unchecked("XFL")]}) == {"leagues": "nfl,XFL"}
    with pytest.raises(sp.ParameterError, match="'XFL' is not a league code"):
        encode_posts_params({"leagues": [Unchecked("NFX"), "XFL"]})
