"""Generated GET /posts requests: any valid combination answers a consistent page or a spec error."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sports_posts.sandbox.clock import DEFAULT_START
from sports_posts.sandbox.errors import ApiError
from sports_posts.sandbox.query import parse_posts_query, run_posts_query
from sports_posts.sandbox.world import World

WORLD = World(3, start=DEFAULT_START, posts=800)
NOW = DEFAULT_START

LEAGUES = sorted(WORLD.leagues)
params = st.fixed_dictionaries(
    {},
    optional={
        "leagues": st.lists(st.sampled_from([*LEAGUES, "ALL", "nfl"]), min_size=1, max_size=3).map(",".join),
        "sports": st.sampled_from(["soccer", "basketball", "GOLF", "americanfootball,hockey"]),
        "media_type": st.sampled_from(["image", "photo", "video", "gif", "animated_gif", "none"]),
        "aspect_ratio": st.sampled_from(["landscape", "portrait", "square"]),
        "min_score": st.floats(0, 9).map(lambda f: f"{f:.1f}"),
        "min_duration": st.integers(0, 200_000).map(str),
        "highlight": st.sampled_from(["true", "false"]),
        "has_player": st.sampled_from(["true", "false"]),
        "custom_sources": st.sampled_from(["true", "false"]),
        "user_location": st.sampled_from(["US", "gb", "IN", "FR", "BR"]),
        "sort": st.sampled_from(["recent", "trending", "top"]),
        "since": st.integers(0, 80).map(lambda h: (NOW - timedelta(hours=h)).isoformat()),
        "limit": st.integers(1, 100).map(str),
        "page": st.integers(1, 40).map(str),
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params)
def test_valid_requests_answer_a_consistent_page(p: dict[str, str]) -> None:
    query = parse_posts_query(p, WORLD.leagues)
    try:
        result = run_posts_query(WORLD, query, NOW)
    except ApiError as exc:  # pragma: no cover - no named entity, so nothing can be missing
        raise AssertionError(f"unexpected {exc.status} {exc.error_code}: {exc.message}") from None
    assert len(result.items) <= query.limit
    assert result.has_prev == (query.page > 1)
    assert result.has_next == (query.page * query.limit < result.total)
    assert len({post.id for post in result.items}) == len(result.items)
    if query.leagues is not None:
        assert all(post.league in query.leagues for post in result.items)
    if query.since is not None:
        assert all(post.created_at > query.since for post in result.items)
    if query.sort == "recent":
        keys = [post.sort_key() for post in result.items]
        assert keys == sorted(keys, reverse=True)
