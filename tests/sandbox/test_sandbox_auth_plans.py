"""Authentication (both header forms), plans, quotas, burst limits and usage counting (spec 5, 8)."""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone

import httpx
import pytest

from sports_posts.sandbox import BurstLimit, KeyConfig, Sandbox
from sports_posts.sandbox._connect import SANDBOX_KEY_PREFIX

from .conftest import client_for

ENDPOINTS = ["/posts", "/account/information", "/account/x-ids", "/ids?entity=teams&league=NFL", "/posts/teams"]


@pytest.mark.parametrize("path", ENDPOINTS)
def test_missing_key_is_401_everywhere(sb: Sandbox, path: str) -> None:
    r = httpx.get(sb.base_url + path)
    assert r.status_code == 401
    assert r.json() == {"ok": False, "error_code": "UNAUTHORIZED", "error_message": r.json()["error_message"]}


@pytest.mark.parametrize("header", ["Bearer sp_sandbox_not_a_key", "sp_sandbox_not_a_key", "Bearer", "Basic abc"])
def test_invalid_key_is_401_and_never_echoed(sb: Sandbox, header: str) -> None:
    r = httpx.get(sb.base_url + "/posts", headers={"Authorization": header})
    assert r.status_code == 401 and r.json()["error_code"] == "UNAUTHORIZED"
    assert "not_a_key" not in r.text


@pytest.mark.parametrize("form", ["Bearer {}", "bearer {}", "{}", "Bearer   {}"])
def test_both_header_forms_are_accepted(sb: Sandbox, form: str) -> None:
    r = httpx.get(sb.base_url + "/posts", headers={"Authorization": form.format(sb.api_key)})
    assert r.status_code == 200


def test_keys_look_like_secrets_and_stay_out_of_repr(sb: Sandbox) -> None:
    # the documented sandbox prefix, then the plan, then 128 bits derived from the seed
    assert re.fullmatch(SANDBOX_KEY_PREFIX + "paid_[0-9a-f]{32}", sb.api_key)
    assert sb.api_key not in repr(sb)
    assert all(sb.api_key not in repr(a) for a in sb.accounts.all())
    other = Sandbox(seed=8, clock="manual", posts=50)
    assert other.api_key != sb.api_key
    assert Sandbox(seed=7, clock="manual", posts=50).api_key == sb.api_key


def test_inactive_key_is_402_but_may_read_its_account(fresh: Sandbox) -> None:
    key = fresh.add_key(active=False)
    with client_for(fresh, key) as c:
        assert c.get("/posts").status_code == 402
        assert c.get("/account/x-ids").status_code == 402
        info = c.get("/account/information")
    assert info.status_code == 200 and info.json()["company"]["subscription_status"] == "inactive"


def test_league_outside_the_plan_is_403(fresh: Sandbox) -> None:
    key = fresh.add_key(leagues=["NBA", "WNBA"])
    with client_for(fresh, key) as c:
        r = c.get("/posts", params={"leagues": "NFL"})
        assert r.status_code == 403 and r.json()["error_code"] == "FORBIDDEN" and "NFL" in r.json()["error_message"]
        assert c.get("/posts", params={"teams": "KC", "id_type": "code", "leagues": "NFL"}).status_code == 403
        assert c.get("/ids", params={"entity": "teams", "league": "NFL"}).status_code == 403
        assert c.get("/posts", params={"sports": "americanfootball"}).status_code == 403
        leagues = {p["league"] for p in c.get("/posts", params={"limit": 100}).json()["items"]}
    assert leagues <= {"NBA", "WNBA"}


def test_free_plan_gets_200_calls_a_month_then_429() -> None:
    # No live posts: a month of them is what advancing the clock a month would otherwise
    # materialise, and the count of calls does not depend on them.
    with Sandbox(seed=11, clock="manual", posts=600, posts_per_minute=0) as fresh:
        _free_plan_gets_200_calls_a_month_then_429(fresh)


