"""The indexed GET /posts answers exactly what a filter-and-sort over the whole world answers."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sports_posts.sandbox import index
from sports_posts.sandbox.clock import DEFAULT_START
from sports_posts.sandbox.index import trend
from sports_posts.sandbox.query import PostsQuery, parse_posts_query, run_posts_query
from sports_posts.sandbox.world import Post, World

WORLD = World(9, start=DEFAULT_START, posts=1500, posts_per_minute=3.0)
LEAGUES = sorted(WORLD.leagues)
LATER = 5 * 3600
STEADY = sorted({p.id for p in WORLD.visible_posts(DEFAULT_START)}
                & {p.id for p in WORLD.visible_posts(DEFAULT_START + timedelta(seconds=LATER))})
"""Posts visible through the whole span the test draws ``now`` from: valid since_id values."""
TEAM_IDS = sorted({str(t.service_id) for p in WORLD.posts for t in p.teams})
PLACES = [(40.7, -74.0), (51.5, -0.1), (19.1, 72.9), (-33.9, 151.2)]


def _km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """Great-circle distance, written independently of the sandbox's own."""
    a = (math.sin(math.radians(lat2 - lat1) / 2) ** 2 + math.cos(math.radians(lat1)) * math.cos(math.radians(lat2))
         * math.sin(math.radians(lng2 - lng1) / 2) ** 2)
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(a)))


def naive(world: World, q: PostsQuery, now: datetime) -> list[Post]:
    """The reference: every visible post, filtered, then sorted (the sandbox before its index)."""
    leagues = q.leagues if q.leagues is not None else frozenset(world.leagues)
    teams = {int(v) for v in q.teams} if q.teams is not None else None
    reference = world.get_post(q.since_id) if q.since_id is not None else None
    posts = [p for p in reversed(world.visible_posts(now))
             if (p.league in leagues or teams is not None)
             and (teams is None or any(t.service_id in teams for t in p.teams))
             and (q.since is None or p.created_at > q.since)
             and (reference is None or p.sort_key() > reference.sort_key())
             and (q.min_score is None or p.score >= q.min_score)
             and (not q.highlight or p.highlight)
             and (not q.has_player or len(p.players) > 0)
             and (q.media_type is None or p.media_type in q.media_type)
             and (q.aspect_ratio is None or p.aspect_ratio == q.aspect_ratio)
             and (q.min_duration is None or (p.media_type != "none" and p.max_duration_ms >= q.min_duration))
             and (q.user_location is None or q.user_location in p.author.regions)
             and (q.lat is None or q.lng is None
                  or (p.geo is not None and _km(q.lat, q.lng, *p.geo) <= q.radius_km))
             and (q.custom_sources or not p.author.custom)]
    if q.effective_sort == "top":
        posts.sort(key=lambda p: p.score, reverse=True)
    elif q.effective_sort == "trending":
        posts.sort(key=lambda p: trend(p.score, p.created_at, now), reverse=True)
    return posts


def _same_as_naive(world: World, params: dict[str, str], now: datetime) -> None:
    """The page the sandbox answers is the reference's slice, with its has_next and total."""
    q = parse_posts_query(params, world.leagues)
    result = run_posts_query(world, q, now)
    expected = naive(world, q, now)
    start = (q.page - 1) * q.limit
    assert [p.id for p in result.items] == [p.id for p in expected[start:start + q.limit]], now
    assert result.has_next == (len(expected) > start + q.limit)
    assert result.total == len(expected)


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
        "aspect_ratio": st.sampled_from(["landscape", "portrait", "square"]),
        "min_duration": st.integers(0, 90_000).map(str),
        "has_player": st.sampled_from(["true", "false"]),
        "user_location": st.sampled_from(["US", "GB", "IN", "BR"]),
        "since_id": st.sampled_from(STEADY),
    },
).flatmap(lambda p: st.one_of(
    st.just(p),
    # team mode: teams replace the league selection
    st.lists(st.sampled_from(TEAM_IDS), min_size=1, max_size=3).map(
        lambda ids: {**{k: v for k, v in p.items() if k != "leagues"}, "teams": ",".join(ids), "id_type": "service"}),
    # nearby mode
    st.tuples(st.sampled_from(PLACES), st.sampled_from([50, 800, 4830])).map(
        lambda g: {**p, "lat": str(g[0][0]), "lng": str(g[0][1]), "radius_km": str(g[1])}),
))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queries, st.integers(0, LATER))
def test_every_page_equals_the_filter_and_sort_of_the_whole_world(params: dict[str, str], later: int) -> None:
    now = DEFAULT_START + timedelta(seconds=later)  # live posts, late indexing and deletions included
    _same_as_naive(WORLD, params, now)


