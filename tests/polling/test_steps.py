"""The leased poller's steps, driven by hand (no I/O): the lease is renewed before every
call, every delivery and every save, and a lost lease stops the steps before either."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import httpx
import pytest

from sports_posts import RedisCheckpoint, SportsPosts
from sports_posts._request import APICall
from sports_posts.polling import Commit, Lease, LeaseLostError, Poller
from sports_posts.polling._base import Acquire, Load, Renew
from support.fake_service import T0, FakeClock
from tests.polling.test_algorithm import page, post

NOWHERE = "redis://127.0.0.1:1/0"  # never contacted: the steps do no I/O


def leased_poller() -> Poller:
    client = SportsPosts(api_key="sk_test_secret", base_url="https://api.example/v1",
                         http_client=httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(500))))
    return Poller(client, lease=Lease(NOWHERE, key="k", ttl=30), checkpoint=RedisCheckpoint(NOWHERE, key="k"),
                  clock=FakeClock(T0), interval=60, since=T0)


def name(step: object) -> str:
    return "Fetch" if isinstance(step, APICall) else type(step).__name__


def run(steps: Generator[Any, object, None], answers: dict[str, list[object]], until: int) -> list[str]:
    """Drive ``steps``, answering each kind of step from ``answers`` in order; the names seen."""
    seen: list[str] = []
    step = next(steps)
    while len(seen) < until:
        seen.append(name(step))
        queue = answers.get(seen[-1], [])
        step = steps.send(queue.pop(0) if queue else None)
    return seen


def test_the_lease_is_taken_then_renewed_before_each_call_delivery_and_save() -> None:
    poller = leased_poller()
    seen = run(poller._steps(), {"Acquire": [None, 7], "Renew": [True] * 20,
                                "Fetch": [page(post("a", 10), post("b", 20))]}, until=14)
    assert seen == [
        "Acquire", "Sleep", "Acquire",    # standing by, then taken with token 7
        "Load",                           # the checkpoint fenced with 7, then loaded
        "Renew", "Commit",                # the starting point
        "Renew", "Fetch",
        "Renew", "Deliver", "Renew", "Commit",  # before handing the batch, and before saving it
        "Sleep", "Renew",                 # the interval in slices of ttl / 3, renewed between
    ]


def test_a_lost_lease_stops_the_steps_before_the_save() -> None:
    poller = leased_poller()
    steps = poller._steps()
    answers: dict[str, list[object]] = {"Acquire": [3], "Renew": [True, True, True, False],
                                        "Fetch": [page(post("a", 10))]}
    with pytest.raises(LeaseLostError, match="another poller took it over"):
        run(steps, answers, until=20)
    assert poller._pending is None  # close() will not save the batch that was in hand


def test_the_load_step_carries_the_token() -> None:
    steps = leased_poller()._steps()
    assert isinstance(next(steps), Acquire)
    load = steps.send(9)
    assert isinstance(load, Load) and load.token == 9
    assert isinstance(steps.send(None), Renew)
    assert isinstance(steps.send(True), Commit)


def test_a_standby_rides_out_a_store_failure() -> None:
    from sports_posts import CoordinationError

    steps = leased_poller()._steps()
    assert isinstance(next(steps), Acquire)
    assert name(steps.send(CoordinationError("redis failed"))) == "Sleep"  # logged, not raised
    assert isinstance(steps.send(None), Acquire)
    assert isinstance(steps.send(4), Load)
