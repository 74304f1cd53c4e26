"""``poll`` never spends the account's month by accident: an interval floor,
budget flags, a default derived from the plan (read for free), the projected calls a day
said at start, and a Ctrl-C that exits 130."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from datetime import datetime, timezone

import pytest

import sports_posts.cli._poll as cli
from sports_posts import SportsPosts
from sports_posts.cli import main
from sports_posts.sandbox import Sandbox

from .conftest import run


def _service(monkeypatch: pytest.MonkeyPatch, plan: str) -> Iterator[Sandbox]:
    with Sandbox(seed=5, plan=plan, clock="manual", posts=200, posts_per_minute=30,
                 start=datetime.now(timezone.utc)) as sb:
        monkeypatch.setenv("SPORTS_POSTS_API_KEY", sb.api_key)
        monkeypatch.setenv("SPORTS_POSTS_BASE_URL", sb.base_url)
        yield sb


@pytest.fixture
def free(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    yield from _service(monkeypatch, "free")


@pytest.fixture
def paid(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    yield from _service(monkeypatch, "paid")


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> list[float]:
    """Every wait of the poll command, recorded and played on the sandbox clock instead of slept."""
    sb: Sandbox = request.getfixturevalue("paid" if "paid" in request.fixturenames else "free")
    recorded: list[float] = []

    def wait(event: threading.Event, seconds: float) -> bool:
        recorded.append(seconds)
        sb.advance(seconds)
        return event.is_set()

    monkeypatch.setattr(cli, "_wait", wait)
    return recorded


def _spend(sb: Sandbox, calls: int) -> None:
    with SportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
        for _ in range(calls):
            client.posts.list(leagues="NFL", limit=1)


@pytest.mark.parametrize("interval", ["0.01", "0", "9.9", "-60", "nan", "inf", "soon"])
def test_an_interval_below_the_floor_is_refused_before_anything(
    interval: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["poll", "--sandbox", "--interval", interval, "--max-batches", "1"])
    err = capsys.readouterr().err
    assert status == 2 and "--interval" in err and "10" in err


def test_a_paid_plan_says_the_calls_a_day_its_interval_costs(paid: Sandbox, waits: list[float]) -> None:
    status, _, err = run("poll", "--leagues", "NFL", "--interval", "60", "--max-batches", "2", "--json")
    assert status == 0, err
    assert "sports-posts: poll: about 1,440 calls a day" in err and "--max-calls-per-day" in err
    assert waits and waits[0] == 60


def test_max_calls_per_day_paces_the_poller(paid: Sandbox, waits: list[float]) -> None:
    status, _, err = run("poll", "--leagues", "NFL", "--interval", "60", "--max-calls-per-day", "24",
                         "--max-batches", "2", "--json")
    assert status == 0, err
    assert "at most 24 calls a day (--max-calls-per-day)" in err
    assert waits and all(w >= 3600 for w in waits)  # each call paid for by an hour's wait


def test_the_free_plan_spreads_its_month_over_the_days_left(free: Sandbox, waits: list[float]) -> None:
    _spend(free, 20)
    status, _, err = run("poll", "--leagues", "NFL", "--max-batches", "2", "--json")
    assert status == 0, err
    found = re.search(r"poll: at most (\d+) calls a day \(180 calls left of 200 this billing cycle "
                      r"\(the free plan's quota\) over (\d+) days?", err)
    assert found is not None, err
    per_day, days = int(found.group(1)), int(found.group(2))
    assert 1 <= per_day <= 180 and per_day * (days - 1) <= 180
    assert waits and waits[0] >= 86400 / per_day


def test_a_spent_month_refuses_to_poll_and_costs_nothing(free: Sandbox) -> None:
    _spend(free, 3)
    before = free.calls()
    status, out, err = run("poll", "--leagues", "NFL", "--max-calls-per-month", "3")
    assert status == 1 and out == "" and free.calls() == before
    assert "3 of 3 calls" in err and "--max-calls-per-month" in err and "Traceback" not in err


def test_the_monthly_cap_stops_the_poll_when_reached(paid: Sandbox, waits: list[float]) -> None:
    _spend(paid, 2)
    status, _, err = run("poll", "--leagues", "NFL", "--max-calls-per-month", "3", "--json")
    assert status == 1, err
    assert paid.calls() <= 3 + 1  # the cycle that reached the cap is the last one
    assert "stopped at the monthly cap" in err and "of 3 calls of this billing cycle used" in err


def test_ctrl_c_during_poll_exits_130(paid: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(event: threading.Event, seconds: float) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_wait", interrupted)
    status, _, err = run("poll", "--leagues", "NFL", "--json")
    assert status == 130 and "Traceback" not in err
