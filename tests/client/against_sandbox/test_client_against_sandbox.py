"""The sync and async clients against the sandbox over loopback: every endpoint, mode and status."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

import sports_posts as sp
from sports_posts._request import APICall
from sports_posts.sandbox import BurstLimit, ChaosSettings, Sandbox
from tests.runner import Runner


def ONE_POST(c: Any) -> Any:
    """One call: the first post of the first page (a page would otherwise be walked to its end)."""
    return c.posts.list(limit=1).iter_items(max_items=1)


def test_every_mode_returns_matching_posts(runner: Runner, sandbox: Sandbox) -> None:
    team = sandbox.world.team("NBA", "BOS")
    trending = runner.run(lambda c: c.posts.trending(limit=10).iter_items(max_items=10))
    assert len(list(trending)) == 10

    league = runner.run(lambda c: c.posts.by_league("nba", limit=25))
    assert league and all(p.league == "NBA" for p in league)
    assert all(p.author is not None and p.author_username for p in league), "both author forms filled"

    by_team = runner.run(lambda c: c.posts.by_team([str(team.service_id)], id_type="service", limit=50))
    assert by_team and all(any(t.service_id == team.service_id for t in p.teams) for p in by_team)

    player = next(pl for p in by_team for pl in p.players)
    by_player = runner.run(lambda c: c.posts.by_player([player.provider1_guid_id], id_type="provider1_guid"))
    assert by_player and all(any(pl.service_id == player.service_id for pl in p.players) for p in by_player)

    nearby = runner.run(lambda c: c.posts.nearby(team.lat, team.lng, radius_km=30, limit=100))
    assert nearby

    soccer = runner.run(lambda c: c.posts.by_sport("soccer", limit=100))
    assert soccer and {p.league for p in soccer} <= {"EPL", "MLS", "FIFA", "SOCCER"}

    game = sandbox.world.games_of("NFL")[0]
    in_game = runner.run(
        lambda c: c.posts.for_game((str(game.home.service_id), str(game.away.service_id)), game.start_time,
                                   include_pregame=True)
    )
    assert all({t.service_id for t in p.teams} & {game.home.service_id, game.away.service_id} for p in in_game)


def test_filters_are_applied_by_the_service(runner: Runner) -> None:
    posts = runner.run(lambda c: c.posts.list(leagues="NFL,NHL", highlight=True, min_score=7, limit=100))
    assert posts and all(p.highlight and p.league in ("NFL", "NHL") for p in posts)
    videos = runner.run(lambda c: c.posts.list(media_type="video", min_duration=10_000, limit=50))
    assert videos and all(p.media_type == "video" for p in videos)


def test_pagination_walks_every_page_once(runner: Runner, sandbox: Sandbox) -> None:
    expected = {p.id for p in sandbox.visible_posts("MLB")}
    posts = runner.run(lambda c: c.posts.list(leagues="MLB", sort="recent", limit=100, custom_sources=True))
    assert len(posts) == len(expected) and {p.id for p in posts} == expected
    assert [p.created_at for p in posts] == sorted((p.created_at for p in posts), reverse=True)


def test_since_and_since_id(runner: Runner, sandbox: Sandbox) -> None:
    recent = runner.run(lambda c: c.posts.list(leagues="NHL", sort="recent", limit=20).iter_items(max_items=20))
    pivot = recent[10]
    after = runner.run(lambda c: c.posts.list(leagues="NHL", since=pivot.created_at, limit=100))
    assert after and all(p.created_at > pivot.created_at for p in after)
    after_id = runner.run(lambda c: c.posts.list(leagues="NHL", since_id=pivot.id, limit=100))
    assert {p.id for p in after_id} == {p.id for p in after}


def test_account_compliance_and_ids(runner: Runner, sandbox: Sandbox) -> None:
    info = runner.run(lambda c: c.account.information())
    assert info.company.plan == "paid" and info.billing_cycle.current_period_start is not None
    victim = sandbox.visible_posts("EPL")[-1]
    sandbox.delete_post(victim.id)
    assert victim.id in runner.run(lambda c: c.account.x_ids()).ids_to_delete

    teams = runner.run(lambda c: c.ids.teams("NBA", reference_id="nba_id"))
    assert teams.count == len(teams.items) == 30
    assert [t.location for t in teams] == sorted(t.location for t in teams)
    assert all(t.reference for t in teams)
    one = runner.run(lambda c: c.ids.teams("NBA", reference_id="nba_id", lookup=teams.items[3].reference))
    assert [t.service_id for t in one] == [teams.items[3].service_id]
    players = runner.run(lambda c: c.ids.list("players", "NBA"))
    assert players.items and players.items[0].model_extra


def test_usage_counts_calls_and_information_is_free(runner: Runner, sandbox: Sandbox) -> None:
    key = sandbox.add_key("paid")

    def spend(c: Any) -> Any:
        if isinstance(c, sp.AsyncSportsPosts):
            async def go() -> Any:
                await c.posts.list(limit=1)
                await c.account.x_ids()
                return await c.account.information()
            return go()
        c.posts.list(limit=1)
        c.account.x_ids()
        return c.account.information()

    info = runner.run(spend, api_key=key)
    assert info.usage.current_calls == 2 == sandbox.calls(key)


@pytest.mark.parametrize("auth_scheme", ["bearer", "bare"])
def test_both_authorization_forms(runner: Runner, auth_scheme: str) -> None:
    assert runner.run(lambda c: c.account.information(), auth_scheme=auth_scheme).company.name


def test_status_errors_from_the_service(runner: Runner, sandbox: Sandbox) -> None:
    with pytest.raises(sp.AuthenticationError) as auth:
        runner.run(lambda c: c.posts.list(), api_key="sk_wrong")
    assert auth.value.error_code == "UNAUTHORIZED" and "sk_wrong" not in str(auth.value)

    inactive = sandbox.add_key("paid", active=False)
    with pytest.raises(sp.PaymentRequiredError):
        runner.run(lambda c: c.posts.list(), api_key=inactive)

    nba_only = sandbox.add_key("paid", leagues=["NBA"])
    with pytest.raises(sp.PermissionDeniedError) as forbidden:
        runner.run(lambda c: c.posts.list(leagues="NFL"), api_key=nba_only)
    assert forbidden.value.error_code == "FORBIDDEN"

    with pytest.raises(sp.NotFoundError):
        runner.run(lambda c: c.posts.by_team(["999999"], id_type="service"))
    with pytest.raises(sp.ParameterError):  # a closed vocabulary: refused before sending
        runner.run(lambda c: c.posts.by_sport("curling"))
    with pytest.raises(sp.InvalidParameterError) as invalid:  # the service refuses it too
        runner.run(lambda c: c._request(APICall("GET", "/posts", {"sports": "curling"}, bytes)))
    assert "sports" in str(invalid.value)
    with pytest.raises(sp.ParameterError):  # not an assigned code: refused before sending
        runner.run(lambda c: c.posts.list(user_location="ZZ"))
    with pytest.raises(sp.InvalidParameterError):  # sent past the check, the service refuses it
        runner.run(lambda c: c.posts.list(user_location=sp.Unchecked("ZZ")))
    with pytest.raises(sp.SinceIdNotFoundError):
        runner.run(lambda c: c.posts.list(since_id="no-such-post"))
    with pytest.raises(sp.GoneError):
        runner.run(lambda c: c._request(APICall("GET", "/posts/leagues", {"leagues": "NFL"}, bytes)))


def test_free_plan_quota_ends_in_a_rate_limit_error(runner: Runner, sandbox: Sandbox, retry_sleeps: list[float]) -> None:
    free = sandbox.add_key("free", monthly_quota=3)
    for _ in range(3):
        runner.run(ONE_POST, api_key=free)
    with pytest.raises(sp.RateLimitError) as limited:
        runner.run(ONE_POST, api_key=free)
    assert limited.value.error_code == "RATE_LIMITED"
    assert limited.value.retry_after is None or limited.value.retry_after > 60, "a monthly quota is not slept"


def test_burst_retry_after_is_honoured(runner: Runner, sandbox: Sandbox, retry_sleeps: list[float]) -> None:
    key = sandbox.add_key("paid", burst=BurstLimit(requests=1, per_seconds=5))
    runner.run(ONE_POST, api_key=key)
    with pytest.raises(sp.RateLimitError) as limited:
        runner.run(ONE_POST, api_key=key, max_retries=2)
    assert limited.value.retry_after is not None and 0 < limited.value.retry_after <= 5
    assert len(retry_sleeps) == 2 and all(0 < wait <= 5 for wait in retry_sleeps)


def test_burst_is_waited_out_then_the_call_succeeds(runner: Runner, sandbox: Sandbox) -> None:
    runner.waits.on_wait = sandbox.advance  # each wait moves the sandbox's clock on by its length
    waits = runner.waits.waits
    key = sandbox.add_key("paid", burst=BurstLimit(requests=1, per_seconds=5))
    runner.run(ONE_POST, api_key=key)
    assert len(runner.run(ONE_POST, api_key=key)) == 1
    assert len(waits) == 1 and 0 < waits[0] <= 5


CHAOS = [
    ("429", ChaosSettings(rate_429=1.0), sp.RateLimitError),
    ("500", ChaosSettings(rate_500=1.0), sp.InternalServerError),
    ("502", ChaosSettings(rate_502=1.0), sp.InternalServerError),
    ("503", ChaosSettings(rate_503=1.0), sp.InternalServerError),
    ("504", ChaosSettings(rate_504=1.0), sp.InternalServerError),
    ("drop", ChaosSettings(drop_rate=1.0), sp.APIConnectionError),
    ("malformed", ChaosSettings(malformed_rate=1.0), sp.APIResponseValidationError),
    ("html", ChaosSettings(html_rate=1.0), sp.APIResponseValidationError),
    ("truncated", ChaosSettings(truncated_rate=1.0), sp.APIResponseValidationError),
]


@pytest.mark.parametrize(("name", "chaos", "error"), CHAOS, ids=[c[0] for c in CHAOS])
def test_every_fault_ends_in_a_typed_error(
    runner: Runner, sandbox: Sandbox, name: str, chaos: ChaosSettings, error: type[Exception]
) -> None:
    key = sandbox.add_key("paid", chaos=chaos)
    with pytest.raises(error):
        runner.run(lambda c: c.posts.list(limit=5), api_key=key, max_retries=1)


def test_intermittent_faults_are_retried_to_success(runner: Runner, sandbox: Sandbox) -> None:
    chaos = ChaosSettings(rate_500=0.15, rate_502=0.1, rate_503=0.1, drop_rate=0.1)
    key = sandbox.add_key("paid", chaos=chaos)
    posts = runner.run(lambda c: c.posts.list(leagues="NHL", limit=100, custom_sources=True), api_key=key, max_retries=8)
    assert {p.id for p in posts} == {p.id for p in sandbox.visible_posts("NHL")}


def test_live_posts_appear_as_time_passes(runner: Runner, sandbox: Sandbox) -> None:
    before = {p.id for p in runner.run(lambda c: c.posts.list(sort="recent", limit=100).iter_items(max_items=100))}
    sandbox.advance(timedelta(minutes=10).total_seconds())
    after = runner.run(lambda c: c.posts.list(sort="recent", limit=100).iter_items(max_items=100))
    assert {p.id for p in after} - before, "new posts were published during ten minutes"
