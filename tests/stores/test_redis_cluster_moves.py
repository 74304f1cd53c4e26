"""Moving the fleet's Redis state between one server and a Redis Cluster, as docs/fleet.md
("Moving between one server and a cluster") says: a migration tool copies the keys with their
names (DUMP/RESTORE), then `sports-posts redis respell URL` gives them the names of the
deployment they landed on. Nothing runs twice and no fence goes back, either way (issue 49,
class 3). Then the ops commands on a cluster, given any node's URL or redis+cluster://
(class 4)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest

from sports_posts import CallBudget, PollState, RedisCheckpoint
from sports_posts.polling import Lease, LeaseLostError
from sports_posts.webhooks import RedisDedupeStore, RedisInbox
from support.servers import ServerError, private_redis_cluster

from ..cli.conftest import run

pytestmark = [pytest.mark.redis]

STORIES = [f"story-{n}" for n in range(5)]


@pytest.fixture(scope="module")
def cluster_ports() -> Iterator[list[int]]:
    try:
        with private_redis_cluster() as ports:
            yield ports
    except ServerError as exc:
        pytest.fail(str(exc))


@pytest.fixture
def cluster(cluster_ports: list[int]) -> Iterator[Any]:
    import redis.cluster

    client = redis.cluster.RedisCluster(host="127.0.0.1", port=cluster_ports[0])
    yield client
    client.close()


def names_of(client: Any, pattern: str, cluster: bool) -> list[bytes]:
    if cluster:
        return list(client.scan_iter(match=pattern, target_nodes=client.ALL_NODES))
    return list(client.scan_iter(match=pattern))


def copy_like_a_migration_tool(source: Any, target: Any, patterns: list[str], *, from_cluster: bool) -> int:
    """DUMP each key and RESTORE it under the same name with its time to live, as
    redis-shake, RIOT and `redis-cli --cluster import` do."""
    copied = 0
    for pattern in patterns:
        for name in names_of(source, pattern, from_cluster):
            ttl = source.pttl(name)
            target.restore(name, max(ttl, 0), source.dump(name), replace=True)
            copied += 1
    return copied


def state_on(url: str, tag: str) -> tuple[int, Any, Any]:
    """A fleet's state on ``url``: stories claimed and completed, a lease taken three times
    (its fence at 3 or more), a checkpoint saved under the last token."""
    store = RedisDedupeStore(url, prefix=f"{tag}:dedupe:")
    for story in STORIES:
        assert store.claim(story) is True
        store.complete(story)
    store.close()
    lease = Lease(url, key=f"{tag}:poll", ttl=30)
    token = 0
    for _ in range(3):
        token = lease.acquire() or 0
        lease.release()
    checkpoint = RedisCheckpoint(url, key=f"{tag}:poll")
    checkpoint.fence(token)
    state = PollState.start(datetime(2026, 1, 1, tzinfo=timezone.utc))
    checkpoint.save(state)
    checkpoint.close()
    lease.close()
    return token, state, store


def check_carried(url: str, tag: str, old_token: int, state: Any) -> None:
    """Nothing runs twice, the lease's fence never goes back, the checkpoint takes the new token."""
    store = RedisDedupeStore(url, prefix=f"{tag}:dedupe:")
    assert [store.claim(story) for story in STORIES] == [False] * len(STORIES)
    assert all(store.is_complete(story) for story in STORIES)
    assert store.claim(f"a-new-story-{uuid.uuid4().hex}") is True
    store.close()
    lease = Lease(url, key=f"{tag}:poll", ttl=30)
    token = lease.acquire()
    assert token is not None and token > old_token
    checkpoint = RedisCheckpoint(url, key=f"{tag}:poll")
    assert checkpoint.load() == state
    checkpoint.fence(token)  # no LeaseLostError: the counter went on from where it was
    checkpoint.save(state)
    with pytest.raises(LeaseLostError):
        checkpoint.fence(old_token)
    checkpoint.close()
    lease.release()
    lease.close()


def respell(url: str, tag: str, *extra: str) -> Any:
    status, out, err = run("redis", "respell", url, "--dedupe-prefix", f"{tag}:dedupe:",
                           "--lease-key", f"{tag}:poll", "--json", *extra)
    assert status == 0, err
    return json.loads(out)


