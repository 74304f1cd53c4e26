"""The polling tests' fake of GET /posts (support/fake_service.py) reads the posts in creation
order from the ``since`` it is asked for: its pages equal those of a filter and sort of every
post, whatever was published, deleted or replaced in between."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from support.fake_service import T0, FakeClock, FakePost, FakePostsService

LEAGUES = ("NFL", "NBA", "MLB")
posts = st.lists(st.tuples(st.integers(0, 50), st.integers(0, 20), st.sampled_from(LEAGUES), st.booleans()),
                 max_size=40)
queries = st.fixed_dictionaries({"limit": st.integers(1, 10).map(str)}, optional={
    "page": st.integers(1, 4).map(str),
    "since": st.integers(-5, 55).map(lambda s: (T0 + timedelta(seconds=s)).isoformat()),
    "since_id": st.integers(0, 45).map(lambda n: f"p{n}"),
    "leagues": st.lists(st.sampled_from([*LEAGUES, "ALL", "nba"]), min_size=1, max_size=2).map(",".join),
})


def _reference(service: FakePostsService, q: dict[str, str]) -> tuple[int, object]:
    """The page as a filter and sort of every post would answer it (same errors first)."""
    now = service.clock.now
    items = [p for p in service.posts.values() if not p.deleted and p.indexed_at <= now]
    if "leagues" in q:
        wanted = {x.strip().upper() for x in q["leagues"].split(",")}
        if "ALL" not in wanted:
            items = [p for p in items if p.league.upper() in wanted]
    if "since" in q:
        items = [p for p in items if p.created_at > datetime.fromisoformat(q["since"])]
    if "since_id" in q:
        ref = service.posts.get(q["since_id"])
        if ref is None or ref.deleted:
            return 400, "SINCE_ID_NOT_FOUND"
        items = [p for p in items if p.created_at > ref.created_at]
    items.sort(key=lambda p: (p.created_at, p.id), reverse=True)
    limit, page = int(q["limit"]), int(q.get("page", "1"))
    start = (page - 1) * limit
    return 200, ([p.id for p in items[start:start + limit]], start + limit < len(items))


def _answer(service: FakePostsService, q: dict[str, str]) -> tuple[int, object]:
    request = httpx.Request("GET", "https://fake.sports-posts.test/v1/posts",
                            params={**q, "sort": "recent"}, headers={"Authorization": "Bearer k"})
    response = service.handler(request)
    body = json.loads(response.content)
    if response.status_code != 200:
        return response.status_code, body["error_code"]
    return 200, ([item["id"] for item in body["items"]], body["pagination"]["has_next"])


@settings(max_examples=80, deadline=None)
@given(posts, st.lists(st.tuples(queries, st.integers(0, 30), st.integers(0, 45)), min_size=1, max_size=4))
def test_every_page_equals_a_filter_and_sort_of_every_post(made: list[tuple[int, int, str, bool]],
                                                           asked: list[tuple[dict[str, str], int, int]]) -> None:
    service = FakePostsService(FakeClock(T0 + timedelta(seconds=30)))
    for n, (created, delay, league, deleted) in enumerate(made):
        service.publish(f"p{n}", created, delay=delay, league=league)
        if deleted:
            service.delete(f"p{n}")
    for q, later, changed in asked:
        assert _answer(service, q) == _reference(service, q)
        service.clock.advance(later)
        # a post published, or replaced through the table as some tests do, moves in the order
        service.publish(f"p{changed}", changed, delay=later % 7, league=LEAGUES[later % 3])
        service.posts[f"q{later}"] = FakePost(f"q{later}", T0 + timedelta(seconds=changed), T0)
        assert _answer(service, q) == _reference(service, q)
