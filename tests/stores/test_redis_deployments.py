"""Every Redis store, sync and async, on each deployment customers run: one server, a 3-master
Redis Cluster (from one node's URL, a ``redis+cluster://`` URL, or a ``RedisCluster`` client),
and a Sentinel-managed master (a ``master_for`` client or a ``redis+sentinel://`` URL), each
server started once per run. Then a cluster drain that handles each story once, and a
Sentinel failover the stores follow."""

from __future__ import annotations

import concurrent.futures
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any, Callable

import pytest

from sports_posts import CallBudget, PollState, RedisCheckpoint
from sports_posts._stores import StoreError, StoreUnavailableError
from sports_posts.polling import Lease, LeaseLostError
from sports_posts.webhooks import (
    RedisDedupeStore,
    RedisInbox,
    WebhookReceiver,
    build_test_request,
    sample_payload,
)
from support.servers import (
    SentinelSetup,
    ServerError,
    private_redis_cluster,
    private_redis_sentinel,
)
from tests.stores.bounded import bounded


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[list[int]]:
    """The ports of a 3-master Redis Cluster, for the whole run."""
    try:
        with private_redis_cluster() as ports:
            yield ports
    except ServerError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def redis_sentinel() -> Iterator[SentinelSetup]:
    """A master, its replica and a sentinel, for the whole run."""
    try:
        with private_redis_sentinel() as setup:
            yield setup
    except ServerError as exc:
        pytest.fail(str(exc))


SETUPS = ["direct", "cluster-url", "cluster-scheme", "cluster-client", "sentinel-client", "sentinel-url"]


class Target:
    """What a store is given on one setup: a URL, or a client made (and closed) here."""

    def __init__(self, request: pytest.FixtureRequest, setup: str) -> None:
        self.setup = setup
        self.request = request
        self.made: list[Any] = []

    def sync(self) -> Any:
        import redis
        import redis.cluster
        import redis.sentinel

        if self.setup == "direct":
            return self.request.getfixturevalue("redis_url")
        if self.setup.startswith("cluster"):
            port = self.request.getfixturevalue("redis_cluster")[0]
            if self.setup == "cluster-url":
                return f"redis://127.0.0.1:{port}/0"
            if self.setup == "cluster-scheme":
                return f"redis+cluster://127.0.0.1:{port}"
            client: Any = redis.cluster.RedisCluster(host="127.0.0.1", port=port)
        else:
            setup: SentinelSetup = self.request.getfixturevalue("redis_sentinel")
            if self.setup == "sentinel-url":
                return f"redis+sentinel://127.0.0.1:{setup.sentinel_port}/{setup.service}/0"
            sentinel = redis.sentinel.Sentinel([("127.0.0.1", setup.sentinel_port)], socket_timeout=2)  # type: ignore[no-untyped-call]
            client = sentinel.master_for(setup.service, socket_timeout=2)  # type: ignore[no-untyped-call]
        self.made.append(client)
        return client

    def asynchronous(self) -> Any:
        """An asyncio client for the client setups (made on the running loop), else the URL."""
        import redis.asyncio
        import redis.asyncio.cluster
        import redis.asyncio.sentinel

        if self.setup == "cluster-client":
            port = self.request.getfixturevalue("redis_cluster")[0]
            client: Any = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=port)
        elif self.setup == "sentinel-client":
            setup: SentinelSetup = self.request.getfixturevalue("redis_sentinel")
            sentinel = redis.asyncio.sentinel.Sentinel(  # type: ignore[no-untyped-call]
                [("127.0.0.1", setup.sentinel_port)], socket_timeout=2)
            client = sentinel.master_for(setup.service, socket_timeout=2)
        else:
            return self.sync()
        self.made.append(client)
        return client

    def close(self) -> None:
        for client in self.made:
            if hasattr(client, "aclose"):
                continue  # closed by the async test on its loop
            client.close()


@pytest.fixture(params=SETUPS)
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    made = Target(request, request.param)
    try:
        yield made
    finally:
        made.close()


def _tag() -> str:
    return uuid.uuid4().hex[:12]


# -- the contract, sync -------------------------------------------------------------------


def test_dedupe_store(target: Target) -> None:
    store = RedisDedupeStore(target.sync(), prefix=f"dd{_tag()}:")
    assert store.claim("a") and not store.claim("a")
    assert not store.is_complete("a")
    store.complete("a")
    assert store.is_complete("a") and not store.claim("a")
    assert store.claim("b")
    store.release("b")
    assert store.claim("b")
    assert store.claim_many(["c", "d", "c"]) == [True, True, False]
    store.close()


