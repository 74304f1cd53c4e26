"""Both HTTP stacks: httpx and its maintained fork httpx2, chosen, injected and mapped alike."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import httpx
import pytest

import sports_posts as sp
from sports_posts import _http
from sports_posts.testing import RetryWaits
from tests.stacks import STACKS, default_stack, mock_client, module

from .conftest import API_KEY, BASE_URL, page, post

ENV = "SPORTS_POSTS_HTTP_STACK"


def _ok(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=page([post("7")]))


def _raising(stack: str, name: str) -> Callable[[Any], Any]:
    def handler(request: Any) -> Any:
        raise getattr(module(stack), name)("scripted", request=request)

    return handler


def test_without_a_choice_httpx_is_used_even_when_the_fork_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    # the dev extra installs httpx2 wherever it is published (Python 3.10+); failed when the
    # SDK preferred httpx2 whenever it was importable
    monkeypatch.delenv(ENV, raising=False)
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
        assert type(client._pool()) is httpx.Client
    aclient = sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL)

    async def pool_type() -> type:  # the async client's pool is made on the loop that uses it
        try:
            return type(await aclient._pool())
        finally:
            await aclient.aclose()

    assert asyncio.run(pool_type()) is httpx.AsyncClient


def test_respx_mocks_a_default_client_with_httpx2_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import respx

    monkeypatch.delenv(ENV, raising=False)
    with respx.mock(base_url=BASE_URL, assert_all_called=True) as router:
        route = router.get("/posts").mock(return_value=httpx.Response(200, json=page([post("7")])))
        with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, max_retries=0) as client:
            assert [p.id for p in client.posts.list(leagues="NFL").items] == ["7"]
    assert route.call_count == 1


@pytest.mark.parametrize("stack", STACKS)
def test_the_environment_names_the_stack(stack: str) -> None:
    with default_stack(stack), sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
        assert isinstance(client._pool(), module(stack).Client)
        assert client.with_options(max_retries=0)._pool() is client._pool()


def test_an_unknown_stack_name_is_a_parameter_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "requests")
    with pytest.raises(sp.ParameterError, match=ENV):
        sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL)


def test_a_missing_stack_names_the_extra_that_installs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> None:
        raise ImportError(name)

    _http.load_stack.cache_clear()
    monkeypatch.setattr(_http.importlib, "import_module", missing)  # type: ignore[attr-defined]
    try:
        with pytest.raises(sp.SportsPostsError, match=r"sports-posts\[httpx2\]"):
            _http.load_stack("httpx2")
    finally:
        _http.load_stack.cache_clear()


@pytest.mark.parametrize("stack", STACKS)
def test_an_injected_client_of_either_stack_carries_every_request(stack: str) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["user-agent"])
        return _ok(request)

    http = mock_client(handler, stack)
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http) as client:
        assert [p.id for p in client.posts.list()] == ["7"]
    assert not http.is_closed, "an injected client is the caller's to close"
    assert seen and f" {stack}/" in seen[0]
    http.close()


@pytest.mark.parametrize("stack", STACKS)
def test_the_async_client_takes_an_async_client_of_either_stack(stack: str) -> None:
    async def main() -> list[str]:
        http = mock_client(_ok, stack, asynchronous=True)
        async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http) as client:
            ids = [p.id async for p in client.posts.list()]
        await http.aclose()
        return ids

    assert asyncio.run(main()) == ["7"]


@pytest.mark.parametrize("stack", STACKS)
def test_a_client_of_the_wrong_kind_or_library_is_refused(stack: str) -> None:
    lib = module(stack)
    with pytest.raises(sp.ParameterError, match="http_client"):
        sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=lib.AsyncClient())
    with pytest.raises(sp.ParameterError, match="http_client"):
        sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=lib.Client())
    with pytest.raises(sp.ParameterError, match="httpx or httpx2"):
        sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=object())  # type: ignore[arg-type]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize(
    ("failure", "error"),
    [
        ("ConnectError", sp.APIConnectionError),
        ("RemoteProtocolError", sp.APIConnectionError),
        ("ReadTimeout", sp.APITimeoutError),
        ("ConnectTimeout", sp.APITimeoutError),
        ("DecodingError", sp.APIConnectionError),
    ],
)
def test_each_stack_s_transport_errors_map_to_the_same_typed_errors(
    stack: str, failure: str, error: type[Exception], retry_waits: RetryWaits, retry_sleeps: list[float]
) -> None:
    lib = module(stack)
    http = lib.Client(transport=lib.MockTransport(_raising(stack, failure)))
    client = sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http, max_retries=1, sleep=retry_waits.sleep)
    with client, pytest.raises(error) as info:
        client.account.x_ids()
    assert type(info.value) is error
    assert len(retry_sleeps) == 1, "a transport failure is retried on either stack"
    http.close()


@pytest.mark.parametrize("stack", STACKS)
def test_a_timeout_object_of_either_stack_is_accepted(stack: str) -> None:
    timeout = module(stack).Timeout(5.0)
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, timeout=timeout) as client:
        assert client.timeout is timeout