def test_a_fleet_moves_to_a_cluster_and_back(redis_url: str, redis_client: Any, cluster: Any,
                                               cluster_ports: list[int]) -> None:
    tag = f"move{uuid.uuid4().hex[:8]}"
    node = f"redis://127.0.0.1:{cluster_ports[1]}/0"
    old_token, state, _ = state_on(redis_url, tag)
    patterns = [f"{tag}:*"]
    assert copy_like_a_migration_tool(redis_client, cluster, patterns, from_cluster=False) >= len(STORIES) + 3

    planned = respell(node, tag, "--dry-run")
    assert planned["cluster"] is True and planned["dry_run"] is True
    assert [f"{tag}:poll:fence", f"{{{tag}:poll}}:fence"] in planned["moved"]
    assert respell(node, tag)["moved"] == planned["moved"]
    assert respell(node, tag)["moved"] == []  # done once: nothing left to move
    check_carried(node, tag, old_token, state)
    highest = old_token + 1

    # ... and back, to a fresh database of one server
    single = redis_url.rsplit("/", 1)[0] + "/3"
    import redis

    back = redis.Redis.from_url(single)
    back.flushdb()
    copy_like_a_migration_tool(cluster, back, [f"*{tag}*"], from_cluster=True)
    moved = respell(single, tag)
    assert moved["cluster"] is False and moved["moved"]
    check_carried(single, tag, highest, state)
    back.flushdb()
    back.close()


def test_a_fence_that_already_grew_on_the_target_never_goes_back(redis_url: str, redis_client: Any, cluster: Any,
                                                                  cluster_ports: list[int]) -> None:
    tag = f"fence{uuid.uuid4().hex[:8]}"
    node = f"redis://127.0.0.1:{cluster_ports[0]}/0"
    redis_client.set(f"{tag}:poll:fence", 7)
    cluster.set(f"{tag}:poll:fence", 7)  # the copy
    cluster.set(f"{{{tag}:poll}}:fence", 12)  # a poller on the cluster took the lease meanwhile
    respell(node, tag)
    assert int(cluster.get(f"{{{tag}:poll}}:fence")) == 12
    assert not cluster.exists(f"{tag}:poll:fence")
    assert (Lease(node, key=f"{tag}:poll").acquire() or 0) == 13


def test_respell_refuses_a_store_that_is_not_redis() -> None:
    status, _, err = run("redis", "respell", "postgresql://app@127.0.0.1:1/db")
    assert status == 1 and "respell is for Redis" in err


# -- the ops commands on a cluster ----------------------------------------------------------


@pytest.mark.parametrize("scheme", ["node", "redis+cluster"])
def test_the_ops_commands_work_with_any_node_and_any_prefix(cluster_ports: list[int], scheme: str) -> None:
    tag = f"ops{uuid.uuid4().hex[:8]}"
    port = cluster_ports[2]
    url = f"redis://127.0.0.1:{port}/0" if scheme == "node" else f"redis+cluster://127.0.0.1:{port}"
    inbox = RedisInbox(url, prefix=f"{tag}:inbox:")  # untagged: the store tags it on a cluster
    inbox.put("k1", b"{}", "d1")
    inbox.close()
    status, out, err = run("inbox", "status", url, "--prefix", f"{tag}:inbox:", "--json")
    assert status == 0, err
    assert json.loads(out)["pending"] == 1

    budget = CallBudget(url, key=f"{tag}:budget", per_month=10)
    assert budget.try_acquire().granted
    budget.close()
    status, out, err = run("budget", "status", url, "--key", f"{tag}:budget", "--json")
    assert status == 0, err
    assert json.loads(out)["month_used"] == 1

    lease = Lease(url, key=f"{tag}:poll")
    assert lease.acquire()
    status, out, err = run("lease", "status", url, f"{tag}:poll", "--json")
    assert status == 0, err
    assert json.loads(out)["holder"] == lease.holder
    lease.close()

    status, _, err = run("inbox", "status", url, "--prefix", f"{tag}:nothing-here:")
    assert status == 3 and "no inbox" in err
