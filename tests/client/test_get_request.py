"""``library_request`` parses the address of a GET once and sets a call's query on a copy of that
parse: the request it builds must be the library's own ``Request("GET", ...)`` in every
detail, on either stack, and where it cannot be it must build that request the full way."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sports_posts import _http
from sports_posts._http import _MAX_PARSED, _PARSED, PLAIN_QUERY, library_request, load_stack
from tests.stacks import STACKS, module

ADDRESSES = st.builds(
    lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
    st.sampled_from(["http", "https"]),
    st.sampled_from(["127.0.0.1", "localhost", "api.example.test", "[::1]", "xn--bcher-kva.example", "bücher.example"]),
    st.sampled_from(["", ":80", ":443", ":8443"]),
    st.sampled_from(["/v1", "/v1/posts", "/base/v1/ids", "/v1/account/x-ids", "/a%20b/v1/posts", "/ü/v1"]),
)
PLAIN = st.text(alphabet=st.sampled_from(list("abzAZ09_.~-")), min_size=1, max_size=6)
QUERIES = st.one_of(
    st.just(""),
    st.lists(st.tuples(PLAIN, PLAIN), min_size=1, max_size=4).map(lambda kv: "&".join(f"{k}={v}" for k, v in kv)),
    st.lists(st.sampled_from(["a", "=", "&", "+", "%2C", "%C3%A9", "%2f", "%", "%zz", " ", "/", "?", "#", "é", ","]),
             max_size=8).map("".join),  # escapes kept as they are; the rest is parsed whole
)
HEADERS = st.dictionaries(
    st.sampled_from(["Authorization", "Accept", "X-Tenant", "User-Agent", "Host", "host"]),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=8),
    max_size=3,
)


def _same(ours: Any, theirs: Any) -> None:
    assert type(ours) is type(theirs)
    assert ours.method == theirs.method == "GET"
    assert ours.url == theirs.url and str(ours.url) == str(theirs.url)
    assert ours.url.raw_path == theirs.url.raw_path and ours.url.netloc == theirs.url.netloc
    assert ours.url.params == theirs.url.params and ours.url.query == theirs.url.query
    assert ours.headers.raw == theirs.headers.raw, "the same headers in the same order, Host first"
    assert ours.content == theirs.content == b"" and type(ours.stream) is type(theirs.stream)
    assert ours.extensions == theirs.extensions


@pytest.mark.parametrize("stack", STACKS)
@settings(max_examples=150, deadline=None)
@given(address=ADDRESSES, query=QUERIES, headers=HEADERS)
def test_a_get_is_the_librarys_own_request(stack: str, address: str, query: str, headers: dict[str, str]) -> None:
    lib: Any = module(stack)
    given_headers = lib.Headers(headers)
    extensions = {"timeout": {"connect": 1.0, "read": 2.0, "write": 3.0, "pool": 4.0}}
    theirs = lib.Request("GET", f"{address}?{query}" if query else address, headers=given_headers,
                         extensions=extensions)
    assert _http._quick(stack), "the installed library takes the quick path"
    for _ in range(2):  # parsed, then from the kept parse
        _same(library_request(load_stack(stack), "GET", address, query, given_headers, extensions), theirs)
    if PLAIN_QUERY.fullmatch(query):  # the quick path itself, which _quick's probes guard
        _same(_http._get(lib, lib.URL(address), query, given_headers, extensions), theirs)


@pytest.mark.parametrize("stack", STACKS)
def test_requests_built_from_one_parse_are_independent(stack: str) -> None:
    lib: Any = module(stack)
    headers = lib.Headers({"Authorization": "Bearer k"})
    first = library_request(load_stack(stack), "GET", "https://api.example.test/v1/posts", "page=1", headers, {})
    first.headers["X-Signed"] = "by-a-hook"
    first.url = first.url.copy_with(query=b"page=9")
    second = library_request(load_stack(stack), "GET", "https://api.example.test/v1/posts", "page=2", headers, {})
    assert "x-signed" not in second.headers and "x-signed" not in headers
    assert str(second.url) == "https://api.example.test/v1/posts?page=2"
    assert str(library_request(load_stack(stack), "GET", "https://api.example.test/v1/posts", "", headers, {}).url) == (
        "https://api.example.test/v1/posts"
    )


def test_the_kept_parses_stay_bounded() -> None:
    stack = load_stack("httpx")
    headers = module("httpx").Headers()
    for i in range(_MAX_PARSED + 10):
        library_request(stack, "GET", f"https://h{i}.example.test/v1/posts", "a=1", headers, {})
        assert len(_PARSED) <= _MAX_PARSED


def test_a_library_whose_url_changed_shape_takes_the_full_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_quick`` compares a request built from a kept parse with the library's own on
    probes: a release whose URL holds its parse some other way makes them differ, or the
    copy fail, and every request is then parsed whole."""
    check = _http._quick.__wrapped__
    assert check("httpx") is True

    def no_such_attribute(*args: Any) -> Any:
        raise AttributeError("_uri_reference")

    monkeypatch.setattr(_http, "_get", no_such_attribute)
    assert check("httpx") is False

    def a_wrong_url(lib: Any, base: Any, query: str, headers: Any, extensions: Any) -> Any:
        return lib.Request("GET", str(base) + "?" + query + "x", headers=headers, extensions=extensions)

    monkeypatch.setattr(_http, "_get", a_wrong_url)
    assert check("httpx") is False

    monkeypatch.setattr(_http, "_quick", lambda name: False)
    request = library_request(load_stack("httpx"), "GET", "https://api.example.test/v1/posts", "a=1",
                              module("httpx").Headers(), {})
    assert str(request.url) == "https://api.example.test/v1/posts?a=1" and request.headers["host"] == "api.example.test"


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("method", ["POST", "DELETE", "HEAD", "get"])
def test_another_method_is_the_librarys_own_request(stack: str, method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a GET is built from a kept parse (a POST gets ``Content-Length: 0`` from
    ``Request()``): any other method is the library's own request, built the full way."""
    lib: Any = module(stack)
    headers = lib.Headers({"Authorization": "Bearer k"})

    def not_for_this_method(*args: Any) -> Any:
        raise AssertionError("built from a kept parse")

    monkeypatch.setattr(_http, "_get", not_for_this_method)
    ours = library_request(load_stack(stack), method, "https://api.example.test/v1/posts", "a=1", headers, {})
    theirs = lib.Request(method, "https://api.example.test/v1/posts?a=1", headers=headers, extensions={})
    assert ours.method == theirs.method and ours.url == theirs.url
    assert ours.headers.raw == theirs.headers.raw and ours.content == theirs.content == b""


@pytest.mark.parametrize("query", ["a=b&c=d", "leagues=NFL%2CNBA", "q=a+b", "x=~._-", ""])
def test_what_counts_as_a_plain_query(query: str) -> None:
    assert PLAIN_QUERY.fullmatch(query)
    for bad in (",", "%2", "%2c", "%zz", " ", "é", "#", "?", "/"):
        assert not PLAIN_QUERY.fullmatch(query + bad)
