"""``with_raw_response`` typed as openai-python types it: per-resource views whose methods
keep their parameters and declare a ``RawResponse`` answer (what mypy infers is checked with
the repository's mypy run, in raw_response_typing.py), and the same runtime answers as before."""

from __future__ import annotations

import asyncio

import pytest
import respx

import sports_posts as sp
from sports_posts._client import AsyncSportsPostsWithRawResponse, SportsPostsWithRawResponse
from sports_posts.resources.posts import AsyncPostsWithRawResponse, PostsWithRawResponse
from tests.client.bodies import INFO
from tests.client.conftest import API_KEY, BASE_URL, page, post
from tests.wire import spec_compliance


def test_the_views_are_the_typed_classes_and_leave_off_what_is_many_calls() -> None:
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
        raw = client.with_raw_response
        assert isinstance(raw, SportsPostsWithRawResponse)
        assert isinstance(raw.posts, PostsWithRawResponse) and raw.posts is raw.posts
        assert not hasattr(raw.posts, "poll") and not hasattr(raw.account, "compliance_sweep")
        assert not hasattr(raw.account, "compliance_sweeper")
        assert isinstance(raw.with_options(max_retries=0), SportsPostsWithRawResponse)
        assert raw.with_options.__name__ == "with_options"
        # the client's other members answer as when the view was the client itself
        assert raw.base_url == BASE_URL and raw.calls == 0 and raw.max_retries == client.max_retries  # type: ignore[attr-defined]
        assert API_KEY not in repr(raw) and "SportsPostsWithRawResponse(SportsPosts(" in repr(raw)
        with pytest.raises(AttributeError):
            raw.no_such_member  # type: ignore[attr-defined]  # noqa: B018
    plain = sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL)
    araw = plain.with_raw_response
    assert isinstance(araw, AsyncSportsPostsWithRawResponse) and isinstance(araw.posts, AsyncPostsWithRawResponse)
    assert not hasattr(araw.posts, "poll") and not hasattr(araw.account, "compliance_sweep")
    assert isinstance(araw.with_options(timeout=3.0), AsyncSportsPostsWithRawResponse)
    asyncio.run(plain.aclose())


def test_every_raw_method_answers_a_raw_response_sharing_the_call_counter() -> None:
    with respx.mock(base_url=BASE_URL) as api:
        api.get("/posts").respond(200, json=page([post("1")]))
        api.get("/account/information").respond(200, json=INFO)
        api.get("/account/x-ids").respond(200, json=spec_compliance())
        api.get("/ids").respond(200, json={"ok": True, "count": 0, "items": []})
        with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
            posts = client.with_raw_response.posts
            answers = [
                posts.list(leagues="NFL"), posts.trending(), posts.by_league("NFL"),
                posts.by_sport("football"), posts.by_team("1,2", id_type="service"),
                posts.by_player("7", id_type="service"), posts.nearby(40.7, -74.0, radius_km=5),
                posts.for_game("1,2", "2026-01-01T00:00:00Z"),
                client.with_raw_response.account.information(), client.with_raw_response.account.x_ids(),
                client.with_raw_response.ids.teams("NFL"), client.with_raw_response.ids.list("players", "NFL"),
            ]
            assert all(isinstance(a, sp.RawResponse) and a.status_code == 200 for a in answers)
            assert isinstance(answers[7].parse(), sp.SyncPage)  # type: ignore[attr-defined]
            assert client.calls == len(answers) == client.with_raw_response.calls  # type: ignore[attr-defined]


def test_async_raw_methods_answer_awaited_raw_responses() -> None:
    async def main() -> None:
        with respx.mock(base_url=BASE_URL) as api:
            api.get("/posts").respond(200, json=page([post("1")]))
            api.get("/ids").respond(200, json={"ok": True, "count": 0, "items": []})
            async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
                raw = client.with_raw_response
                game = await raw.posts.for_game("1,2", "2026-01-01T00:00:00Z")
                teams = await raw.with_options(max_retries=0).ids.teams("NFL")
                assert isinstance(game.parse(), sp.AsyncPage) and teams.parse().count == 0
                assert [p.id async for p in game.parse()] == ["1"]
                assert client.calls == 2

    asyncio.run(main())
