"""``sleep=``: what a client waits between retries with, on both clients, kept and replaced by
``with_options``, shared by the raw view, checked at construction."""

from __future__ import annotations

import httpx
import pytest
import respx

import sports_posts as sp
from sports_posts.testing import RetryWaits

from .conftest import API_KEY, BASE_URL

FAIL_THEN_OK = [
    httpx.Response(503, headers={"Retry-After": "3"}),
    httpx.Response(200, json={"ok": True, "as_of": "2026-01-01T00:00:00Z", "ids_to_delete": []}),
]


def test_the_sync_client_waits_with_its_sleep(api: respx.MockRouter) -> None:
    route = api.get("/account/x-ids").mock(side_effect=FAIL_THEN_OK)
    waits = RetryWaits()
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, sleep=waits.sleep) as client:
        client.account.x_ids()
    assert waits.waits == [3.0] and route.call_count == 2


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_async_client_awaits_its_sleep_on_either_loop(api: respx.MockRouter, backend: str) -> None:
    import anyio

    route = api.get("/account/x-ids").mock(side_effect=FAIL_THEN_OK)
    waits = RetryWaits()

    async def main() -> None:
        async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL, sleep=waits.async_sleep) as client:
            await client.account.x_ids()

    anyio.run(main, backend=backend)
    assert waits.waits == [3.0] and route.call_count == 2


def test_with_options_keeps_the_sleep_or_replaces_it(api: respx.MockRouter) -> None:
    api.get("/account/x-ids").mock(side_effect=FAIL_THEN_OK * 3)
    first, second = RetryWaits(), RetryWaits()
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, sleep=first.sleep) as client:
        client.with_options(timeout=5).account.x_ids()  # a copy keeps it
        client.with_raw_response.account.x_ids()  # so does the raw view
        client.with_options(sleep=second.sleep).account.x_ids()  # ... unless told otherwise
    assert first.waits == [3.0, 3.0] and second.waits == [3.0]


@pytest.mark.anyio
async def test_the_async_with_options_keeps_the_sleep_or_replaces_it(api: respx.MockRouter) -> None:
    api.get("/account/x-ids").mock(side_effect=FAIL_THEN_OK * 2)
    first, second = RetryWaits(), RetryWaits()
    async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL, sleep=first.async_sleep) as client:
        await client.with_options(max_retries=1).account.x_ids()
        await client.with_options(sleep=second.async_sleep).account.x_ids()
    assert first.waits == [3.0] and second.waits == [3.0]


@pytest.mark.parametrize("value", ["sleep", 1.0])
def test_a_sleep_that_is_not_callable_is_refused(value: object) -> None:
    with pytest.raises(sp.ParameterError, match="sleep must be a callable") as info:
        sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, sleep=value)  # type: ignore[arg-type]
    assert info.value.parameter == "sleep"
    aclient = sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL)
    with pytest.raises(sp.ParameterError, match="sleep must be a callable"):
        aclient.with_options(sleep=value)  # type: ignore[arg-type]
