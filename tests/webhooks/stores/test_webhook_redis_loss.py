"""A Redis that lost its data (restart without persistence, FLUSHALL) is refused, not reprocessed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from sports_posts import SportsPostsError
from sports_posts.webhooks import (
    RedisDedupeStore,
    StoreDataLostError,
    StoreUnavailableError,
    WebhookEvent,
    WebhookReceiver,
)
from tests.webhooks.stores.redis_process import RedisProcess
from tests.webhooks.webhook_helpers import SECRET, signed

pytestmark = pytest.mark.redis
KEY = "breaking_news:1790000000000000001"


@pytest.fixture
def server() -> Iterator[RedisProcess]:
    with RedisProcess() as process:
        yield process


def _handled_once(store: RedisDedupeStore) -> tuple[WebhookReceiver, list[WebhookEvent]]:
    events: list[WebhookEvent] = []
    receiver = WebhookReceiver(SECRET, events.append, store=store)
    first = signed(delivery_id="dlv_1")
    assert receiver.handle(first.body, first.headers).status_code == 202
    retry = signed(delivery_id="dlv_2")
    assert receiver.handle(retry.body, retry.headers).outcome == "duplicate"
    return receiver, events


def test_flushall_is_detected_and_answered_503_instead_of_processing_again(redis_client: Any, redis_url: str) -> None:
    store = RedisDedupeStore(redis_url, prefix="loss:flush:")
    receiver, events = _handled_once(store)
    redis_client.flushall()
    late = signed(delivery_id="dlv_3")
    response = receiver.handle(late.body, late.headers)
    assert (response.status_code, response.outcome) == (503, "store_data_lost")
    with pytest.raises(StoreDataLostError, match="acknowledge_data_loss"):
        store.claim(KEY)
    assert len(events) == 1  # not processed a second time
    store.acknowledge_data_loss()  # an operator decided to carry on
    assert store.claim("breaking_news:other")
    store.close()


def test_a_real_restart_without_persistence_is_unavailable_then_lost(server: RedisProcess) -> None:
    store = RedisDedupeStore(server.url, prefix="loss:restart:")
    receiver, events = _handled_once(store)
    server.kill()
    down = signed(delivery_id="dlv_3")
    assert receiver.handle(down.body, down.headers).outcome == "store_unavailable"  # a 503
    with pytest.raises(StoreUnavailableError) as info:
        store.claim(KEY)
    # The driver's exception is named, not chained: it may hold the connection string.
    assert not isinstance(info.value, redis.RedisError) and info.value.__cause__ is None
    assert "ConnectionError" in str(info.value)
    server.start()  # same port, empty: it kept nothing
    back = signed(delivery_id="dlv_4")
    assert receiver.handle(back.body, back.headers).outcome == "store_data_lost"  # a 503
    with pytest.raises(StoreDataLostError):
        store.is_complete(KEY)
    assert len(events) == 1
    store.close()


def test_a_new_process_after_the_loss_does_not_hide_it_from_the_old_ones(server: RedisProcess) -> None:
    old = RedisDedupeStore(server.url, prefix="loss:fleet:")
    assert old.claim("a")
    server.kill()
    server.start()
    new = RedisDedupeStore(server.url, prefix="loss:fleet:")  # a process started after the loss
    assert new.claim("b")  # writes a new marker: it has nothing to compare with
    with pytest.raises(StoreDataLostError):
        old.claim("c")  # the marker was replaced: the old process knows what happened
    old.close()
    new.close()


def test_with_the_aof_on_a_killed_redis_keeps_its_keys_and_nothing_is_lost() -> None:
    server = RedisProcess(persistent=True)  # the production setting docs/security.md asks for
    server.start()
    try:
        store = RedisDedupeStore(server.url, prefix="loss:aof:")
        receiver, events = _handled_once(store)
        server.kill()
        server.start()
        again = signed(delivery_id="dlv_3")
        assert receiver.handle(again.body, again.headers).outcome == "duplicate"
        assert len(events) == 1
        store.close()
    finally:
        server.close()


def test_a_redis_that_hangs_is_a_typed_timeout_not_a_raw_redis_error(server: RedisProcess) -> None:
    # No client-side retries: redis-py's default retries a timeout three times with backoff.
    client = redis.Redis(port=server.port, socket_timeout=0.2, retry=Retry(NoBackoff(), 0))
    store = RedisDedupeStore(client, prefix="loss:hang:")
    assert store.claim("a")
    server.pause()
    try:
        with pytest.raises(StoreUnavailableError) as info:
            store.claim("b")
        assert isinstance(info.value, SportsPostsError) and info.value.__cause__ is None
        assert "TimeoutError" in str(info.value)
    finally:
        server.resume()
    store.close()


def test_the_async_path_detects_the_loss_too(redis_client: Any, redis_url: str) -> None:
    store = RedisDedupeStore(redis_url, prefix="loss:async:")

    async def scenario() -> None:
        events: list[WebhookEvent] = []
        receiver = WebhookReceiver(SECRET, events.append, store=store)
        request = signed()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 202
        redis_client.flushall()
        assert (await receiver.handle_async(request.body, request.headers)).status_code == 503
        with pytest.raises(StoreDataLostError):
            await store.aclaim(KEY)
        assert len(events) == 1
        await store.aclose()

    asyncio.run(scenario())
    store.close()


def test_the_async_path_of_a_stopped_redis_is_a_typed_error(server: RedisProcess) -> None:
    store = RedisDedupeStore(server.url, prefix="loss:async-down:")
    server.kill()

    async def scenario() -> None:
        with pytest.raises(StoreUnavailableError) as info:
            await store.aclaim(KEY)
        assert info.value.__cause__ is None and "ConnectionError" in str(info.value)
        await store.aclose()

    asyncio.run(scenario())


def test_the_store_repr_never_shows_a_password_and_a_bad_url_is_a_parameter_error() -> None:
    store = RedisDedupeStore("redis://:hunter2-secret@127.0.0.1:1/0")
    assert "hunter2" not in repr(store)
    with pytest.raises(SportsPostsError) as info:
        RedisDedupeStore("http://:hunter2-secret@127.0.0.1:1/0")
    assert "hunter2" not in str(info.value)
