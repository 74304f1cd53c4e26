"""The polling algorithm driven directly, without HTTP: the actions it asks for, in order."""

from __future__ import annotations

from collections.abc import Generator
from datetime import datetime, timedelta

import httpx
import pytest

from sports_posts import APIResponseValidationError, InternalServerError, Post, PostsResponse
from sports_posts.polling import (
    Action,
    Commit,
    Deliver,
    Fetch,
    PollConfig,
    PollState,
    Sleep,
    poll_cycles,
)
from support.fake_service import T0
from tests.wire import spec_post


def post(post_id: str, seconds: float) -> Post:
    created = (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")
    return Post.model_validate(spec_post(post_id, created))


def page(*posts: Post, has_next: bool = False, number: int = 1) -> PostsResponse:
    return PostsResponse.model_validate(
        {
            "pagination": {
                "page": number,
                "limit": 100,
                "has_next": has_next,
                "has_prev": number > 1,
            },
            "items": [],
        }
    ).model_copy(update={"items": list(posts)})


def config(**overrides: object) -> PollConfig:
    options: dict[str, object] = {
        "filters": {"leagues": "NFL"},
        "interval": 60,
        "lookback": 180,
        "max_calls_per_day": None,
    }
    options.update(overrides)
    return PollConfig.build(**options)  # type: ignore[arg-type]


def start(
    cfg: PollConfig, now: float = 600.0
) -> tuple[Generator[Action, object, None], list[datetime]]:
    clock = [T0 + timedelta(seconds=now)]
    algorithm = poll_cycles(cfg, PollState.start(T0), clock=lambda: clock[0], rand=lambda: 0.5)
    return algorithm, clock


def server_error() -> InternalServerError:
    response = httpx.Response(500, request=httpx.Request("GET", "https://x/v1/posts"))
    return InternalServerError("500", response=response, body=None)


def test_the_start_is_committed_before_the_first_fetch_of_every_page() -> None:
    algorithm, _ = start(config())
    assert next(algorithm) == Commit(PollState.start(T0))
    first = algorithm.send(None)
    assert first == Fetch(
        {"leagues": "NFL", "sort": "recent", "since": T0, "limit": 100, "page": 1}
    )
    second = algorithm.send(page(post("b", 20), post("a", 10), has_next=True))
    assert isinstance(second, Fetch) and second.params["page"] == 2
    deliver = algorithm.send(page(post("a", 10), number=2))  # a repeated across the boundary
    assert isinstance(deliver, Deliver)
    assert [p.id for p in deliver.batch] == ["a", "b"]
    assert algorithm.send(None) == Sleep(60.0, "interval")


def test_the_window_trails_the_cycle_start_and_forgets_ids_below_it() -> None:
    algorithm, clock = start(config(), now=600)
    next(algorithm)
    algorithm.send(None)
    deliver = algorithm.send(page(post("new", 590), post("old", 100)))
    assert isinstance(deliver, Deliver)
    # floor = max(start, newest - 180 s, cycle start - 180 s) = 420 s; "old" is forgotten
    assert deliver.state.floor == T0 + timedelta(seconds=420)
    assert set(deliver.state.seen) == {"new"}
    assert deliver.state.since_id == "old"
    algorithm.send(None)  # Sleep
    clock[0] += timedelta(seconds=60)
    fetch = algorithm.send(None)
    assert isinstance(fetch, Fetch)
    assert fetch.params["since"] == T0 + timedelta(seconds=420)
    assert fetch.params["since_id"] == "old"


def test_an_idle_cycle_that_slides_the_window_commits_without_delivering() -> None:
    algorithm, _ = start(config(), now=600)
    next(algorithm)
    algorithm.send(None)
    action = algorithm.send(page())
    assert action == Commit(PollState(T0, T0 + timedelta(seconds=420), {}))
    assert isinstance(algorithm.send(None), Sleep)


def test_the_floor_never_moves_back_when_lookback_grows_between_runs() -> None:
    state = PollState.start(T0).advance(
        [post("a", 500)], timedelta(seconds=60), T0 + timedelta(seconds=600)
    )
    assert state.floor == T0 + timedelta(seconds=540)
    later = state.advance([], timedelta(seconds=3600), T0 + timedelta(seconds=700))
    assert later.floor == state.floor


def test_backoff_doubles_up_to_the_interval_or_a_minute() -> None:
    algorithm, _ = start(config(interval=10))
    next(algorithm)
    algorithm.send(None)
    waits = []
    for _ in range(9):
        sleep = algorithm.send(server_error())
        assert isinstance(sleep, Sleep)
        waits.append(sleep.seconds)
        assert isinstance(algorithm.send(None), Fetch)
    assert waits == [0.75, 1.5, 3.0, 6.0, 12.0, 24.0, 45.0, 45.0, 45.0]


def test_the_budget_makes_every_wait_pay_for_the_calls_before_it() -> None:
    algorithm, _ = start(config(max_calls_per_day=100))  # 864 s per call
    next(algorithm)
    algorithm.send(None)
    assert isinstance(algorithm.send(page(post("a", 1), has_next=True)), Fetch)
    assert isinstance(algorithm.send(page(post("b", 2), number=2)), Deliver)
    assert algorithm.send(None) == Sleep(2 * 864.0, "interval")
    algorithm.send(None)
    retry = algorithm.send(server_error())
    assert retry == Sleep(864.0, "retry after InternalServerError")


def test_a_body_that_does_not_match_the_spec_is_raised_not_retried() -> None:
    algorithm, _ = start(config())
    next(algorithm)
    algorithm.send(None)
    with pytest.raises(APIResponseValidationError):
        algorithm.send(APIResponseValidationError("bad body"))


def test_a_fetch_answered_with_something_else_is_a_type_error() -> None:
    algorithm, _ = start(config())
    next(algorithm)
    algorithm.send(None)
    with pytest.raises(TypeError):
        algorithm.send({"items": []})
