"""Dedupe stores: claim is atomic and first-wins; complete, release, lease and ttl per API.md."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sports_posts import ParameterError
from sports_posts.webhooks import (
    DedupeStore,
    MemoryDedupeStore,
    RedisDedupeStore,
    SQLiteDedupeStore,
)
from sports_posts.webhooks.dedupe import DEFAULT_LEASE, DEFAULT_TTL
from tests.webhooks.webhook_helpers import FakeClock

KEY = "breaking_news:1790000000000000001"


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock) -> Iterator[DedupeStore]:
    if request.param == "memory":
        yield MemoryDedupeStore(clock=clock)
    elif request.param == "sqlite":
        sqlite_store = SQLiteDedupeStore(tmp_path / "dedupe.db", clock=clock)
        yield sqlite_store
        sqlite_store.close()
    else:
        redis_client: Any = request.getfixturevalue("redis_client")
        yield RedisDedupeStore(redis_client)


def test_every_store_satisfies_the_protocol(store: DedupeStore) -> None:
    assert isinstance(store, DedupeStore)


def test_only_the_first_claim_of_a_key_succeeds(store: DedupeStore) -> None:
    assert store.claim(KEY) is True
    assert store.claim(KEY) is False
    assert store.claim("breaking_news.update:1790000000000000001") is True  # other kind, other key


def test_a_completed_key_stays_claimed_and_reports_complete(store: DedupeStore) -> None:
    assert store.claim(KEY)
    assert not store.is_complete(KEY)
    store.complete(KEY)
    assert store.is_complete(KEY)
    assert not store.claim(KEY)


def test_release_lets_the_next_retry_claim_again(store: DedupeStore) -> None:
    assert store.claim(KEY)
    store.release(KEY)
    assert not store.is_complete(KEY)
    assert store.claim(KEY)


def test_release_never_undoes_a_completed_key(store: DedupeStore) -> None:
    assert store.claim(KEY)
    store.complete(KEY)
    store.release(KEY)
    assert not store.claim(KEY)


def test_default_lifetime_covers_the_whole_retry_horizon() -> None:
    # 6 attempts with about 1+2+4+8+16 minutes between them: ~31 minutes; keep >= 24 h.
    assert DEFAULT_TTL >= 24 * 3600
    # A dead worker's claim must lapse before the service's last retries (16 min gap).
    assert DEFAULT_LEASE < 16 * 60
    for store_cls in (MemoryDedupeStore,):
        assert store_cls().ttl == DEFAULT_TTL


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_claim_of_a_dead_worker_expires_after_the_lease(kind: str, tmp_path: Path, clock: FakeClock) -> None:
    store: Any = (
        MemoryDedupeStore(lease=60, clock=clock)
        if kind == "memory"
        else SQLiteDedupeStore(tmp_path / "d.db", lease=60, clock=clock)
    )
    assert store.claim(KEY)
    clock.advance(59)
    assert not store.claim(KEY)
    clock.advance(1)
    assert store.claim(KEY)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_completed_key_is_forgotten_only_after_the_ttl(kind: str, tmp_path: Path, clock: FakeClock) -> None:
    store: Any = (
        MemoryDedupeStore(clock=clock) if kind == "memory" else SQLiteDedupeStore(tmp_path / "d.db", clock=clock)
    )
    assert store.claim(KEY)
    store.complete(KEY)
    clock.advance(DEFAULT_TTL - 1)
    assert not store.claim(KEY)
    clock.advance(1)
    assert store.claim(KEY)


def test_redis_claims_expire_after_the_lease_and_keys_after_the_ttl(redis_client: Any) -> None:
    store = RedisDedupeStore(redis_client, lease=60, ttl=DEFAULT_TTL)
    assert store.claim(KEY)
    stored = store.prefix + KEY
    assert 59_000 < redis_client.pttl(stored) <= 60_000
    redis_client.pexpireat(stored, 1)  # the lease runs out: Redis deletes the key itself
    assert store.claim(KEY)
    store.complete(KEY)
    assert DEFAULT_TTL * 1000 - 5_000 < redis_client.pttl(stored) <= DEFAULT_TTL * 1000


def test_sqlite_store_survives_a_restart(tmp_path: Path) -> None:
    first = SQLiteDedupeStore(tmp_path / "d.db")
    assert first.claim(KEY)
    first.complete(KEY)
    first.close()
    again = SQLiteDedupeStore(tmp_path / "d.db")
    assert again.is_complete(KEY)
    assert not again.claim(KEY)
    mode = again._connect().execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
def test_exactly_one_of_many_threads_wins_a_claim(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if kind == "memory":
        store: Any = MemoryDedupeStore()
    elif kind == "sqlite":
        store = SQLiteDedupeStore(tmp_path / "d.db")
    else:
        store = RedisDedupeStore(request.getfixturevalue("redis_url"), prefix=f"threads-{tmp_path.name}:")
    barrier = threading.Barrier(16)
    wins: list[bool] = []
    lock = threading.Lock()

    def contend() -> None:
        barrier.wait(timeout=30)
        won = store.claim(KEY)
        with lock:
            wins.append(won)

    threads = [threading.Thread(target=contend) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(wins) == [False] * 15 + [True]


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_a_worker_whose_lease_lapsed_cannot_release_the_new_claimants_claim(
    kind: str, tmp_path: Path, clock: FakeClock, request: pytest.FixtureRequest
) -> None:
    if kind == "sqlite":
        slow: Any = SQLiteDedupeStore(tmp_path / "d.db", lease=60, clock=clock)
        fast: Any = SQLiteDedupeStore(tmp_path / "d.db", lease=60, clock=clock)
        assert slow.claim(KEY)
        clock.advance(61)
    else:
        redis_client: Any = request.getfixturevalue("redis_client")
        slow = RedisDedupeStore(redis_client, lease=60)
        fast = RedisDedupeStore(redis_client, lease=60)
        assert slow.claim(KEY)
        redis_client.pexpireat(slow.prefix + KEY, 1)
    assert fast.claim(KEY)  # the retry took over
    slow.release(KEY)  # the first worker finally fails
    assert not fast.claim(KEY)  # the new claim still stands
    fast.complete(KEY)
    assert fast.is_complete(KEY)


def test_redis_store_accepts_a_url_and_hides_its_password(redis_url: str) -> None:
    url = redis_url.replace("redis://", "redis://:hunter2-password@")
    store = RedisDedupeStore(url)
    assert "hunter2" not in repr(store)
    assert "127.0.0.1" in repr(store)


@pytest.mark.parametrize("bad", [0, -1, "60", True, float("nan")])
def test_a_nonsense_ttl_or_lease_is_a_parameter_error(bad: Any, tmp_path: Path) -> None:
    with pytest.raises(ParameterError):
        MemoryDedupeStore(ttl=bad)
    with pytest.raises(ParameterError):
        SQLiteDedupeStore(tmp_path / "d.db", lease=bad)


def test_sqlite_store_refuses_an_in_memory_database() -> None:
    with pytest.raises(ParameterError):
        SQLiteDedupeStore(":memory:")


def test_memory_store_sweeps_expired_keys(clock: FakeClock) -> None:
    store = MemoryDedupeStore(lease=10, ttl=20, clock=clock)
    for n in range(100):
        assert store.claim(f"k{n}")
    clock.advance(11)
    assert store.claim("fresh")
    assert "keys=1)" in repr(store)


def test_redis_claim_many_pipelines_the_same_answers_as_claim(redis_url: str, redis_client: object) -> None:
    from sports_posts.webhooks import RedisDedupeStore

    store = RedisDedupeStore(redis_url, prefix="test:many:")
    assert store.claim("breaking_news:2") is True
    assert store.claim_many(["breaking_news:1", "breaking_news:2", "breaking_news:3", "breaking_news:1"]) == [
        True, False, True, False,
    ]
    store.complete("breaking_news:1")
    assert store.is_complete("breaking_news:1")
    store.release("breaking_news:3")
    assert store.claim("breaking_news:3") is True, "a released claim from claim_many is free again"
    store.close()