def test_a_kept_trending_ranking_follows_the_clock_both_ways() -> None:
    # A few hundred posts are ranked whole and the ranking is kept while every post's whole-hour
    # age holds: asking again as time moves on (and back: a test may set the clock back) must
    # re-rank exactly when an age changes.
    world = World(3, start=DEFAULT_START, posts=300, posts_per_minute=0.0, deletions_per_hour=0.0)
    params = {"sort": "trending", "leagues": "NFL,NBA", "limit": "100"}
    steps = [DEFAULT_START + timedelta(minutes=7 * k) for k in range(40)]
    for now in steps + steps[::-1]:
        _same_as_naive(world, params, now)
        _same_as_naive(world, params, now)  # the second ask reads the kept ranking


def test_a_kept_trending_ranking_takes_in_a_post_published_since() -> None:
    world = World(3, start=DEFAULT_START, posts=300, posts_per_minute=0.0, deletions_per_hour=0.0)
    params = {"sort": "trending", "leagues": "NHL", "limit": "10"}
    _same_as_naive(world, params, DEFAULT_START)
    post = world.publish(league="NHL", created_at=DEFAULT_START - timedelta(minutes=5), score=9.9)
    _same_as_naive(world, params, DEFAULT_START)
    q = parse_posts_query(params, world.leagues)
    assert post.id in [p.id for p in run_posts_query(world, q, DEFAULT_START).items]


def test_highlights_of_a_league_that_has_none_yet_is_an_empty_page() -> None:
    # A world without history (it starts empty, a test publishes what it needs).
    world = World(3, start=DEFAULT_START, posts=0, history_hours=0, posts_per_minute=0.0, deletions_per_hour=0.0)
    assert world.posts == []
    world.publish(league="NBA", highlight=False)
    world.publish(league="NFL", highlight=True, media_type="video")
    for leagues, found in (("NBA", 0), ("NBA,NFL", 1)):
        q = parse_posts_query({"leagues": leagues, "highlight": "true", "sort": "recent"}, world.leagues)
        result = run_posts_query(world, q, DEFAULT_START)
        assert len(result.items) == found and result.total == found


MEMO_QUERIES = [
    {"sort": "trending", "limit": "20"},
    {"sort": "trending", "limit": "7", "page": "3", "min_score": "6.0"},
    {"sort": "trending", "limit": "50", "media_type": "video", "highlight": "true"},
    {"sort": "trending", "limit": "10", "leagues": "NFL,NBA,MLB,NHL,EPL"},
    {"sort": "trending", "limit": "10", "leagues": "NFL,NBA,MLB,NHL,EPL", "has_player": "true"},
]


@pytest.mark.parametrize("kept_posts", [2000, 5])
def test_a_search_asked_again_at_the_same_instant_is_replayed_for_every_filter(
    kept_posts: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A manual clock asks the same instant again and again: the second ask keeps the search
    # (unfiltered, read as far as a reader took it) and the others replay it under their own
    # filter; past the posts kept (5 here), a reader searches again and skips them.
    monkeypatch.setattr(index, "_MEMO_POSTS", kept_posts)
    world = World(5, start=DEFAULT_START, posts=1500, posts_per_minute=0.0, deletions_per_hour=0.0)
    for minutes in (0, 0, 25, 61, 61, 200):
        now = DEFAULT_START + timedelta(minutes=minutes)
        for _ in range(3):
            for params in MEMO_QUERIES:
                _same_as_naive(world, params, now)
    kept = world.index._searched.values()  # the total walked every search to its end
    assert kept and all(0 < len(memo.posts) <= kept_posts for memo in kept)
    now = DEFAULT_START + timedelta(minutes=200)
    post = world.publish(league="NFL", created_at=now - timedelta(minutes=1), score=9.9)
    q = parse_posts_query(MEMO_QUERIES[0], world.leagues)
    assert run_posts_query(world, q, now).items[0].id == post.id  # a publish is a new version
    _same_as_naive(world, MEMO_QUERIES[0], now)


def _lists(built: index.PostIndex) -> dict[str, object]:
    """Every ordered list of an index, by where it is kept."""
    out: dict[str, object] = {}
    for name in ("_time", "_score", "_highlights"):
        for league, kept in getattr(built, name).items():
            out[f"{name}:{league}"] = (kept.keys, [p.id for p in kept.items])
    for league, hours in built._hours.items():
        for hour, kept in hours.items():
            out[f"_hours:{league}:{hour}"] = (kept.keys, [p.id for p in kept.items])
    return out


def test_indexing_many_at_once_builds_the_index_one_at_a_time_builds() -> None:
    posts = WORLD.posts[:700]
    one_by_one, at_once, in_two = index.PostIndex(), index.PostIndex(), index.PostIndex()
    for post in posts:
        one_by_one.add(post)
    at_once.add_many(posts)
    for post in reversed(posts[:350]):
        in_two.add(post)
    in_two.add_many(posts[350:])  # many added to an index that holds posts already
    expected = _lists(one_by_one)
    assert _lists(at_once) == expected and _lists(in_two) == expected
    for built in (at_once, in_two):
        assert (built.max_score, built._oldest_hour) == (one_by_one.max_score, one_by_one._oldest_hour)
    assert at_once._version == one_by_one._version == len(posts)
