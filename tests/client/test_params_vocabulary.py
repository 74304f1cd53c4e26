"""League codes and media types are checked before anything is sent (a typo would
be a billed 400), with a "did you mean" for a near miss and ``Unchecked`` to send a value the
SDK does not know yet."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import sports_posts as sp
from sports_posts._params import (
    LEAGUES,
    MEDIA_TYPES,
    Unchecked,
    encode_ids_params,
    encode_posts_params,
)

from .conftest import API_KEY, BASE_URL, page, post


def _never(request: httpx.Request) -> httpx.Response:
    raise AssertionError("a request was sent")


@pytest.mark.parametrize(
    ("params", "guess"),
    [
        ({"leagues": "NFLL"}, "'NFL'"),
        ({"leagues": "nba,NHLL"}, "'NHL'"),
        ({"league": ["NFL", "EPLL"]}, "'EPL'"),
        ({"media_type": "vidoe"}, "'video'"),
        ({"media_type": "Video"}, "'video'"),
        ({"media_type": "animated-gif"}, "'animated_gif'"),
    ],
)
def test_a_near_miss_is_refused_with_what_it_probably_meant(params: dict[str, Any], guess: str) -> None:
    name = next(iter(params))
    with pytest.raises(sp.ParameterError) as info:
        encode_posts_params(params)
    assert info.value.parameter == name
    assert f"did you mean {guess}?" in str(info.value) and "Unchecked(" in str(info.value)


@pytest.mark.parametrize("params", [{"leagues": "FOO"}, {"media_type": "mp4"}, {"leagues": ["NFL", "XFL"]}])
def test_an_unknown_value_costs_nothing(params: dict[str, Any]) -> None:
    http = httpx.Client(transport=httpx.MockTransport(_never))
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http) as client:
        with pytest.raises(sp.ParameterError, match="the SDK knows"):
            client.posts.list(**params)
        assert client.calls == 0
    http.close()


def test_every_known_value_passes_in_any_case() -> None:
    for code in LEAGUES:
        for written in (code, code.lower(), code.title()):
            assert encode_posts_params({"leagues": written}) == {"leagues": written}
    assert encode_posts_params({"leagues": list(LEAGUES)})["leagues"] == ",".join(LEAGUES)
    assert set(MEDIA_TYPES) == {"image", "photo", "video", "gif", "animated_gif", "none"}
    for media_type in MEDIA_TYPES:
        assert encode_posts_params({"media_type": media_type}) == {"media_type": media_type}


def test_unchecked_sends_a_value_the_sdk_does_not_know() -> None:
    http_calls: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        http_calls.append(request)
        return httpx.Response(200, json=page([post("1")]))

    http = httpx.Client(transport=httpx.MockTransport(answer))
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http) as client:
        client.posts.list(leagues=["NFL", sp.Unchecked("XFL")], media_type=sp.Unchecked("hologram"))
        client.posts.list(leagues=sp.Unchecked("XFL,USFL"))
    http.close()
    assert [dict(r.url.params) for r in http_calls] == [
        {"leagues": "NFL,XFL", "media_type": "hologram"}, {"leagues": "XFL,USFL"}]


def test_unchecked_skips_only_the_vocabulary() -> None:
    assert repr(Unchecked("XFL")) == "Unchecked('XFL')" and Unchecked("XFL") == "XFL"
    for params in ({"leagues": Unchecked("XFL\r\nX-Injected: 1")}, {"media_type": Unchecked("")},
                   {"leagues": ["NFL", Unchecked("A,B")]}):
        with pytest.raises(sp.ParameterError):
            encode_posts_params(params)


def test_the_ids_league_is_checked_too() -> None:
    with pytest.raises(sp.ParameterError, match="did you mean 'NBA'") as info:
        encode_ids_params("teams", "NBAA", {})
    assert info.value.parameter == "league"
    with pytest.raises(sp.ParameterError, match="one league code"):
        encode_ids_params("teams", "NBA,NFL", {})
    assert encode_ids_params("teams", "nba", {})["league"] == "nba"
    assert encode_ids_params("teams", Unchecked("XFL"), {})["league"] == "XFL"
