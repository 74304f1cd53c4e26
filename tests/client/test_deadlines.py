"""Time bounds decided by the call flow, on a fake clock: each attempt's deadline, the
per-read timeouts shrunk to it, and ``total_timeout`` over every attempt and wait."""

from __future__ import annotations

from typing import Any, Callable, Optional

import httpx
import pytest

import sports_posts as sp
from sports_posts import _endpoints
from sports_posts._config import ClientConfig
from sports_posts._transport import CallCounter, Send, exchange_flow
from sports_posts._utils import Done, advance

from .bodies import INFO
from .conftest import API_KEY, BASE_URL


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def config(**changes: Any) -> ClientConfig:
    settings: dict[str, Any] = {
        "api_key": API_KEY, "base_url": BASE_URL, "auth_scheme": "bearer", "timeout": 5.0,
        "max_retries": 3, "default_headers": None,
    }
    settings.update(changes)
    return ClientConfig.resolve(**settings)


Answer = Callable[[Send, Clock], Any]


def drive(cfg: ClientConfig, answers: list[Answer], clock: Clock) -> tuple[list[Any], Any]:
    """Run a flow; each send gets the next scripted answer (which may move the clock)."""
    steps: list[Any] = []
    flow = exchange_flow(cfg, _endpoints.account_information(), CallCounter(), None, clock)
    step = advance(flow, None)
    while not isinstance(step, Done):
        steps.append(step)
        if isinstance(step, float):
            clock.now += step
            step = advance(flow, None)
        else:
            step = advance(flow, answers.pop(0)(step, clock))
    return steps, step.value


def respond(status: int, body: Any = None, *, after: float = 0.0, headers: Optional[dict[str, str]] = None) -> Answer:
    def answer(send: Send, clock: Clock) -> Any:
        clock.now += after
        response = httpx.Response(status, json=body if body is not None else {}, headers=headers, request=send.request)
        try:
            send.reader.begin(response)
        except sp.SportsPostsError as exc:
            return exc
        return response

    return answer


def test_a_retry_wait_that_would_cross_total_timeout_is_not_slept() -> None:
    clock = Clock()
    answers = [respond(503, headers={"Retry-After": "30"})]
    with pytest.raises(sp.InternalServerError) as info:
        drive(config(total_timeout=10.0), answers, clock)
    assert info.value.status_code == 503, "the last error is raised as it is"
    assert clock.now == 1000.0, "nothing was slept"


def test_waits_within_total_timeout_are_slept_and_each_attempt_gets_the_time_left() -> None:
    clock = Clock()
    steps, (info, _) = drive(
        config(total_timeout=12.0, timeout=5.0),
        [
            respond(503, headers={"Retry-After": "4"}, after=1.0),  # t=1, wait 4 -> t=5
            respond(503, headers={"Retry-After": "4"}, after=1.0),  # t=6, wait 4 -> t=10
            respond(200, INFO),  # t=10: 2 s are left of the 12
        ],
        clock,
    )
    sends = [s for s in steps if isinstance(s, Send)]
    assert [s for s in steps if isinstance(s, float)] == [4.0, 4.0]
    assert sends[0].request.extensions["timeout"]["read"] == 5.0
    assert sends[2].request.extensions["timeout"] == {"connect": 2.0, "read": 2.0, "write": 2.0, "pool": 2.0}
    assert sends[2].reader.deadline == 1012.0
    assert info.usage.current_calls == 3


def test_an_attempt_past_its_deadline_while_reading_is_a_timeout() -> None:
    clock = Clock()

    def slow(send: Send, clock: Clock) -> Any:
        response = httpx.Response(200, stream=httpx.ByteStream(b"{}"), request=send.request)
        send.reader.begin(response)
        clock.now += 6.0  # one chunk arrives after the 5 s of the attempt
        try:
            send.reader.feed(b"{}")
        except sp.SportsPostsError as exc:
            return exc
        raise AssertionError("the reader took a chunk past the deadline")

    with pytest.raises(sp.APITimeoutError, match="whole request"):
        drive(config(max_retries=0), [slow], clock)


def test_total_timeout_none_leaves_the_attempts_and_waits_to_their_own_bounds() -> None:
    clock = Clock()
    steps, _ = drive(
        config(total_timeout=None, timeout=5.0),
        [respond(503, headers={"Retry-After": "50"}), respond(200, INFO)],
        clock,
    )
    assert 50.0 in steps


def test_a_per_call_timeout_sets_that_calls_attempt_budget() -> None:
    call = _endpoints.account_information(timeout=2.0)
    flow = exchange_flow(config(), call, CallCounter(), None, Clock())
    send = advance(flow, None)
    assert isinstance(send, Send) and send.reader.deadline == 1002.0
    assert send.request.extensions["timeout"]["read"] == 2.0