def test_inbox(target: Target) -> None:
    inbox = RedisInbox(target.sync(), prefix=f"ib{_tag()}:", max_attempts=2, backoff=(0.0,))
    assert inbox.put("k1", b"one", "d1") and not inbox.put("k1", b"one")
    assert inbox.put("k2", b"two")
    taken = {e.key: e for e in inbox.take_due(10)}
    assert set(taken) == {"k1", "k2"} and taken["k1"].body == b"one"
    inbox.mark_done(taken["k1"])
    assert inbox.mark_failed(taken["k2"], "boom") == "pending"
    again = inbox.take_due(10)
    assert [e.key for e in again] == ["k2"]
    assert inbox.mark_failed(again[0], "boom") == "dead"
    assert [e.key for e in inbox.dead()] == ["k2"]
    assert inbox.get("k1") is not None and inbox.get("k1").state == "done"  # type: ignore[union-attr]
    assert inbox.counts() == {"pending": 0, "processing": 0, "done": 1, "dead": 1}
    assert inbox.requeue("k2") and inbox.counts()["pending"] == 1
    assert inbox.next_due() is not None
    inbox.mark_failed(inbox.take_due(1)[0], "x", permanent=True)
    assert inbox.purge_dead() == 1
    inbox.close()


def test_lease_and_fenced_checkpoint(target: Target) -> None:
    key = f"ls{_tag()}"
    first, second = Lease(target.sync(), key=key, ttl=30), Lease(target.sync(), key=key, ttl=30)
    token = first.acquire()
    assert token and second.acquire() is None and first.renew()
    assert first.status().holder == first.holder
    checkpoint = RedisCheckpoint(target.sync(), key=key)
    assert checkpoint.load() is None
    checkpoint.fence(token)
    state = PollState.start(datetime(2026, 1, 1, tzinfo=timezone.utc))
    checkpoint.save(state)
    assert second.force_release() is True
    newer = second.acquire()
    assert newer is not None and newer > token  # the fencing counter only grows
    later = RedisCheckpoint(target.sync(), key=key)
    assert later.load() == state
    later.fence(newer)
    with pytest.raises(LeaseLostError):
        checkpoint.fence(token)
    second.release()
    assert second.status().holder is None
    for closing in (first, second, checkpoint, later):
        closing.close()


