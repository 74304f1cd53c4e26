"""Fuzz: whatever a caller passes to ``posts.list``, only a ParameterError escapes before
sending, and whatever is sent is a well-formed request of GET /posts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sports_posts import ParameterError, SportsPosts
from sports_posts._params import _CONTROL, POSTS_PARAMETERS
from sports_posts._request import MAX_URL_LENGTH

from .conftest import API_KEY, BASE_URL, page, post

EXAMPLES = 300


class Recorder:
    """A transport that answers a valid page and records every request it was sent."""

    def __init__(self) -> None:
        self.sent: list[httpx.Request] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        return httpx.Response(200, content=json.dumps(page([post("1")])).encode())


@pytest.fixture(scope="module")
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture(scope="module")
def client(recorder: Recorder) -> Iterator[SportsPosts]:
    http = httpx.Client(transport=httpx.MockTransport(recorder.handler))
    with SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http, max_retries=0) as c:
        yield c
    http.close()


# Printable text, control characters, line separators and lone surrogates.
_chars = st.characters(codec="ascii") | st.sampled_from(["\r", "\n", "\x00", "\x85", "\u2028", "\ud800", ",", "é", "😀"])
_text = st.text(alphabet=_chars, max_size=12)
_long_text = st.builds(lambda c, n: c * n, _chars, st.integers(0, 9000))
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**62), st.floats(), _text,
    _long_text, st.binary(max_size=4),
    st.datetimes(timezones=st.one_of(st.none(), st.timezones())),
)
_arbitrary = st.one_of(
    _scalars,
    st.lists(_scalars, max_size=12),
    st.lists(st.lists(_text, max_size=2), max_size=3),
    st.tuples(_text, _text),
    st.sets(st.integers(), max_size=3),
    st.dictionaries(_text, _text, max_size=2),
)
# Values the specification allows, so that many examples get through to the wire.
_valid: dict[str, st.SearchStrategy[Any]] = {
    "leagues": st.sampled_from(["NFL", "nba,MLB", ["NHL", "EPL"], "ALL", "XFL"]),
    "league": st.sampled_from(["NFL", "NFL,NBA", ["MLS"]]),
    "sports": st.sampled_from(["soccer", ["basketball", "Hockey"], "americanfootball"]),
    "teams": st.lists(st.integers(0, 10**6) | st.sampled_from(["KC", "s:1~l:2~t:3"]), min_size=1, max_size=10),
    "players": st.lists(st.text(alphabet="abcdef0123456789-", min_size=1, max_size=8), min_size=1, max_size=100),
    "id_type": st.sampled_from(["service", "code", "provider9"]),
    "match": st.sampled_from([("1", "2"), "KC,BUF", [3, 4]]),
    "start_time": st.sampled_from(["2024-05-01T19:00:00Z", datetime(2024, 5, 1, tzinfo=timezone.utc)]),
    "include_pregame": st.booleans(),
    "lat": st.floats(-90, 90),
    "lng": st.floats(-180, 180),
    "radius_km": st.integers(1, 4830) | st.floats(0.001, 4830),
    "media_type": st.sampled_from(["video", "photo", "hologram"]),
    "aspect_ratio": st.sampled_from(["landscape", "portrait", "square"]),
    "min_score": st.integers(0, 9) | st.floats(0, 9),
    "min_duration": st.integers(0, 10**6),
    "highlight": st.booleans(),
    "has_player": st.booleans(),
    "custom_sources": st.booleans(),
    "user_location": st.sampled_from(["US", "gb"]),
    "sort": st.sampled_from(["recent", "trending", "top"]),
    "since": st.datetimes(timezones=st.just(timezone.utc)),
    "since_id": st.text(alphabet="0123456789", min_size=1, max_size=20),
    "limit": st.integers(1, 100),
    "page": st.integers(1, 10**6),
}
assert set(_valid) == POSTS_PARAMETERS
_unknown = st.text(alphabet=_chars, min_size=1, max_size=10).filter(lambda k: k not in POSTS_PARAMETERS)
_known = st.sampled_from(sorted(POSTS_PARAMETERS))


# The parameter that a rule of spec 4.1 requires beside another, drawn with it half the time.
_COMPANION = {"teams": "id_type", "players": "id_type", "match": "start_time", "lat": "lng", "lng": "lat"}


@st.composite
def _params(draw: st.DrawFn) -> dict[str, Any]:
    """Up to eight parameters, each valid three times in four; an unknown key one time in ten."""
    keys = draw(st.sets(_known, max_size=8))
    keys |= {_COMPANION[k] for k in keys if k in _COMPANION and draw(st.booleans())}
    params = {k: draw(_valid[k] if draw(st.integers(0, 3)) else _arbitrary) for k in sorted(keys)}
    if draw(st.sampled_from([False] * 9 + [True])):
        params[draw(_unknown)] = draw(_arbitrary)
    return params


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=_params())
def test_only_parameter_error_escapes_before_sending(
    client: SportsPosts, recorder: Recorder, params: dict[str, Any]
) -> None:
    recorder.sent.clear()
    try:
        result = client.posts.list(**params)
    except ParameterError as exc:
        assert recorder.sent == [], "a ParameterError after a request was sent"
        assert exc.parameter
        event(f"refused: {exc.parameter if exc.parameter in POSTS_PARAMETERS else 'unknown'}")
        return
    event("sent")
    assert len(recorder.sent) == 1
    url = recorder.sent[0].url
    assert url.path == "/v1/posts"
    assert len(str(url).encode()) <= MAX_URL_LENGTH
    assert not _CONTROL.search(unquote(str(url)))
    assert set(url.params) <= POSTS_PARAMETERS
    assert [p.id for p in result.items] == ["1"]
