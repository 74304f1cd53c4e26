"""Every store has one repr style: ``Class('<its store URL, password redacted>', options)``,
the way it was made; no server is needed to show it."""

from __future__ import annotations

from typing import Any, Callable

import pytest

import sports_posts as sp
from sports_posts.polling import Lease, PostgresCheckpoint, RedisCheckpoint
from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox, RedisDedupeStore, RedisInbox

REDIS = "redis://:s3cret-pw@127.0.0.1:1/0"
POSTGRES = "postgresql://app:s3cret-pw@127.0.0.1:1/feeds"

STORES: list[tuple[Callable[[], Any], str]] = [
    (lambda: Lease(REDIS, key="feed"), "Lease('redis://:***@127.0.0.1:1/0', key='feed'"),
    (lambda: Lease(POSTGRES, key="feed"), "Lease('postgresql://app:***@127.0.0.1:1/feeds', key='feed'"),
    (lambda: RedisInbox(REDIS), "RedisInbox('redis://:***@127.0.0.1:1/0', prefix="),
    (lambda: RedisDedupeStore(REDIS), "RedisDedupeStore('redis://:***@127.0.0.1:1/0', prefix="),
    (lambda: RedisCheckpoint(REDIS, key="k"), "RedisCheckpoint('redis://:***@127.0.0.1:1/0', key='k')"),
    (lambda: sp.CallBudget(REDIS, per_month=10), "CallBudget('redis://:***@127.0.0.1:1/0', key="),
    (lambda: PostgresCheckpoint(POSTGRES, key="k"), "PostgresCheckpoint('postgresql://app:***@127.0.0.1:1/feeds', key='k')"),
    (lambda: PostgresInbox(POSTGRES), "PostgresInbox('postgresql://app:***@127.0.0.1:1/feeds', max_attempts="),
    (lambda: PostgresDedupeStore(POSTGRES), "PostgresDedupeStore('postgresql://app:***@127.0.0.1:1/feeds', ttl="),
]


@pytest.mark.parametrize(("make", "starts"), STORES, ids=[s.split("(")[0] + s.split("'")[1][:5] for _, s in STORES])
def test_every_store_shows_its_url_redacted_in_one_style(make: Callable[[], Any], starts: str) -> None:
    shown = repr(make())
    assert shown.startswith(starts), shown
    assert "s3cret-pw" not in shown


def test_a_store_made_from_a_client_shows_where_it_points() -> None:
    import redis

    client = redis.Redis(host="127.0.0.1", port=1, password="s3cret-pw")
    assert repr(RedisInbox(client)).startswith("RedisInbox('redis://127.0.0.1:1/0', ")
    assert repr(Lease(client, key="x")).startswith("Lease('redis://127.0.0.1:1/0', key='x'")
    assert "s3cret-pw" not in repr(Lease(client, key="x"))
