"""A world asked for again with the same parameters is a copy of the first one generated:
equal to a freshly generated world in every post, entity and schedule, and independent of
every other copy; other parameters never share a snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from sports_posts.sandbox import World
from sports_posts.sandbox import world as world_module
from sports_posts.sandbox.clock import DEFAULT_START
from sports_posts.sandbox.query import parse_posts_query, run_posts_query


@pytest.fixture
def generated() -> Iterator[world_module._Generated]:
    """An empty cache of snapshots for the test, the module's own put back after."""
    own = world_module._Generated()
    before = world_module._GENERATED
    world_module._GENERATED = own
    try:
        yield own
    finally:
        world_module._GENERATED = before


def _fresh(**options: Any) -> World:
    """A world generated whatever the cache holds."""
    world = World.__new__(World)
    world._now = lambda: options["start"]
    world._lock = __import__("threading").RLock()
    world._generate(options["seed"], options["start"], options.get("posts", 3000), 72.0, 2.0, 0.1, (30.0, 180.0), 4.0)
    return world


def _picture(world: World) -> Any:
    """What a world answers: its posts on the wire, its entities, its deletions and an index query."""
    query = parse_posts_query({"leagues": "NFL,NBA", "sort": "top", "limit": "20"}, world.leagues)
    return (
        [post.to_wire() for post in world.posts],
        [(t.service_id, t.full_name, t.references) for t in world.teams],
        [(p.service_id, p.name, p.team.service_id if p.team else None) for p in world.players],
        [(s.author_id, s.username) for s in world.sources],
        [(g.league, g.home.code, g.away.code, g.start_time) for g in world.games],
        sorted(p.id for p in world.deleted_posts(world.start)),
        [p.id for p in run_posts_query(world, query, world.start).items],
    )


def test_the_third_world_of_a_seed_is_a_copy_equal_to_a_generated_one(generated: world_module._Generated) -> None:
    worlds = [World(11, start=DEFAULT_START, posts=200) for _ in range(3)]
    assert len(generated._snapshots) == 1  # snapshotted when asked for the second time
    expected = _picture(_fresh(seed=11, start=DEFAULT_START, posts=200))
    for world in worlds:
        assert _picture(world) == expected


def test_copies_are_independent_and_live_activity_matches_a_generated_world(
    generated: world_module._Generated,
) -> None:
    first, second, third, fourth = (World(5, start=DEFAULT_START, posts=200) for _ in range(4))
    reference = _fresh(seed=5, start=DEFAULT_START, posts=200)
    third.delete(third.posts[0].id, DEFAULT_START)
    third.teams[0].name = "Renamed"
    later = DEFAULT_START + timedelta(hours=2)
    fourth.sync(later)
    reference.sync(later)
    assert [p.to_wire() for p in fourth.posts] == [p.to_wire() for p in reference.posts]  # the live posts too
    assert fourth.posts[0].deleted_at == reference.posts[0].deleted_at
    assert fourth.teams[0].name == reference.teams[0].name != "Renamed"
    assert second.posts[0].deleted_at is first.posts[0].deleted_at is reference.posts[0].deleted_at
    assert len(second.posts) == len(first.posts) < len(fourth.posts)
    assert fourth.lock is not third.lock and fourth.posts[0] is not third.posts[0]


@pytest.mark.parametrize("other", [{"seed": 6}, {"start": DEFAULT_START + timedelta(minutes=1)}, {"posts": 101}])
def test_other_parameters_never_share_a_snapshot(generated: world_module._Generated, other: dict[str, Any]) -> None:
    base: dict[str, Any] = {"seed": 5, "start": DEFAULT_START, "posts": 100}
    for _ in range(2):  # a snapshot is kept from the second
        World(base["seed"], start=base["start"], posts=base["posts"])
    assert len(generated._snapshots) == 1
    options = {**base, **other}
    world = World(options["seed"], start=options["start"], posts=options["posts"])
    assert _picture(world) == _picture(_fresh(**options))


def test_a_world_made_once_is_not_kept_and_few_small_worlds_are(generated: world_module._Generated) -> None:
    World(1, start=DEFAULT_START, posts=50)
    assert generated._snapshots == {}  # asked for once: nothing kept (a system clock's start is new each time)
    generated.KEPT = 3  # type: ignore[misc]
    for seed in range(generated.KEPT + 3):
        World(seed, start=DEFAULT_START, posts=50)
        World(seed, start=DEFAULT_START, posts=50)
    assert len(generated._snapshots) == generated.KEPT
    assert {key[0] for key in generated._snapshots} == set(range(3, generated.KEPT + 3))  # the most recent
    generated.LARGEST = 1000  # type: ignore[misc]  # a world asked for 50 posts holds about 600 (its games' too)
    World(99, start=DEFAULT_START, posts=1500)
    World(99, start=DEFAULT_START, posts=1500)
    assert all(key[0] != 99 for key in generated._snapshots)
    generated.BUDGET = 2 * max(map(len, generated._snapshots.values())) + 1  # type: ignore[misc]
    World(98, start=DEFAULT_START, posts=50)
    World(98, start=DEFAULT_START, posts=50)
    assert len(generated._snapshots) == 2 and next(reversed(list(generated._snapshots)))[:2] == (98, DEFAULT_START)