def _free_plan_gets_200_calls_a_month_then_429(fresh: Sandbox) -> None:
    key = fresh.add_key("free")
    assert key.startswith(SANDBOX_KEY_PREFIX + "free_")
    with client_for(fresh, key) as c:
        for _ in range(200):
            assert c.get("/account/x-ids").status_code == 200
        r = c.get("/posts")
        assert r.status_code == 429 and r.json()["error_code"] == "RATE_LIMITED"
        reset = datetime(2026, 2, 1, tzinfo=timezone.utc) - fresh.now()
        assert r.headers["Retry-After"] == str(math.ceil(reset.total_seconds()))  # when the next cycle starts
        assert "2026-02-01" in r.json()["error_message"]
        info = c.get("/account/information").json()
        assert info["company"]["plan"] == "free" and info["usage"]["current_calls"] == 200
        fresh.advance(31 * 24 * 3600)  # the next billing cycle starts a new count
        assert c.get("/posts").status_code == 200
    assert fresh.calls(key) == 1


def test_account_information_is_free_and_reports_usage(fresh: Sandbox, fresh_client: httpx.Client) -> None:
    for _ in range(3):
        fresh_client.get("/posts")
    for _ in range(5):
        fresh_client.get("/account/information")
    fresh_client.get("/posts/teams")
    assert fresh.calls() == 3
    assert fresh_client.get("/account/information").json()["usage"]["current_calls"] == 3
    fresh.reset_usage()
    assert fresh.calls() == 0


def test_billing_cycle_is_the_calendar_month(fresh_client: httpx.Client) -> None:
    cycle = fresh_client.get("/account/information").json()["billing_cycle"]
    assert cycle == {"current_period_start": "2026-01-01T00:00:00+00:00", "current_period_end": "2026-02-01T00:00:00+00:00"}


def test_burst_limit_answers_429_with_retry_after(fresh: Sandbox) -> None:
    key = fresh.add_key(burst=BurstLimit(requests=3, per_seconds=10))
    with client_for(fresh, key) as c:
        assert [c.get("/posts").status_code for _ in range(3)] == [200, 200, 200]
        r = c.get("/posts")
        assert r.status_code == 429 and r.json()["error_code"] == "RATE_LIMITED"
        assert r.headers["Retry-After"] == "10"
        fresh.advance(4)
        assert c.get("/posts").headers["Retry-After"] == "6"
        fresh.advance(6)
        assert c.get("/posts").status_code == 200
    assert fresh.calls(key) == 4


def test_extra_keys_from_the_constructor() -> None:
    sb = Sandbox(seed=2, clock="manual", posts=50,
                 keys=[KeyConfig(plan="free"), KeyConfig(active=False)])
    assert len(sb.extra_keys) == 2
    assert sb.accounts.get(sb.extra_keys[0]) is not None
    named = Sandbox(seed=2, clock="manual", posts=50, keys={"sp_test_fixed_key": KeyConfig(plan="free")})
    assert named.extra_keys == ["sp_test_fixed_key"]


def test_default_key_plan_and_leagues_from_the_constructor() -> None:
    with Sandbox(seed=2, clock="manual", posts=100, plan="free", leagues="NHL") as sb, client_for(sb) as c:
        assert c.get("/account/information").json()["company"]["plan"] == "free"
        assert c.get("/posts", params={"leagues": "NBA"}).status_code == 403


def test_endpoint_outside_the_plan_is_403(fresh: Sandbox) -> None:
    key = fresh.add_key(endpoints=["posts"])
    with client_for(fresh, key) as c:
        assert c.get("/posts").status_code == 200
        r = c.get("/account/x-ids")
        assert r.status_code == 403 and r.json()["error_code"] == "FORBIDDEN" and "/account/x-ids" in r.json()["error_message"]
        assert c.get("/ids", params={"entity": "leagues", "league": "ALL"}).status_code == 403
        assert c.get("/account/information").status_code == 200
