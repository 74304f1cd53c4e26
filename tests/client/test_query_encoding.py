"""The query the SDK writes into the URL string is the one the HTTP library's ``params=``
would have written: same bytes for any value, on either stack, with or without the
caller's own client (whose own ``params`` are still merged)."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sports_posts import SportsPosts
from sports_posts._config import CallOptions, ClientConfig
from sports_posts._request import APICall, build_request
from tests.stacks import STACKS, module

BASE = "https://api.example.test/v1"
# Characters with a meaning in URLs and in form encoding, plus any other text.
VALUES = st.one_of(
    st.text(alphabet=st.sampled_from(list(" %+&=#?/:;,@[]!$'()*~._-\"<>\\^`{|}é漢\U0001f600")), max_size=12),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),  # type: ignore[arg-type]
)
PARAMS = st.dictionaries(st.sampled_from(["leagues", "q", "since_id", "teams", "sort", "a b", "x&y"]), VALUES,
                         max_size=4)


@functools.cache
def _client(stack: str) -> Any:
    return module(stack).Client()  # one per stack: building one makes an SSL context


def _config(stack: str) -> ClientConfig:
    return SportsPosts(api_key="sp_sandbox_k", base_url=BASE, http_client=_client(stack))._config


def _call(params: dict[str, str]) -> APICall[Any]:
    return APICall("GET", "/posts", params, lambda body: body, CallOptions())


@pytest.mark.parametrize("stack", STACKS)
@settings(max_examples=150, deadline=None)
@given(params=PARAMS)
def test_the_query_is_the_librarys_own_encoding(stack: str, params: dict[str, str]) -> None:
    client = _client(stack)
    expected = client.build_request("GET", BASE + "/posts", params=params).url
    ours = build_request(_config(stack), _call(params), client).url
    assert ours == expected and ours.raw_path == expected.raw_path and ours.params == expected.params
    assert str(build_request(_config(stack), _call(params), None).url) == str(expected)


@pytest.mark.parametrize("stack", STACKS)
def test_the_callers_client_params_are_merged_with_the_calls(stack: str) -> None:
    lib = module(stack)
    with lib.Client(params={"tenant": "acme", "leagues": "NBA"}) as client:
        url = build_request(_config(stack), _call({"leagues": "NFL", "limit": "5"}), client).url
    assert dict(url.params) == {"tenant": "acme", "leagues": "NFL", "limit": "5"}
