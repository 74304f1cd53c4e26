"""``default_http_client``: your transport options (limits, HTTP/2, proxies) on top of the
SDK's defaults, which passing a plain ``httpx.Client`` loses (issue 51)."""

from __future__ import annotations

import httpx
import pytest
import respx

import sports_posts as sp

from .conftest import API_KEY, BASE_URL

IDS = {"ok": True, "as_of": "2026-01-01T00:00:00Z", "ids_to_delete": []}


def test_it_keeps_the_sdks_defaults_and_takes_your_options(api: respx.MockRouter) -> None:
    limits = httpx.Limits(max_connections=3, max_keepalive_connections=1)
    http = sp.default_http_client(limits=limits, headers={"X-Team": "backend"})
    assert isinstance(http, httpx.Client)
    assert http.follow_redirects is False  # the SDK follows redirects itself, checking each hop
    route = api.get("/account/x-ids")
    route.side_effect = [
        httpx.Response(200, json=IDS, headers={"Set-Cookie": "session=abc; Path=/"}),
        httpx.Response(200, json=IDS),
    ]
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http) as client:
        client.account.x_ids()
        client.account.x_ids()
    first, second = route.calls[0].request, route.calls[1].request
    assert "cookie" not in second.headers, "a cookie the service set is never sent back"
    assert first.headers["x-team"] == "backend"  # your client's headers go out too
    http.close()


@pytest.mark.anyio
async def test_the_async_one_too(api: respx.MockRouter) -> None:
    http = sp.default_async_http_client(limits=httpx.Limits(max_connections=2))
    assert isinstance(http, httpx.AsyncClient) and http.follow_redirects is False
    api.get("/account/x-ids").respond(200, json=IDS)
    async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http) as client:
        assert (await client.account.x_ids()).ids_to_delete == []
    await http.aclose()


def test_your_options_win_over_the_defaults() -> None:
    http = sp.default_http_client(follow_redirects=True, trust_env=False)
    assert http.follow_redirects is True and http.trust_env is False
    http.close()
