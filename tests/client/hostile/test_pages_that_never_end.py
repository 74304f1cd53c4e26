"""A service that claims ``has_next`` forever costs a bounded number of calls, and the
walk ends in a typed error rather than a silent stop or a loop without end."""

from __future__ import annotations

import itertools
from typing import Any, Callable

import httpx
import pytest
import respx

import sports_posts as sp
from sports_posts.pagination import DEFAULT_MAX_PAGES, PageLimitError, PaginationError
from tests.client.conftest import page, post
from tests.runner import Runner


def _answers(make: Callable[[int], dict[str, Any]]) -> Callable[[httpx.Request], httpx.Response]:
    """Answer the n-th request (from 1) with ``make(n)``."""
    counter = itertools.count(1)
    return lambda request: httpx.Response(200, json=make(next(counter)))


HOSTILE = {
    # page 1 again and again, whatever page was asked for
    "same page number": lambda n: page([post(f"{n}")], page=1, has_next=True),
    # page numbers that go up, posts that do not change
    "same posts": lambda n: page([post("a"), post("b")], page=n, has_next=True),
    # a page number that goes back
    "page number back": lambda n: page([post(f"{n}")], page=2 if n == 1 else 1, has_next=True),
}
ASKED = {"same page number": 2, "same posts": 2, "page number back": 3}


@pytest.mark.parametrize("how", sorted(HOSTILE))
@pytest.mark.parametrize("walk", ["iterate", "iter_pages", "iter_items"])
def test_a_page_that_does_not_advance_is_a_typed_error_after_that_call(
    runner: Runner, api: respx.MockRouter, how: str, walk: str
) -> None:
    route = api.get("/posts").mock(side_effect=_answers(HOSTILE[how]))
    walks: dict[str, Callable[[Any], Any]] = {
        "iterate": lambda c: c.posts.list(leagues="NFL"),
        "iter_pages": lambda c: c.posts.list(leagues="NFL").iter_pages(),
        "iter_items": lambda c: c.posts.list(leagues="NFL").iter_items(max_items=10_000),
    }
    with pytest.raises(PaginationError, match="did not advance") as info:
        runner.run(walks[walk])
    assert isinstance(info.value, sp.APIResponseValidationError)
    assert info.value.page == ASKED[how] and str(ASKED[how]) in str(info.value)
    assert route.call_count == 2


def test_next_page_by_hand_raises_too(api: respx.MockRouter) -> None:
    api.get("/posts").mock(side_effect=_answers(HOSTILE["same page number"]))
    with sp.SportsPosts(api_key="sk_test_0123456789", base_url="https://api.test/v1") as client:
        first = client.posts.list()
        with pytest.raises(PaginationError):
            first.next_page()


def test_an_endless_service_with_fresh_posts_stops_at_the_default_bound(
    runner: Runner, api: respx.MockRouter
) -> None:
    route = api.get("/posts").mock(
        side_effect=_answers(lambda n: page([post(f"p{n}")], page=n, has_next=True))
    )
    with pytest.raises(PageLimitError, match=f"max_pages bound \\({DEFAULT_MAX_PAGES}\\)") as info:
        runner.run(lambda c: c.posts.list())
    assert info.value.max_pages == DEFAULT_MAX_PAGES == 1000
    assert route.call_count == DEFAULT_MAX_PAGES


def test_the_bound_is_the_callers_to_raise_or_lift(runner: Runner, api: respx.MockRouter) -> None:
    route = api.get("/posts").mock(
        side_effect=_answers(lambda n: page([post(f"p{n}")], page=n, has_next=n < 1001))
    )
    if runner.kind == "sync":  # the walk's bound is one piece of code for both clients
        items = runner.run(lambda c: c.posts.list().iter_items(max_pages=None))
        assert len(items) == 1001 and route.call_count == 1001
        route.reset()
    route.side_effect = _answers(lambda n: page([post(f"p{n}")], page=n, has_next=n < 5))
    assert len(runner.run(lambda c: c.posts.list().iter_pages(max_pages=5))) == 5
    route.reset()
    route.side_effect = _answers(lambda n: page([post(f"p{n}")], page=n, has_next=True))
    with pytest.raises(PageLimitError):
        runner.run(lambda c: c.posts.list().iter_items(max_pages=3))
    assert route.call_count == 3
