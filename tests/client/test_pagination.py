"""Pages fetch lazily: never a call the caller did not iterate to."""

from __future__ import annotations

import asyncio
import itertools

import httpx
import pytest
import respx

import sports_posts as sp

from .conftest import API_KEY, BASE_URL, page, post


def _pages(api: respx.MockRouter, n: int, per: int = 2) -> respx.Route:
    responses = [
        httpx.Response(200, json=page([post(f"{p}-{i}") for i in range(per)], page=p, has_next=p < n))
        for p in range(1, n + 1)
    ]
    return api.get("/posts").mock(side_effect=responses)


@pytest.fixture
def client() -> sp.SportsPosts:
    return sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL)


def test_iteration_fetches_the_next_page_only_when_reached(api: respx.MockRouter, client: sp.SportsPosts) -> None:
    route = _pages(api, 3)
    first = client.posts.list(leagues="NFL", highlight=True, limit=2)
    assert route.call_count == 1
    it = iter(first)
    assert [p.id for p in itertools.islice(it, 2)] == ["1-0", "1-1"]
    assert route.call_count == 1, "page 2 is not fetched before iteration reaches it"
    assert next(it).id == "2-0"
    assert route.call_count == 2
    assert [p.id for p in it] == ["2-1", "3-0", "3-1"]
    assert route.call_count == 3
    for call in route.calls[1:]:
        params = call.request.url.params
        assert (params["leagues"], params["highlight"], params["limit"]) == ("NFL", "true", "2")
    assert [c.request.url.params.get("page") for c in route.calls] == [None, "2", "3"]


def test_next_page_and_has_next_page(api: respx.MockRouter, client: sp.SportsPosts) -> None:
    _pages(api, 2)
    first = client.posts.list()
    assert first.has_next_page()
    second = first.next_page()
    assert second is not None and second.pagination.page == 2 and not second.has_next_page()
    assert second.next_page() is None


def test_max_pages_and_max_items_guard_the_spend(api: respx.MockRouter, client: sp.SportsPosts) -> None:
    route = _pages(api, 5)
    pages = []
    with pytest.raises(sp.pagination.PageLimitError, match=r"max_pages bound \(2\).*pass a larger") as info:
        for p in client.posts.list().iter_pages(max_pages=2):
            pages.append(p)
    assert info.value.max_pages == 2 and len(pages) == 2
    assert route.call_count == 2, "the bound is checked before the call past it"
    route.reset()
    route.side_effect = [httpx.Response(200, json=page([post("a")], page=1, has_next=True)),
                         httpx.Response(200, json=page([post("b")], page=2, has_next=False))]
    assert len(list(client.posts.list().iter_pages(max_pages=2))) == 2, "a walk that fits is no error"
    route.reset()
    route.side_effect = [httpx.Response(200, json=page([post(f"{p}") for p in range(2)], page=1, has_next=True)),
                         httpx.Response(200, json=page([post("x")], page=2, has_next=True))]
    items = list(client.posts.list().iter_items(max_items=3))
    assert len(items) == 3 and route.call_count == 2
    route.side_effect = None
    route.return_value = httpx.Response(200, json=page([post()]))
    first = client.posts.list()
    for bad in (0, -1, True):
        with pytest.raises(sp.ParameterError):
            first.iter_items(max_items=bad)
        with pytest.raises(sp.ParameterError):
            first.iter_pages(max_pages=bad)


def test_an_empty_page_claiming_a_successor_ends_iteration(api: respx.MockRouter, client: sp.SportsPosts) -> None:
    route = api.get("/posts").respond(200, json=page([], has_next=True))
    assert list(client.posts.list()) == []
    assert route.call_count == 1


def test_async_page_is_awaitable_and_async_iterable(api: respx.MockRouter) -> None:
    route = _pages(api, 2)

    async def main() -> None:
        async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
            lazy = client.posts.list(leagues="NBA")
            assert route.call_count == 0, "nothing is sent before await or async for"
            assert "not fetched" in repr(lazy)
            with pytest.raises(RuntimeError):
                _ = lazy.items
            first = await lazy
            assert [p.id for p in first.items] == ["1-0", "1-1"] and first.has_next_page()
            second = await first.next_page()
            assert second is not None and not second.has_next_page()
            assert route.call_count == 2

            route.reset()
            route.side_effect = None
            route.return_value = httpx.Response(200, json=page([post("only")]))
            assert [p.id async for p in client.posts.list()] == ["only"]
            pages = [p async for p in client.posts.list().iter_pages(max_pages=1)]
            assert len(pages) == 1

    asyncio.run(main())
