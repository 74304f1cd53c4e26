"""The indexed GET /posts answers exactly what a filter-and-sort over the whole world answers."""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sports_posts.sandbox.clock import DEFAULT_START
from sports_posts.sandbox.index import trend
from sports_posts.sandbox.query import PostsQuery, parse_posts_query, run_posts_query
from sports_posts.sandbox.world import Post, World

WORLD = World(9, start=DEFAULT_START, posts=1500, posts_per_minute=3.0)
LEAGUES = sorted(WORLD.leagues)


def naive(world: World, q: PostsQuery, now: datetime) -> list[Post]:
    """The reference: every visible post, filtered, then sorted (the sandbox before its index)."""
    leagues = q.leagues if q.leagues is not None else frozenset(world.leagues)
    posts = [p for p in reversed(world.visible_posts(now)) if p.league in leagues
             and (q.since is None or p.created_at > q.since)
             and (q.min_score is None or p.score >= q.min_score)
             and (not q.highlight or p.highlight)
             and (q.media_type is None or p.media_type in q.media_type)
             and (q.custom_sources or not p.author.custom)]
    if q.effective_sort == "top":
        posts.sort(key=lambda p: p.score, reverse=True)
    elif q.effective_sort == "trending":
        posts.sort(key=lambda p: trend(p.score, p.created_at, now), reverse=True)
    return posts


queries = st.fixed_dictionaries(
    {"limit": st.integers(1, 100).map(str), "page": st.integers(1, 6).map(str)},
    optional={
        "leagues": st.lists(st.sampled_from(LEAGUES), min_size=1, max_size=4).map(",".join),
        "sort": st.sampled_from(["recent", "trending", "top"]),
        "since": st.integers(0, 80).map(lambda h: (DEFAULT_START - timedelta(hours=h, minutes=7)).isoformat()),
        "min_score": st.floats(0, 9).map(lambda f: f"{f:.1f}"),
        "highlight": st.just("true"),
        "media_type": st.sampled_from(["video", "image", "none"]),
        "custom_sources": st.sampled_from(["true", "false"]),
    },
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queries, st.integers(0, 5 * 3600))
def test_every_page_equals_the_filter_and_sort_of_the_whole_world(params: dict[str, str], later: int) -> None:
    now = DEFAULT_START + timedelta(seconds=later)  # live posts, late indexing and deletions included
    q = parse_posts_query(params, WORLD.leagues)
    result = run_posts_query(WORLD, q, now)
    expected = naive(WORLD, q, now)
    start = (q.page - 1) * q.limit
    assert [p.id for p in result.items] == [p.id for p in expected[start:start + q.limit]]
    assert result.has_next == (len(expected) > start + q.limit)
    assert result.total == len(expected)
