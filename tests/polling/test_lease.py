"""Lease and the fenced checkpoints on Redis and PostgreSQL, one process."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from sports_posts import CheckpointConflictError, ParameterError, PollState, RedisCheckpoint
from sports_posts.polling import Lease, LeaseLostError, PostgresCheckpoint

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def checkpoint(store_url: str, key: str) -> Any:
    return RedisCheckpoint(store_url, key=key) if store_url.startswith("redis") else PostgresCheckpoint(store_url, key=key)


def test_one_holder_at_a_time_and_tokens_only_grow(store_url: str, key: str) -> None:
    first, second = Lease(store_url, key=key, ttl=30), Lease(store_url, key=key, ttl=30)
    token = first.acquire()
    assert token is not None and first.token == token
    assert second.acquire() is None and second.token is None
    assert first.acquire() == token  # the holder asking again keeps its token
    assert first.renew() is True
    assert second.renew() is False
    first.release()
    assert first.token is None and first.renew() is False
    taken = second.acquire()
    assert taken is not None and taken > token
    second.release()
    second.release()  # a second release is harmless
    again = first.acquire()
    assert again is not None and again > taken
    first.close()
    second.close()


@pytest.mark.anyio
async def test_the_async_methods_hold_the_same_lease(store_url: str, key: str) -> None:
    first, second = Lease(store_url, key=key, ttl=30), Lease(store_url, key=key, ttl=30)
    token = await first.acquire_async()
    assert token is not None
    assert await second.acquire_async() is None
    assert await first.renew_async() is True
    await first.release_async()
    assert (await second.acquire_async() or 0) > token
    await first.aclose()
    await second.aclose()


def test_a_save_with_an_older_fencing_token_is_refused(store_url: str, key: str) -> None:
    old, new = checkpoint(store_url, key), checkpoint(store_url, key)
    state = PollState.start(T0)
    old.fence(1)
    assert old.load() is None
    old.save(state)
    new.fence(2)  # the next holder fences first, then loads
    assert new.load() == state
    with pytest.raises(LeaseLostError, match="fencing token 1"):
        old.save(PollState.start(T0.replace(day=2)))
    with pytest.raises(LeaseLostError):
        old.fence(1)
    new.save(PollState.start(T0.replace(day=3)))
    assert checkpoint(store_url, key).load() == PollState.start(T0.replace(day=3))


def test_the_generation_check_still_catches_two_savers_with_one_token(store_url: str, key: str) -> None:
    a, b = checkpoint(store_url, key), checkpoint(store_url, key)
    a.load()
    b.load()
    a.save(PollState.start(T0))
    with pytest.raises(CheckpointConflictError):
        b.save(PollState.start(T0))


def test_a_corrupt_postgres_checkpoint_is_a_checkpoint_error(postgres_url: str, key: str) -> None:
    import psycopg

    from sports_posts import CheckpointError

    cp = PostgresCheckpoint(postgres_url, key=key)
    cp.save(PollState.start(T0))
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE sports_posts_checkpoints SET state = 'not json' WHERE key = %s", (key,))
    with pytest.raises(CheckpointError, match="delete the row"):
        cp.load()
    cp.close()


def test_a_postgres_checkpoint_takes_the_callers_connection(postgres_url: str, key: str) -> None:
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        cp = PostgresCheckpoint(conn, key=key)
        cp.save(PollState.start(T0))
        assert PostgresCheckpoint(conn, key=key).load() == PollState.start(T0)
        cp.close()  # leaves the caller's connection open
        assert not conn.closed


@pytest.mark.parametrize("kwargs", [{"ttl": 0}, {"ttl": "5"}, {"ttl": True}, {"key": ""}])
def test_bad_lease_arguments_are_parameter_errors(redis_url: str, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ParameterError):
        Lease(redis_url, **kwargs)


def test_a_lease_repr_hides_the_password() -> None:
    lease = Lease("redis://:pa55-word-secret@127.0.0.1:1/0", key="k")
    assert "pa55-word-secret" not in repr(lease) and "***" in repr(lease)