def test_call_budget(target: Target) -> None:
    for _ in range(2):  # draws the store's clock put in two minutes are drawn again, in the next
        budget = CallBudget(target.sync(), per_minute=2, key=f"bg{_tag()}")
        draws = [budget.try_acquire() for _ in range(3)]
        budget.close()
        if len({draw.now_ms // 60_000 for draw in draws}) == 1:
            break
    assert [(draw.granted, draw.minute_used) for draw in draws] == [(True, 1), (True, 2), (False, 2)]


# -- the contract, async ------------------------------------------------------------------


@pytest.mark.anyio
async def test_async_stores(target: Target) -> None:
    client = target.asynchronous()
    try:
        store = RedisDedupeStore(client, prefix=f"ad{_tag()}:")
        assert await store.aclaim("a") and not await store.aclaim("a")
        await store.acomplete("a")
        assert await store.ais_complete("a")
        assert await store.aclaim("b")
        await store.arelease("b")
        assert await store.aclaim("b")

        inbox = RedisInbox(client, prefix=f"ai{_tag()}:", max_attempts=1)
        assert await inbox.aput("k", b"body")
        taken = await inbox.atake_due(5)
        assert [e.key for e in taken] == ["k"]
        await inbox.amark_done(taken[0])
        assert await inbox.aput("bad", b"body")
        assert await inbox.amark_failed((await inbox.atake_due(5))[0], "x") == "dead"
        assert await inbox.acounts() == {"pending": 0, "processing": 0, "done": 1, "dead": 1}
        assert await inbox.arequeue("bad") and await inbox.anext_due() is not None

        key = f"al{_tag()}"
        lease, other = Lease(client, key=key, ttl=30), Lease(client, key=key, ttl=30)
        token = await lease.acquire_async()
        assert token and await other.acquire_async() is None and await lease.renew_async()
        assert await other.force_release_async()
        assert (await other.acquire_async() or 0) > token
        assert (await other.status_async()).holder == other.holder

        for _ in range(2):  # draws the store's clock put in two minutes are drawn again, in the next
            budget = CallBudget(client, per_minute=1, key=f"ab{_tag()}")
            draws = [await budget.try_acquire_async(), await budget.try_acquire_async()]
            await budget.aclose()
            if draws[0].now_ms // 60_000 == draws[1].now_ms // 60_000:
                break
        assert [draw.granted for draw in draws] == [True, False]
        for closing in (store, inbox, lease, other):
            await closing.aclose()
    finally:
        if hasattr(client, "aclose"):
            await client.aclose()


# -- errors -------------------------------------------------------------------------------


def test_a_plain_client_of_a_cluster_node_is_a_typed_error_that_says_what_to_pass(redis_cluster: list[int]) -> None:
    import redis

    client = redis.Redis(host="127.0.0.1", port=redis_cluster[0])
    lease = Lease(client, key=f"plain{_tag()}")
    with pytest.raises(StoreError, match="RedisCluster"):
        for _ in range(20):  # keys of other slots: CROSSSLOT or MOVED
            lease.acquire()
            lease.key = f"plain{_tag()}"
    client.close()


def test_a_cluster_without_a_slot_served_is_a_typed_error(redis_cluster: list[int]) -> None:
    import redis.cluster

    client = redis.cluster.RedisCluster(host="127.0.0.1", port=redis_cluster[0])
    original = client.nodes_manager.slots_cache
    client.nodes_manager.slots_cache = {}  # what a cluster with uncovered slots looks like to the client
    try:
        with pytest.raises(StoreError) as caught:
            CallBudget(client, per_minute=5, key="uncovered").try_acquire()
        assert caught.value.engine == "redis"
    finally:
        client.nodes_manager.slots_cache = original
        client.close()


def test_a_single_server_keeps_its_key_names(redis_client: Any, redis_url: str) -> None:
    """No key moves on one server: the fencing counter of a deployment goes on growing."""
    redis_client.set("legacy:fence", 41)
    assert Lease(redis_url, key="legacy").acquire() == 42
    assert redis_client.exists("legacy:lease")
    store = RedisDedupeStore(redis_url, prefix="legacy:")
    store.claim("story")
    assert redis_client.exists("legacy:story") and redis_client.exists("legacy:__marker__")


def test_a_cluster_tags_every_key_of_a_script_alike(redis_cluster: list[int]) -> None:
    import redis.cluster

    client = redis.cluster.RedisCluster(host="127.0.0.1", port=redis_cluster[0])
    key = f"tags{_tag()}"
    Lease(client, key=key).acquire()
    RedisDedupeStore(client, prefix=key + ":").claim("s")
    names = {n.decode() if isinstance(n, bytes) else n for n in client.keys(f"*{key}*", target_nodes=client.ALL_NODES)}
    assert names == {f"{{{key}}}:lease", f"{{{key}}}:fence", f"{{{key}:}}__marker__", f"{{{key}:}}s"}
    # a prefix with its own tag keeps its names
    RedisDedupeStore(client, prefix=f"{{{key}x}}:").claim("t")
    assert client.exists(f"{{{key}x}}:t")
    client.close()


# -- a drain on the cluster, a failover behind Sentinel ------------------------------------


def test_a_cluster_drain_handles_each_story_once(redis_cluster: list[int]) -> None:
    url = f"redis://127.0.0.1:{redis_cluster[1]}/0"
    tag = _tag()
    runs: dict[str, int] = {}
    secret = "whsec_test_cluster"

    def handler(event: Any) -> None:
        runs[event.dedupe_key] = runs.get(event.dedupe_key, 0) + 1

    receivers = [
        WebhookReceiver(secret, handler, store=RedisDedupeStore(url, prefix=f"drain{tag}:"),
                        inbox=RedisInbox(url, prefix=f"drain{tag}:inbox:"), start_worker=False)
        for _ in range(3)
    ]
    stories = 60
    for n in range(stories):
        payload = sample_payload()
        first = build_test_request(payload, secret)
        assert receivers[n % 3].handle(first.body, first.headers).status == 202
        retry = build_test_request(payload, secret)  # the service's retry of the same story
        assert receivers[(n + 1) % 3].handle(retry.body, retry.headers).status == 200
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        while sum(pool.map(lambda r: r.run_inbox_once(8), receivers)):
            pass
    assert len(runs) == stories and set(runs.values()) == {1}
    for receiver in receivers:
        receiver.close()


@pytest.mark.parametrize("given", ["url", "client"])
def test_the_stores_follow_a_sentinel_failover(redis_sentinel: SentinelSetup, given: str) -> None:
    import redis.sentinel

    setup = redis_sentinel
    if given == "url":
        where: Any = f"redis+sentinel://127.0.0.1:{setup.sentinel_port}/{setup.service}/0"
    else:
        sentinel = redis.sentinel.Sentinel([("127.0.0.1", setup.sentinel_port)], socket_timeout=1)  # type: ignore[no-untyped-call]
        where = sentinel.master_for(  # type: ignore[no-untyped-call]
            setup.service, socket_timeout=1, socket_connect_timeout=1)
    tag = _tag()
    store = RedisDedupeStore(where, prefix=f"fo{tag}:", socket_timeout=1)
    inbox = RedisInbox(where, prefix=f"fo{tag}:inbox:", socket_timeout=1)
    budget = CallBudget(where, per_minute=1000, key=f"fo{tag}:budget", statement_timeout=1)
    calls: list[Callable[[], Any]] = [lambda: store.claim(uuid.uuid4().hex), lambda: inbox.put(uuid.uuid4().hex, b"x"),
                                      budget.try_acquire]
    store.claim("before")
    store.complete("before")
    inbox.put("queued", b"x")
    # Replication is asynchronous: only what the replica acknowledged survives the master's
    # death (WAIT, as a deployment that needs it would), so the test waits for that first.
    # WAIT counts the replicas that have this connection's own writes: one write of its own,
    # after the stores' (the stream is in order), makes it cover theirs too.
    import redis as redis_py

    with redis_py.Redis(port=setup.master_port(), socket_timeout=5) as master:
        master.set(f"fo{tag}:replicated", "1")
        assert master.execute_command("WAIT", 1, 5000) >= 1
    old = setup.kill_master()
    try:
        for call in calls:  # during the switch: a typed error within the bound, or already through
            outcome = bounded(call)
            assert not isinstance(outcome, BaseException) or isinstance(outcome, StoreUnavailableError), outcome
        setup.wait_promoted(old)
        for call in calls:  # the new master: the first call may still meet a dropped connection
            outcome = bounded(call)
            if isinstance(outcome, BaseException):
                assert isinstance(outcome, StoreUnavailableError), outcome
                outcome = bounded(call)
            assert not isinstance(outcome, BaseException), outcome
        assert store.is_complete("before")  # replicated before the master died
        assert inbox.get("queued") is not None
    finally:
        setup.restart_as_replica(old)
    for closing in (store, inbox, budget):
        closing.close()
    if given == "client":
        where.close()


def _cluster_errors() -> list[BaseException]:
    from redis import exceptions as e
    from redis.sentinel import MasterNotFoundError

    return [e.MovedError("3999 127.0.0.1:7001"), e.AskError("3999 127.0.0.1:7001"),
            e.ClusterCrossSlotError(), e.ClusterDownError("CLUSTERDOWN The cluster is down"),
            e.TryAgainError(), e.RedisClusterException("EVALSHA - all keys must map to the same key slot"),
            e.SlotNotCoveredError("slot 3999 is not covered"), e.ClusterError("no node"),
            MasterNotFoundError("No master found for 'spmaster'")]


@pytest.mark.parametrize("error", _cluster_errors(), ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("cluster", [True, False])
def test_every_cluster_and_sentinel_error_is_a_store_error(error: BaseException, cluster: bool) -> None:
    class Raising:
        """A client whose every script raises ``error``."""

        def register_script(self, source: str) -> Callable[..., Any]:
            def run(**kwargs: Any) -> Any:
                raise error

            return run

    lease = Lease(Raising(), key="errors")  # type: ignore[arg-type]  # a stand-in client
    lease._runner.cluster = cluster
    with pytest.raises(StoreError) as caught:
        lease.acquire()
    assert caught.value.engine == "redis" and caught.value.__cause__ is None
    assert type(error).__name__ in str(caught.value)


@pytest.mark.anyio
@pytest.mark.parametrize("setup_name", ["cluster-client", "sentinel-client"])
async def test_the_async_methods_work_with_a_sync_client(request: pytest.FixtureRequest, setup_name: str) -> None:
    """A sync Sentinel client is mirrored (same sentinels, same service); a sync cluster
    client runs in a worker thread."""
    target = Target(request, setup_name)
    client = target.sync()
    try:
        store = RedisDedupeStore(client, prefix=f"mirror{_tag()}:")
        assert await store.aclaim("a") and not await store.aclaim("a")
        await store.acomplete("a")
        assert store.is_complete("a")  # the sync client sees what the async path wrote
        inbox = RedisInbox(client, prefix=f"mirror{_tag()}:inbox:")
        assert await inbox.aput("k", b"x")
        assert [e.key for e in inbox.take_due(5)] == ["k"]
        lease = Lease(client, key=f"mirror{_tag()}")
        assert await lease.acquire_async()
        await store.aclose()
        await inbox.aclose()
    finally:
        target.close()


def _server_ports(request: pytest.FixtureRequest, setup: str) -> list[int]:
    if setup == "direct":
        return [int(request.getfixturevalue("redis_url").rsplit(":", 1)[1].split("/")[0])]
    if setup.startswith("cluster"):
        return list(request.getfixturevalue("redis_cluster"))
    return list(request.getfixturevalue("redis_sentinel").nodes)


def _clients_since(ports: list[int], before: dict[int, int]) -> list[str]:
    """The clients' connections opened on those servers after ``before`` (each server's
    newest connection id then) that are still open, but the one asking: a replica's link
    and a sentinel's own links (which a failover of an earlier test may still be remaking)
    are the servers', not a client's."""
    import redis

    found = []
    for port in ports:
        with redis.Redis(port=port) as asking:
            mine = asking.client_id()
            found += [f"{port}:{c['id']}" for c in asking.client_list()
                      if before[port] < int(c["id"]) != mine and c["flags"] == "N"
                      and not c.get("name", "").startswith("sentinel-")]
    return found


def _newest_ids(ports: list[int]) -> dict[int, int]:
    import redis

    newest = {}
    for port in ports:
        with redis.Redis(port=port) as asking:
            newest[port] = max(int(c["id"]) for c in asking.client_list())
    return newest


def _gone(left: Callable[[], list[str]]) -> list[str]:
    """``left()`` once it is empty, or what it still names after 10 s (a server notices a
    closed connection a moment after the client closed it)."""
    import time

    deadline = time.monotonic() + 10
    while (still := left()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return still


@pytest.mark.usefixtures("no_earlier_garbage")
@pytest.mark.parametrize("runner", ["asyncio.run", "async_to_sync"])
@pytest.mark.parametrize("setup", ["direct", "cluster-url", "sentinel-url"])
def test_a_loop_ended_without_aclose_closes_what_the_stores_opened_on_it(
    request: pytest.FixtureRequest, setup: str, runner: str
) -> None:
    """A store made from a URL opens an asyncio client per event loop. A loop that ends the
    way ``asyncio.run`` and asgiref's ``async_to_sync`` end one (each store used, none closed
    with ``aclose``) closes them: no connection is left open on the servers, and no client
    reports itself unclosed later (redis-py's ``RedisCluster`` says so to whichever loop
    then runs)."""
    import asyncio
    import gc
    import warnings

    from asgiref.sync import async_to_sync

    url = Target(request, setup).sync()
    ports = _server_ports(request, setup)
    before = _newest_ids(ports)

    def two_loops() -> None:  # its stores are garbage once it returns
        store = RedisDedupeStore(url, prefix=f"loop{_tag()}:")
        inbox = RedisInbox(url, prefix=f"loop{_tag()}:")

        async def use() -> None:
            key = _tag()
            assert await store.aclaim(key)
            assert await inbox.aput(key, b"x")

        for _ in range(2):  # two loops, one after the other: each closes its own
            asyncio.run(use()) if runner == "asyncio.run" else async_to_sync(use)()
            assert _gone(lambda: _clients_since(ports, before)) == []

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        two_loops()
        gc.collect()
    assert not [str(w.message) for w in caught if "nclosed" in str(w.message)]


@pytest.mark.usefixtures("no_earlier_garbage")
def test_closing_a_sentinel_store_closes_its_sentinel_connections_too(request: pytest.FixtureRequest) -> None:
    """The sentinels a ``redis+sentinel://`` store asks are its own: ``close`` leaves none of
    their sockets to be reported unclosed later."""
    import gc
    import warnings

    store = RedisDedupeStore(Target(request, "sentinel-url").sync(), prefix=f"s{_tag()}:")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert store.claim(_tag())
        store.close()
        del store
        gc.collect()
    assert not [str(w.message) for w in caught if "nclosed" in str(w.message)]


def test_the_operations_commands_read_a_cluster_and_a_sentinel(
    redis_cluster: list[int], redis_sentinel: SentinelSetup, capsys: pytest.CaptureFixture[str]
) -> None:
    from sports_posts.cli import main

    for url in (f"redis+cluster://127.0.0.1:{redis_cluster[0]}",
                f"redis+sentinel://127.0.0.1:{redis_sentinel.sentinel_port}/{redis_sentinel.service}"):
        key = f"ops{_tag()}"
        Lease(url, key=key).acquire()
        main(["lease", "status", url, key, "--json"])
        assert '"token": 1' in capsys.readouterr().out


@pytest.mark.parametrize("url", ["redis+cluster://127.0.0.1:1", "redis://127.0.0.1:1/0",
                                 "redis+sentinel://127.0.0.1:1/spmaster/0"])
def test_an_unreachable_deployment_is_a_typed_error_at_the_first_call_not_at_construction(url: str) -> None:
    store = RedisDedupeStore(url, socket_timeout=1)
    inbox = RedisInbox(url, socket_timeout=1)
    with pytest.raises(StoreError):
        store.claim("a")
    with pytest.raises(StoreError):
        inbox.put("a", b"x")
    store.close()
    inbox.close()


@pytest.mark.parametrize("url", ["redis+sentinel://127.0.0.1:26379", "redis+sentinel://h:x/name",
                                 "redis+sentinel://h:1/name/db", "redis+cluster://h:x"])
def test_a_mistyped_deployment_url_is_a_parameter_error_at_construction(url: str) -> None:
    from sports_posts import ParameterError

    with pytest.raises(ParameterError):
        RedisDedupeStore(url)


def test_a_sentinel_url_shows_no_password() -> None:
    store = RedisDedupeStore("redis+sentinel://:hunter2-secret@127.0.0.1:26379,127.0.0.1:26380/spmaster/2")
    assert "hunter2" not in repr(store)
    assert "redis+sentinel://:***@127.0.0.1:26379,127.0.0.1:26380/spmaster/2" in repr(store)  # the one repr style


DRAIN_WORKER = """
import os, sys, time
from sports_posts.webhooks import RedisDedupeStore, RedisInbox, WebhookReceiver

url, prefix, out, go = sys.argv[1:5]
open(out + ".ready", "w").close()
deadline = time.monotonic() + 60
while not os.path.exists(go) and time.monotonic() < deadline:  # every worker starts together
    time.sleep(0.01)
with open(out, "a") as handled:
    def handler(event):
        handled.write(event.dedupe_key + "\\n")
        handled.flush()

    inbox = RedisInbox(url, prefix=prefix + "inbox:")
    receiver = WebhookReceiver("whsec_test_cluster", handler, store=RedisDedupeStore(url, prefix=prefix),
                               inbox=inbox, start_worker=False)
    idle = 0
    while idle < 3:  # three empty rounds in a row: the others hold nothing more
        taken = receiver.run_inbox_once(4)
        counts = inbox.counts()
        idle = idle + 1 if not taken and counts["pending"] + counts["processing"] == 0 else 0
    receiver.close()
    inbox.close()
"""


def test_a_cluster_drain_across_processes_handles_each_story_once(redis_cluster: list[int], tmp_path: Any) -> None:
    import os
    import subprocess
    import sys
    import time

    url = f"redis+cluster://127.0.0.1:{redis_cluster[2]}"
    prefix = f"mp{_tag()}:"
    inbox = RedisInbox(url, prefix=prefix + "inbox:")
    receiver = WebhookReceiver("whsec_test_cluster", lambda e: None, store=RedisDedupeStore(url, prefix=prefix),
                               inbox=inbox, start_worker=False)
    stories = 80
    for _ in range(stories):
        request = build_test_request(sample_payload(), "whsec_test_cluster")
        assert receiver.handle(request.body, request.headers).status == 202
    outs = [tmp_path / f"w{n}.txt" for n in range(3)]
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", DRAIN_WORKER, url, prefix, str(out), str(go)],
                              env=dict(os.environ), stderr=subprocess.PIPE) for out in outs]
    deadline = time.monotonic() + 60
    while not all(os.path.exists(f"{out}.ready") for out in outs):  # polling the workers' start-up
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "a drain worker did not start"
        time.sleep(0.01)
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()[-2000:]
    handled = [line for out in outs if out.exists() for line in out.read_text().splitlines()]
    assert len(handled) == stories and len(set(handled)) == stories
    assert inbox.counts()["done"] == stories
    receiver.close()
