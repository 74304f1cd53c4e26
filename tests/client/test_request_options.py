"""Per-call options (``extra_headers``, ``extra_query``, ``timeout``) on every method,
the defaults of an injected httpx client merged into each request, and
``with_raw_response`` for status and headers on success."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

import sports_posts as sp
from sports_posts import _endpoints
from sports_posts._config import _SDK_HEADERS, ClientConfig
from sports_posts._request import build_request
from tests.runner import Runner
from tests.stacks import STACKS, loopback_tls, module

from .bodies import INFO
from .conftest import API_KEY, BASE_URL, page, post

TEAMS = {"ok": True, "count": 0, "items": []}
CONFIG = ClientConfig.resolve(
    api_key=API_KEY, base_url=BASE_URL, auth_scheme="bearer", timeout=5.0, max_retries=0, default_headers=None
)
OPTIONS: dict[str, Any] = {"extra_headers": {"X-Trace": "t-1"}, "extra_query": {"debug": "1"}, "timeout": 3.0}


def _sent_with_options(request: httpx.Request) -> None:
    assert request.headers["x-trace"] == "t-1"
    assert request.url.params["debug"] == "1"
    assert request.extensions["timeout"]["read"] == 3.0
    assert request.headers["authorization"] == f"Bearer {API_KEY}"


@pytest.mark.parametrize(
    ("path", "body", "method"),
    [
        ("/posts", page([post("1")]), lambda c: c.posts.list(leagues="NFL", **OPTIONS)),
        ("/posts", page([post("1")]), lambda c: c.posts.by_team(["1"], id_type="service", **OPTIONS)),
        ("/posts", page([post("1")]), lambda c: c.posts.trending(**OPTIONS)),
        ("/account/information", INFO, lambda c: c.account.information(**OPTIONS)),
        ("/account/x-ids", {"ids_to_delete": [], "as_of": "2024-05-01T00:00:00Z"}, lambda c: c.account.x_ids(**OPTIONS)),
        ("/ids", TEAMS, lambda c: c.ids.teams("NFL", **OPTIONS)),
        ("/ids", {"ok": True, "count": 0, "items": []}, lambda c: c.ids.list("players", "NFL", **OPTIONS)),
    ],
)
def test_every_method_takes_per_call_options(
    runner: Runner, api: respx.MockRouter, path: str, body: Any, method: Any
) -> None:
    route = api.get(path).respond(200, json=body)
    runner.run(method)
    assert route.call_count == 1
    _sent_with_options(route.calls[0].request)


def test_per_call_options_stay_with_the_next_pages(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/posts")
    route.side_effect = [
        httpx.Response(200, json=page([post("1")], has_next=True)),
        httpx.Response(200, json=page([post("2")], page=2)),
    ]
    posts = runner.run(lambda c: c.posts.list(leagues="NFL", **OPTIONS))
    assert [p.id for p in posts] == ["1", "2"]
    for call in route.calls:
        _sent_with_options(call.request)
    assert route.calls[1].request.url.params["page"] == "2"


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"extra_headers": {"Authorization": "Bearer someone-else"}}, "extra_headers"),
        ({"extra_headers": {"X-Trace": "a\r\nX-Evil: 1"}}, "extra_headers"),
        ({"extra_query": {"debug": "1\r\nX-Evil: 1"}}, "extra_query"),
        ({"extra_query": {"debug": None}}, "extra_query"),
        ({"extra_query": "debug=1"}, "extra_query"),
        ({"timeout": "3"}, "timeout"),
        ({"timeout": -3}, "timeout"),
        ({"bogus": 1, "extra_headers": {"X-Trace": "1"}}, "bogus"),
    ],
)
def test_bad_per_call_options_are_refused_before_sending(
    runner: Runner, api: respx.MockRouter, options: dict[str, Any], parameter: str
) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    info_route = api.get("/account/information").respond(200, json=INFO)
    for method in (lambda c: c.posts.list(leagues="NFL", **options), lambda c: c.account.information(**options)):
        with pytest.raises(sp.ParameterError) as info:
            runner.run(method)
        assert info.value.parameter == parameter
    assert route.call_count == 0 and info_route.call_count == 0


# ---------------------------------------------------------------------------------------
# An injected httpx client


def _http_client(kind: str, **kwargs: Any) -> Any:
    kwargs.setdefault("verify", loopback_tls())
    return httpx.Client(**kwargs) if kind == "sync" else httpx.AsyncClient(**kwargs)


def test_an_injected_clients_headers_params_and_cookies_are_sent(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    http = _http_client(
        runner.kind, headers={"X-Tenant": "acme"}, params={"tenant": "acme"}, cookies={"session": "s1"}
    )
    runner.run(lambda c: c.posts.list(leagues="NFL"), http_client=http)
    request = route.calls[0].request
    assert request.headers["x-tenant"] == "acme"
    assert request.url.params["tenant"] == "acme" and request.url.params["leagues"] == "NFL"
    assert request.headers["cookie"] == "session=s1"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.headers["user-agent"].startswith("sports-posts-python/")


def test_the_sdks_auth_wins_over_an_injected_client_and_its_own_user_agent_is_kept(
    runner: Runner, api: respx.MockRouter
) -> None:
    route = api.get("/account/information").respond(200, json=INFO)
    http = _http_client(runner.kind, headers={"User-Agent": "acme-app/2.0", "Authorization": "Bearer not-ours"})
    runner.run(lambda c: c.account.information(), http_client=http)
    request = route.calls[0].request
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.headers["user-agent"] == "acme-app/2.0"


def test_a_user_agent_in_default_headers_replaces_the_sdks_once(api: respx.MockRouter) -> None:
    route = api.get("/account/information").respond(200, json=INFO)
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, default_headers={"user-agent": "mine/1"}) as client:
        client.account.information()
    assert route.calls[0].request.headers.get_list("user-agent") == ["mine/1"]


# ---------------------------------------------------------------------------------------
# Raw responses

RATE = {"X-RateLimit-Remaining": "42", "X-Usage-Calls": "7"}


def test_raw_response_of_a_page_gives_status_headers_request_and_the_page() -> None:
    with respx.mock(base_url=BASE_URL) as api:
        route = api.get("/posts")
        route.side_effect = [
            httpx.Response(200, json=page([post("1")], has_next=True), headers=RATE),
            httpx.Response(200, json=page([post("2")], page=2), headers=RATE),
        ]
        with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
            raw = client.with_raw_response.posts.list(leagues="NFL")
            assert isinstance(raw, sp.RawResponse) and raw.status_code == 200
            assert raw.headers["x-ratelimit-remaining"] == "42" and raw.headers["x-usage-calls"] == "7"
            assert raw.http_request.headers["authorization"] == "<redacted>"
            assert raw.url.path == "/v1/posts" and raw.url.params["leagues"] == "NFL"
            page_one = raw.parse()
            assert isinstance(page_one, sp.SyncPage)
            assert [p.id for p in page_one] == ["1", "2"], "later pages are fetched as usual"
            assert client.calls == 2
            assert API_KEY not in repr(raw)


def test_raw_response_of_every_kind_of_method() -> None:
    with respx.mock(base_url=BASE_URL) as api:
        api.get("/account/information").respond(200, json=INFO, headers=RATE)
        api.get("/ids").respond(200, json=TEAMS, headers=RATE)
        api.get("/posts").respond(200, json=page([post("1")]), headers=RATE)
        with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
            raw_client = client.with_raw_response
            info = raw_client.account.information()
            teams = raw_client.ids.teams("NFL")
            trending = raw_client.posts.trending(extra_headers={"X-Trace": "1"})
            copy = raw_client.with_options(max_retries=0).account.information()
    assert info.parse().usage.current_calls == 3 and info.headers["x-usage-calls"] == "7"
    assert teams.parse().count == 0 and trending.parse().items[0].id == "1"
    assert isinstance(copy, sp.RawResponse), "a copy of the raw view stays raw"


def test_async_raw_response_of_a_page_and_a_model() -> None:
    async def main() -> None:
        with respx.mock(base_url=BASE_URL) as api:
            route = api.get("/posts")
            route.side_effect = [
                httpx.Response(200, json=page([post("1")], has_next=True), headers=RATE),
                httpx.Response(200, json=page([post("2")], page=2), headers=RATE),
            ]
            api.get("/account/information").respond(200, json=INFO, headers=RATE)
            async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
                raw = await client.with_raw_response.posts.list(leagues="NFL")
                assert raw.status_code == 200 and raw.headers["x-ratelimit-remaining"] == "42"
                assert [p.id async for p in raw.parse()] == ["1", "2"]
                info = await client.with_raw_response.account.information()
                assert info.parse().company.name == "Acme"
                plain = client.posts.list(leagues="NFL")
                assert isinstance(plain, sp.AsyncPage), "the plain client is untouched"

    asyncio.run(main())


# ---------------------------------------------------------------------------------------
# Fuzz: any per-call options; only SportsPostsError escapes, and what passes is sendable

VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.binary(max_size=6),
)
MAPPINGS = st.one_of(VALUES, st.dictionaries(st.one_of(st.text(max_size=10), st.integers()), VALUES, max_size=3))


@settings(max_examples=300, deadline=None)
@given(
    options=st.fixed_dictionaries(
        {}, optional={"extra_headers": MAPPINGS, "extra_query": MAPPINGS, "timeout": VALUES}
    )
)
def test_fuzz_per_call_options_only_raise_sdk_errors_and_what_passes_builds_a_request(
    options: dict[str, Any],
) -> None:
    try:
        call = _endpoints.account_information(**options)
    except sp.SportsPostsError:
        return
    request = build_request(CONFIG, call)  # no UnicodeEncodeError, no httpx error
    assert request.headers["authorization"] == f"Bearer {API_KEY}"


def test_headers_built_once_still_follow_each_call_and_the_clients_user_agent(api: respx.MockRouter) -> None:
    # The SDK's headers are built once per client and copied per call: one call's extra
    # headers must not stay for the next, and a User-Agent the caller sets on their httpx
    # client after the first call must still win over the SDK's.
    route = api.get("/account/information").respond(200, json=INFO)
    http = httpx.Client()
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http) as client:
        client.account.information(extra_headers={"X-Trace": "t-1"})
        client.account.information()
        http.headers["User-Agent"] = "acme-app/3.0"
        client.account.information()
        http.headers["User-Agent"] = f"python-httpx/{httpx.__version__}"
        client.with_options(timeout=3.0).account.information()
    sent = [call.request.headers for call in route.calls]
    assert [h.get("x-trace") for h in sent] == ["t-1", None, None, None]
    assert [h["user-agent"].split("/")[0] for h in sent] == ["sports-posts-python"] * 2 + ["acme-app", "sports-posts-python"]
    assert all(h["authorization"] == f"Bearer {API_KEY}" for h in sent)


# ---------------------------------------------------------------------------------------
# The request the SDK builds is the one the client's own build_request would build

_NAMES = st.sampled_from(["User-Agent", "Accept", "X-Tenant", "x-tenant", "Authorization", "Accept-Encoding"])
_VALUES = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=8)


def _by_the_library(config: ClientConfig, call: Any, http: Any) -> Any:
    """The request as before the shortcut: our headers, merged by the client itself."""
    headers = config.headers(http.headers)
    for name, value in call.options.headers.items():
        headers[name] = value
    return http.build_request(call.method, str(build_request(config, call).url), headers=headers,
                              extensions={"timeout": {}})


@pytest.mark.parametrize("stack", STACKS)
@settings(max_examples=40, deadline=None)
@given(client_headers=st.dictionaries(_NAMES, _VALUES, max_size=3), defaults=st.dictionaries(_NAMES, _VALUES, max_size=2),
       extra=st.dictionaries(_NAMES, _VALUES, max_size=2))
def test_the_request_built_is_the_one_the_clients_build_request_makes(
    stack: str, client_headers: dict[str, str], defaults: dict[str, str], extra: dict[str, str]
) -> None:
    lib: Any = module(stack)
    # The SDK's own headers are refused in both (tested apart); the client may set any.
    defaults, extra = ({k: v for k, v in d.items() if k.lower() not in _SDK_HEADERS} for d in (defaults, extra))
    config = ClientConfig.resolve(api_key=API_KEY, base_url=BASE_URL, auth_scheme="bearer", timeout=5.0,
                                  max_retries=0, default_headers=defaults, stack=sp._http.load_stack(stack))
    with lib.Client(headers=client_headers, verify=loopback_tls()) as http:
        call = _endpoints.posts_list({"leagues": "NFL", "extra_headers": extra})
        for _ in range(2):  # built, then from what the first call kept
            ours, theirs = build_request(config, call, http), _by_the_library(config, call, http)
            assert type(ours) is type(theirs) and ours.url == theirs.url and ours.method == theirs.method
            assert ours.url.raw_path == theirs.url.raw_path and ours.url.netloc == theirs.url.netloc
            assert sorted(ours.headers.multi_items()) == sorted(theirs.headers.multi_items())
            assert ours.content == theirs.content == b"" and type(ours.stream) is type(theirs.stream)


def test_a_request_changed_after_it_is_built_leaves_the_next_one_as_it_was() -> None:
    with httpx.Client(headers={"X-Tenant": "acme"}) as http:
        first = build_request(CONFIG, _endpoints.posts_list({}), http)
        first.headers["X-Signed"] = "by-a-hook"
        del first.headers["x-tenant"]
        again = build_request(CONFIG, _endpoints.posts_list({}), http)
    assert "x-signed" not in again.headers and again.headers["x-tenant"] == "acme"


def test_a_client_whose_build_request_is_its_own_still_builds_every_request() -> None:
    class Signing(httpx.Client):
        def build_request(self, method: str, url: Any, **kwargs: Any) -> httpx.Request:
            request = super().build_request(method, url, **kwargs)
            request.headers["X-Signature"] = "signed"
            return request

    with Signing() as http:
        assert build_request(CONFIG, _endpoints.posts_list({}), http).headers["x-signature"] == "signed"
    with httpx.Client(cookies={"session": "s1"}) as http:  # type: ignore[assignment]  # the client adds its cookies
        assert build_request(CONFIG, _endpoints.posts_list({}), http).headers["cookie"] == "session=s1"
