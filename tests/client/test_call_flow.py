"""The call flow without any I/O: what it asks the drivers to do, and what it decides."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import httpx
import pytest

import sports_posts as sp
from sports_posts import _endpoints, _transport
from sports_posts._config import ClientConfig
from sports_posts._transport import CallCounter, Outcome, Step, call_flow
from sports_posts._utils import Done, advance

from .conftest import API_KEY, BASE_URL, page, post

CONFIG = ClientConfig.resolve(
    api_key=API_KEY, base_url=BASE_URL, auth_scheme="bearer", timeout=5.0, max_retries=2, default_headers=None
)


def _answer(request: httpx.Request, status: int, body: Any = None) -> httpx.Response:
    return httpx.Response(status, json=body if body is not None else {}, request=request)


def _run(flow: Generator[Step, Outcome, Any], answers: list[Any]) -> tuple[list[str], Any]:
    """Drive a flow by hand: each request gets the next scripted answer; record the steps."""
    seen: list[str] = []
    step = advance(flow, None)
    while not isinstance(step, Done):
        if isinstance(step, float):
            seen.append("sleep")
            step = advance(flow, None)
        else:
            request = step.request
            seen.append(f"{request.method} {request.url.path}")
            answer = answers.pop(0)
            outcome = answer(request) if callable(answer) else answer
            if isinstance(outcome, httpx.Response):  # the driver's read: the body is read already
                step.reader.begin(outcome)
            step = advance(flow, outcome)
    return seen, step.value


def test_a_call_that_succeeds_at_once_never_builds_the_retry_machinery(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("tenacity was set up for a call that did not fail")

    monkeypatch.setattr(_transport, "retry_policy", refuse)
    counter = CallCounter()
    flow = call_flow(CONFIG, _endpoints.posts_list({"leagues": "NFL"}), counter)
    seen, result = _run(flow, [lambda r: _answer(r, 200, page([post("9")]))])
    assert seen == ["GET /v1/posts"] and [p.id for p in result.items] == ["9"]
    assert counter.value == 1


def test_a_retried_call_asks_for_a_wait_between_attempts_and_counts_each_attempt() -> None:
    counter = CallCounter()
    flow = call_flow(CONFIG, _endpoints.account_information(), counter)
    info = {
        "company": {"name": "Acme", "plan": "paid", "subscription_status": "active"},
        "billing_cycle": {
            "current_period_start": "2024-05-01T00:00:00+00:00",
            "current_period_end": "2024-06-01T00:00:00+00:00",
        },
        "usage": {"current_calls": 3},
    }
    seen, result = _run(
        flow,
        [lambda r: _answer(r, 503), httpx.ConnectError("refused"), lambda r: _answer(r, 200, info)],
    )
    path = "GET /v1/account/information"
    assert seen == [path, "sleep", path, "sleep", path]
    assert result.usage.current_calls == 3 and counter.value == 3


def test_the_last_failure_is_raised_typed_once_the_retries_are_spent() -> None:
    flow = call_flow(CONFIG, _endpoints.account_x_ids(), CallCounter())
    with pytest.raises(sp.APITimeoutError, match="timed out"):
        _run(flow, [httpx.ReadTimeout("slow"), httpx.ReadTimeout("slow"), httpx.ReadTimeout("slow")])


def test_a_status_that_is_never_retried_is_raised_after_one_attempt() -> None:
    flow = call_flow(CONFIG, _endpoints.account_x_ids(), CallCounter())
    answers = [lambda r: _answer(r, 403, {"ok": False, "error_code": "FORBIDDEN", "error_message": "no"})]
    with pytest.raises(sp.PermissionDeniedError):
        _run(flow, answers)
    assert answers == [], "exactly one request was made"
