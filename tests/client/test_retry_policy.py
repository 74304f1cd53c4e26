"""One retry policy: the client's and the poller's waits come from the same ``RetryPolicy``,
their differences (caps, jitter, what is retried, how long a ``Retry-After`` may be) its fields."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import httpx
import pytest

from sports_posts import APIConnectionError, APIStatusError
from sports_posts._errors import status_error_from_response
from sports_posts._transport import CLIENT_RETRY, RetryPolicy
from sports_posts.polling import PollConfig
from sports_posts.polling._algorithm import MAX_WAIT, retry_policy

DAY = 86400.0


def answer(status: int, retry_after: Optional[float] = None) -> APIStatusError:
    response = httpx.Response(status, request=httpx.Request("GET", "https://api.example/v1/posts"))
    return status_error_from_response(response, retry_after=retry_after)


def poller_policy(interval: float = 60.0, rand: float = 0.5, told: Optional[list[float]] = None) -> RetryPolicy:
    config = PollConfig.build(filters={}, interval=interval, lookback=180, max_calls_per_day=None)
    policy = retry_policy(config, lambda: rand)
    return policy if told is None else replace(policy, on_long_retry_after=told.append)


def test_the_client_backs_off_half_a_second_doubling_to_eight_plus_up_to_half_a_second() -> None:
    low = RetryPolicy(rand=lambda: 0.0)
    high = RetryPolicy(rand=lambda: 0.999)
    assert [low.backoff(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert [round(high.backoff(n), 2) for n in range(5)] == [1.0, 1.5, 2.5, 4.5, 8.0]


def test_the_poller_backs_off_one_second_doubling_to_its_cap_half_of_it_at_random() -> None:
    policy = poller_policy(interval=10, rand=0.5)
    waits = [policy.wait(answer(500), n) for n in range(8)]
    assert waits == [0.75, 1.5, 3.0, 6.0, 12.0, 24.0, 45.0, 45.0]  # the cap: a minute
    assert poller_policy(interval=600, rand=0.5).backoff(20) == 450.0  # or the interval


def test_a_quota_429_that_names_no_time_backs_off_up_to_an_hour_for_the_poller_only() -> None:
    assert poller_policy(rand=0.0).wait(answer(429), 30) == 1800.0  # half the hour fixed
    assert poller_policy(rand=0.0).wait(answer(503), 30) == 30.0  # half the minute
    assert RetryPolicy(rand=lambda: 0.0).wait(answer(429), 30) == 8.0


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_both_retry_the_statuses_that_may_recover(status: int) -> None:
    assert CLIENT_RETRY.retries(answer(status)) and poller_policy().retries(answer(status))


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410])
def test_neither_retries_a_certain_failure(status: int) -> None:
    assert not CLIENT_RETRY.retries(answer(status)) and not poller_policy().retries(answer(status))


def test_the_poller_retries_every_5xx_and_connection_error_the_client_only_the_gateways() -> None:
    assert poller_policy().retries(answer(501)) and not CLIENT_RETRY.retries(answer(501))
    assert poller_policy().retries(APIConnectionError("reset")) and CLIENT_RETRY.retries(APIConnectionError("reset"))


def test_a_retry_after_longer_than_a_minute_is_raised_by_the_client_and_waited_by_the_poller() -> None:
    told: list[float] = []
    assert not CLIENT_RETRY.retries(answer(429, retry_after=61))
    assert CLIENT_RETRY.wait(answer(429, retry_after=60), 0) == 60
    policy = poller_policy(told=told)
    assert policy.retries(answer(429, retry_after=3600)) and policy.wait(answer(429, retry_after=3600), 0) == 3600
    assert told == []
    assert policy.wait(answer(429, retry_after=1e300), 0) == MAX_WAIT == DAY
    assert told == [1e300]  # the poller's warning


def test_a_retry_after_of_zero_is_waited_by_the_client_and_floored_at_the_back_off_by_the_poller() -> None:
    assert CLIENT_RETRY.wait(answer(429, retry_after=0), 2) == 0
    assert poller_policy(rand=0.5).wait(answer(429, retry_after=0), 2) == 3.0


def test_a_503s_retry_after_sets_the_clients_wait_while_the_poller_backs_off() -> None:
    assert CLIENT_RETRY.wait(answer(503, retry_after=7), 0) == 7
    assert poller_policy(rand=0.5).wait(answer(503, retry_after=7), 0) == 0.75
