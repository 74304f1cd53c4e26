"""A scripted loopback "proxy" in front of the fake service, over real sockets and real
HTTP: it rewrites every answer's ``Date`` (as nginx writes its own), or serves a post dated
a year ahead. The poller (fake clock, fake sleep) loses no post."""

from __future__ import annotations

import email.utils
from datetime import datetime, timedelta
from typing import Callable, Optional

import httpx
import pytest

from sports_posts import SportsPosts
from support.fake_service import T0, FakeClock, FakePost, FakePostsService
from tests.client.hostile.server import Connection, ScriptedServer, head

from .conftest import TimeHarness, ids, make_poller

Rewrite = Callable[[int, datetime], datetime]


def proxy(service: FakePostsService, rewrite: Rewrite) -> Callable[[Connection], None]:
    """Answer each request with the fake service's answer, its ``Date`` rewritten to
    ``rewrite(n, service_now)`` for the n-th answer."""
    count = [0]

    def script(conn: Connection) -> None:
        method, target, _ = conn.head.decode("latin-1").split("\r\n", 1)[0].split(" ", 2)
        request = httpx.Request(
            method, "http://fake.sports-posts.test" + target,
            headers={"Authorization": conn.header("authorization")},
        )
        now = service.clock.now
        answer = service.handler(request)
        when = rewrite(count[0], now)
        count[0] += 1
        body = answer.content
        headers = {
            "Content-Type": "application/json",
            "Content-Length": str(len(body)),
            "Date": email.utils.format_datetime(when, usegmt=True),
        }
        if "retry-after" in answer.headers:
            headers["Retry-After"] = answer.headers["retry-after"]
        conn.send(head(f"{answer.status_code} {answer.reason_phrase}", headers) + body)

    return script


def run_through(
    service: FakePostsService, harness: TimeHarness, rewrite: Rewrite, *, since: Optional[datetime] = T0
) -> list[str]:
    harness.until = T0 + timedelta(minutes=31)
    with ScriptedServer(proxy(service, rewrite)) as server, SportsPosts(
        api_key="sk_test_date_proxy", base_url=server.base_url, max_retries=0
    ) as client:
        return ids(list(make_poller(client, harness, since=since, leagues="NFL")))


def feed(service: FakePostsService) -> list[str]:
    expected = []
    for n in range(90):  # a post every 20 s for 30 minutes, each visible 5 s later
        service.publish(f"p{n:03d}", 20.0 * n + 1, delay=5)
        expected.append(f"p{n:03d}")
    return expected


@pytest.fixture
def world() -> tuple[FakePostsService, TimeHarness]:
    clock = FakeClock()
    return FakePostsService(clock), TimeHarness(clock)


@pytest.mark.parametrize(
    "rewrite",
    [
        pytest.param(lambda n, now: now + timedelta(minutes=30), id="proxy-30-min-fast"),
        pytest.param(lambda n, now: now - timedelta(minutes=30), id="proxy-30-min-slow"),
        pytest.param(lambda n, now: now + timedelta(hours=10) if n == 0 else now, id="first-date-forged"),
        pytest.param(lambda n, now: now + timedelta(hours=10) * (n % 2), id="alternating"),
    ],
)
@pytest.mark.parametrize("since", [T0, None], ids=["since", "from-now"])
def test_a_proxy_rewriting_date_loses_no_post(
    world: tuple[FakePostsService, TimeHarness], rewrite: Rewrite, since: Optional[datetime]
) -> None:
    service, harness = world
    expected = feed(service)
    assert run_through(service, harness, rewrite, since=since) == expected


def test_a_post_dated_a_year_ahead_through_the_proxy_loses_no_post(
    world: tuple[FakePostsService, TimeHarness],
) -> None:
    service, harness = world
    expected = feed(service)
    seen_at = T0 + timedelta(seconds=90)
    service.posts["bad-record"] = FakePost("bad-record", seen_at + timedelta(days=365), seen_at)
    delivered = run_through(service, harness, lambda n, now: now)
    assert sorted(delivered) == sorted([*expected, "bad-record"])
    assert len(delivered) == len(set(delivered))
