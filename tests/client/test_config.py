"""Client configuration: environment, base URL, timeouts, pools, secrets and logging."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
import respx

import sports_posts as sp
from sports_posts import _base_client as _client
from tests.runner import Runner

from .conftest import API_KEY, BASE_URL, page


def test_environment_supplies_key_and_base_url(monkeypatch: pytest.MonkeyPatch, api: respx.MockRouter) -> None:
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", "env-key")
    monkeypatch.setenv("SPORTS_POSTS_BASE_URL", BASE_URL + "/")
    route = api.get("/posts").respond(200, json=page([]))
    with sp.SportsPosts() as client:
        assert client.base_url == BASE_URL
        list(client.posts.list())
    assert route.calls[0].request.headers["authorization"] == "Bearer env-key"


@pytest.mark.parametrize("cls", [sp.SportsPosts, sp.AsyncSportsPosts])
def test_missing_api_key_fails_at_construction(monkeypatch: pytest.MonkeyPatch, cls: type) -> None:
    monkeypatch.delenv("SPORTS_POSTS_API_KEY", raising=False)
    with pytest.raises(sp.SportsPostsError, match="API key"):
        cls(base_url=BASE_URL)


def test_missing_base_url_fails_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPORTS_POSTS_BASE_URL", raising=False)
    with pytest.raises(sp.SportsPostsError, match="base URL"):
        sp.SportsPosts(api_key="k")


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"base_url": "ftp://x/v1"}, "base_url"),
        ({"base_url": "not a url"}, "base_url"),
        ({"auth_scheme": "token"}, "auth_scheme"),
        ({"max_retries": -1}, "max_retries"),
        ({"timeout": None}, "timeout"),
        ({"timeout": -1}, "timeout"),
        ({"http_client": object()}, "http_client"),
        ({"api_key": "abc\r\nX-Evil: 1"}, "api_key"),
    ],
)
def test_bad_configuration_is_a_parameter_error(kwargs: dict[str, object], parameter: str) -> None:
    kwargs.setdefault("api_key", API_KEY)
    kwargs.setdefault("base_url", BASE_URL)
    with pytest.raises(sp.ParameterError) as info:
        sp.SportsPosts(**kwargs)  # type: ignore[arg-type]
    assert info.value.parameter == parameter


def test_timeout_is_finite_by_default_and_sent_per_request(api: respx.MockRouter) -> None:
    route = api.get("/posts").respond(200, json=page([]))
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
        assert client.timeout.read == 30.0
        client.with_options(timeout=2.5).posts.list()
        client.with_options(timeout=httpx.Timeout(9.0)).posts.list()
    assert route.calls[0].request.extensions["timeout"]["read"] == 2.5
    assert route.calls[1].request.extensions["timeout"]["read"] == 9.0


def test_with_options_shares_the_connection_pool() -> None:
    client = sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL)
    other = client.with_options(max_retries=7)
    assert other._pool() is client._pool() and other.max_retries == 7 and client.max_retries == 2
    other.close()
    assert not client._pool().is_closed, "closing a copy must not close the shared pool"
    client.close()
    assert client._pool().is_closed


def test_injected_http_client_is_used_and_left_open(api: respx.MockRouter) -> None:
    api.get("/posts").respond(200, json=page([]))
    http = httpx.Client()
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http) as client:
        assert client._pool() is http
        client.posts.list()
    assert not http.is_closed
    http.close()


def test_async_client_injected_and_closed_explicitly(api: respx.MockRouter) -> None:
    api.get("/posts").respond(200, json=page([]))

    async def main() -> None:
        http = httpx.AsyncClient()
        async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http) as client:
            await client.posts.list()
        assert not http.is_closed
        await http.aclose()
        own = sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL)
        pool = await own._pool()  # this loop's pool
        await own.aclose()
        assert pool.is_closed

    asyncio.run(main())


def test_api_key_never_in_repr_logs_or_errors(
    runner: Runner, api: respx.MockRouter, caplog: pytest.LogCaptureFixture
) -> None:
    api.get("/posts").respond(401, json={"ok": False, "error_code": "UNAUTHORIZED", "error_message": "bad key"})
    api.get("/account/x-ids").respond(503)
    caplog.set_level(logging.DEBUG)
    client = runner.client()
    assert API_KEY not in repr(client) and "<redacted>" in repr(client)
    assert API_KEY not in repr(client._config)
    with pytest.raises(sp.AuthenticationError) as auth_error:
        runner.run(lambda c: c.posts.list())
    with pytest.raises(sp.InternalServerError) as server_error:
        runner.run(lambda c: c.account.x_ids())
    for err in (auth_error.value, server_error.value):
        assert API_KEY not in str(err) and API_KEY not in repr(err) and API_KEY not in repr(err.args)
    assert any("request GET" in r.getMessage() for r in caplog.records), "debug logging is on"
    assert any("<redacted>" in r.getMessage() for r in caplog.records)
    for record in caplog.records:
        assert API_KEY not in record.getMessage()


def test_sports_posts_log_env_turns_on_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    logger = logging.getLogger("sports_posts")
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "level", logging.NOTSET)
    monkeypatch.setenv("SPORTS_POSTS_LOG", "debug")
    _client._setup_logging_from_env()
    assert logger.level == logging.DEBUG
    assert len(logger.handlers) == 1
