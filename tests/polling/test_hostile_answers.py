"""The poller against a service that misbehaves with a 200: pages that never end, pages
that do not advance, and bodies without their sections. Each ends in a typed error, a
bounded number of calls, and nothing delivered or committed."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from datetime import timedelta
from typing import Any, Callable

import httpx
import pytest

from sports_posts import (
    APIResponseValidationError,
    MemoryCheckpoint,
    Poller,
    PollState,
    SportsPosts,
)
from sports_posts.pagination import PageLimitError, PaginationError
from sports_posts.polling import Deliver, Fetch
from sports_posts.polling._config import MAX_PAGES_PER_CYCLE
from support.fake_service import BASE_URL, T0
from tests.wire import spec_post

from .conftest import TimeHarness
from .test_algorithm import config, page, post, start


def _wire(n: int, created: float) -> dict[str, Any]:
    return spec_post(f"p{n}", (T0 + timedelta(seconds=created)).isoformat().replace("+00:00", "Z"))


def _poller(answer: Callable[[int], Any], harness: TimeHarness) -> tuple[Poller, list[int], MemoryCheckpoint]:
    """A poller over a transport that answers the n-th request with ``answer(n)``."""
    counter = itertools.count(1)
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        n = next(counter)
        calls.append(n)
        return httpx.Response(200, content=json.dumps(answer(n)).encode())

    client = SportsPosts(
        api_key="sk_test_hostile", base_url=BASE_URL,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
    checkpoint = MemoryCheckpoint()
    poller = Poller(client, since=T0, checkpoint=checkpoint, clock=harness.clock, sleep=harness.sleep,
                    rand=harness.rand, filters={"leagues": "NFL"})
    return harness.attach(poller), calls, checkpoint


def _pagination(n: int, has_next: bool = True) -> dict[str, Any]:
    return {"page": n, "limit": 100, "has_next": has_next, "has_prev": n > 1}


NOT_ADVANCING = {
    "same page number": lambda n: {"pagination": _pagination(1), "items": [_wire(n, 500 + n)]},
    "same posts": lambda n: {"pagination": _pagination(n), "items": [_wire(1, 500), _wire(2, 501)]},
}


@pytest.mark.parametrize("how", sorted(NOT_ADVANCING))
def test_a_cycle_that_gets_a_page_that_does_not_advance_stops_with_the_typed_error(
    harness: TimeHarness, how: str
) -> None:
    poller, calls, checkpoint = _poller(NOT_ADVANCING[how], harness)
    with pytest.raises(PaginationError, match="page 2 did not advance"):
        next(iter(poller))
    assert calls == [1, 2]
    assert checkpoint.load() == PollState.start(T0), "nothing is committed past the start"


@pytest.mark.parametrize(
    "body",
    [
        {"items": []},  # no pagination: not "nothing new"
        {"items": [_wire(1, 500)]},
        {"pagination": _pagination(1, False)},  # no items
        {"pagination": _pagination(1, False), "items": None},
        {"pagination": _pagination(1, False), "items": {"p1": _wire(1, 500)}},
        {"pagination": _pagination(1, False), "items": ["p1"]},
        {"pagination": _pagination(1, False), "items": [_wire(1, 500), 7]},
        {"pagination": None, "items": []},
        [],
    ],
)
def test_a_200_of_the_wrong_shape_is_raised_never_committed_as_an_empty_cycle(
    harness: TimeHarness, body: Any
) -> None:
    poller, calls, checkpoint = _poller(lambda n: body, harness)
    with pytest.raises(APIResponseValidationError):
        next(iter(poller))
    assert calls == [1], "a body that does not match the spec is not retried"
    assert checkpoint.load() == PollState.start(T0)


def test_a_cycle_stops_at_its_page_bound() -> None:
    algorithm, _ = start(replace(config(), max_pages=3), now=3600)
    next(algorithm)  # the starting point
    action = algorithm.send(None)
    for n in range(1, 3):
        assert isinstance(action, Fetch) and action.params["page"] == n
        action = algorithm.send(page(post(f"p{n}", 3000 - n), has_next=True, number=n))
    assert isinstance(action, Fetch) and action.params["page"] == 3
    with pytest.raises(PageLimitError, match="read 3 pages"):  # before a fourth is asked for
        algorithm.send(page(post("p3", 2997), has_next=True, number=3))


def test_a_cycle_that_never_ends_costs_at_most_the_default_bound(harness: TimeHarness) -> None:
    poller, calls, checkpoint = _poller(
        lambda n: {"pagination": _pagination(n), "items": [_wire(n, 3000 - n / 1000)]}, harness
    )
    harness.clock.advance(3600)
    with pytest.raises(PageLimitError, match=f"{MAX_PAGES_PER_CYCLE} pages") as info:
        next(iter(poller))
    assert info.value.max_pages == MAX_PAGES_PER_CYCLE == 1000
    assert len(calls) == MAX_PAGES_PER_CYCLE
    assert checkpoint.load() == PollState.start(T0)


def test_an_honest_multi_page_cycle_is_no_error() -> None:
    algorithm, _ = start(config(), now=600)
    next(algorithm)
    algorithm.send(None)
    algorithm.send(page(post("c", 30), post("b", 20), has_next=True))
    deliver = algorithm.send(page(post("b", 20), post("a", 10), number=2))  # overlaps by one
    assert isinstance(deliver, Deliver) and [p.id for p in deliver.batch] == ["a", "b", "c"]
