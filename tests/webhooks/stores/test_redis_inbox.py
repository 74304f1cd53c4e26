"""RedisInbox against a real redis-server: the stream, the consumer group, the dead-letter
stream, takeover with XAUTOCLAIM, async twins and typed errors."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis

from sports_posts.webhooks import (
    RedisDedupeStore,
    RedisInbox,
    StoreError,
    WebhookReceiver,
    build_test_request,
    sample_payload,
)
from tests.webhooks.webhook_helpers import FakeClock

SECRET = "whsec_fleet_redis_test"
STREAM = "{sports_posts:inbox}:stream"
DEAD = "{sports_posts:inbox}:dead"


def test_entries_travel_through_one_stream_and_consumer_group(redis_client: Any, redis_url: str) -> None:
    inbox = RedisInbox(redis_url)
    inbox.put("s1", b"one")
    inbox.put("s2", b"two")
    [group] = redis_client.xinfo_groups(STREAM)
    assert group["name"] == b"workers" and redis_client.xlen(STREAM) == 2
    taken = inbox.take_due()
    assert [e.key for e in taken] == ["s1", "s2"]
    assert redis_client.xpending(STREAM, "workers")["pending"] == 2
    for entry in taken:
        inbox.mark_done(entry)
    assert redis_client.xpending(STREAM, "workers")["pending"] == 0, "acknowledged"
    assert redis_client.xlen(STREAM) == 0, "and deleted: the stream does not grow"
    inbox.close()
    assert redis_client.xinfo_consumers(STREAM, "workers") == [], "a worker that leaves holds nothing"


def test_a_crash_loop_ends_in_the_dead_letter_stream(redis_client: Any, redis_url: str) -> None:
    # A lease under a millisecond: every held entry counts as its worker's death at once.
    inbox = RedisInbox(redis_url, max_attempts=3, lease=1e-4)
    inbox.put("poison", b"x")
    for _ in range(3):
        assert [e.key for e in inbox.take_due()] == ["poison"]
    assert inbox.take_due() == []
    [(_, fields)] = redis_client.xrange(DEAD)
    assert fields[b"k"] == b"poison" and b"3 times" in fields[b"error"]
    assert inbox.counts() == {"pending": 0, "processing": 0, "done": 0, "dead": 1}
    assert redis_client.xpending(STREAM, "workers")["pending"] == 0
    assert inbox.requeue("poison") is True
    assert redis_client.xlen(DEAD) == 0, "requeued: out of the dead-letter stream"
    [entry] = inbox.take_due()
    inbox.mark_done(entry)
    assert inbox.counts()["done"] == 1


def test_a_deleted_stream_is_recreated_with_its_group(redis_client: Any, redis_url: str) -> None:
    inbox = RedisInbox(redis_url)
    inbox.put("a", b"x")
    redis_client.delete(STREAM)  # an operator's cleanup, say
    assert inbox.take_due() == []
    assert inbox.put("b", b"x") is True
    assert [e.key for e in inbox.take_due()] == ["b"]


def test_a_client_that_decodes_responses_works_too(redis_client: Any, redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    inbox = RedisInbox(client, clock=FakeClock())
    inbox.put("s", b'{"x":1}', "dlv")
    [entry] = inbox.take_due()
    assert (entry.body, entry.delivery_id) == (b'{"x":1}', "dlv")
    assert inbox.mark_failed(entry, "boom") == "pending"
    assert inbox.get("s").last_error == "boom"  # type: ignore[union-attr]
    inbox.close()
    assert client.ping(), "a client you pass stays open"
    client.close()


def test_async_twins(redis_client: Any, redis_url: str) -> None:
    clock = FakeClock()

    async def scenario() -> None:
        inbox = RedisInbox(redis_url, clock=clock, backoff=(5.0,), max_attempts=2)
        assert await inbox.aput("s", b"x") is True
        assert await inbox.aput("s", b"x") is False
        [entry] = await inbox.atake_due()
        assert await inbox.amark_failed(entry, "boom") == "pending"
        assert await inbox.anext_due() == pytest.approx(clock.now + 5.0)
        clock.advance(5)
        [entry] = await inbox.atake_due()
        assert await inbox.amark_failed(entry, "boom") == "dead"
        assert await inbox.arequeue("s") is True
        [entry] = await inbox.atake_due()
        await inbox.amark_done(entry)
        assert (await inbox.acounts())["done"] == 1
        await inbox.aclose()

    asyncio.run(scenario())


def test_the_receiver_drains_a_redis_inbox(redis_client: Any, redis_url: str) -> None:
    handled: list[str] = []
    receiver = WebhookReceiver(
        SECRET, lambda event: handled.append(event.data.id),  # type: ignore[attr-defined]
        store=RedisDedupeStore(redis_url), inbox=RedisInbox(redis_url), start_worker=False,
    )
    request = build_test_request(sample_payload(id="1790000000000000002"), SECRET)
    assert receiver.handle(request.body, request.headers).status_code == 202
    assert receiver.handle(request.body, request.headers).status_code == 200
    assert receiver.run_inbox_once() == 1
    assert handled == ["1790000000000000002"]
    receiver.close()


def test_an_unreachable_server_is_a_store_error_without_the_password(secrets_never_leak: Any) -> None:
    from support.servers import free_port as _free_port

    password = "pw_r3dis-Passw0rd-fleet"
    secrets_never_leak.register(password)
    inbox = RedisInbox(f"redis://:{password}@127.0.0.1:{_free_port()}/0", socket_timeout=2)
    assert password not in repr(inbox)
    with pytest.raises(StoreError) as caught:
        inbox.put("s", b"x")
    assert caught.value.engine == "redis" and password not in str(caught.value)
    request = build_test_request(sample_payload(), SECRET)
    receiver = WebhookReceiver(SECRET, lambda event: None, inbox=inbox, start_worker=False)
    assert receiver.handle(request.body, request.headers).status_code == 503
