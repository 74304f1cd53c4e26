"""docs/fleet.md's failover on a Redis Cluster, run as written (issue 50): three masters, a
replica each, ``cluster-node-timeout 1000``. Stories flow into a receiver (its dedupe store
and inbox on the cluster) while a poller step renews its lease, draws from its budget and
saves its fenced checkpoint, all keys in one slot; the master of that slot is killed
(SIGKILL). The cluster promotes its replica by itself (no operator step); the same store
objects recover without a restart, sync and async, every story is handled exactly once, and
the time from the kill to the first delivery accepted again is printed (docs/fleet.md states
the figures). Each drill gives its stores the cluster in every shape a fleet may: the URL of
the node about to die (``redis://`` and ``redis+cluster://``), another node's URL and a
``RedisCluster`` of the customer's.

Redis replication is asynchronous: a write the master acknowledged in the instant before it
died may not be on the replica (docs/fleet.md says what that can cost). The drill kills the
master between two stories, after a ``WAIT`` of its own has seen the replica hold every
write acknowledged so far: what it checks is that nothing replicated is lost and that the
flow after the kill (503s or calls that wait, then recovery) runs each story once.

Then the rule behind the recovery (``sports_posts/_stores/redis_cluster.py``), on stand-in
clients: a call whose error says it never ran (a refused connection, ``CLUSTERDOWN``) is
tried again on a cluster until it answers or ``connect_timeout`` has passed; an error after
the call may have been sent is never tried again (a script would run twice)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any, Callable, Optional

import pytest

from sports_posts import CallBudget, PollState, RedisCheckpoint
from sports_posts._stores import StoreError
from sports_posts._stores.redis import Redis
from sports_posts.polling import Lease
from sports_posts.webhooks import (
    RedisDedupeStore,
    RedisInbox,
    WebhookReceiver,
    build_test_request,
    sample_payload,
)
from support.servers import RedisClusterSetup, ServerError, private_redis, private_redis_cluster

pytestmark = [pytest.mark.redis]

SECRET = "whsec_test_cluster_failover"
STORIES = 40
KILL_AFTER = 10  # stories delivered before the master dies: the rest flow through the failover
PATIENCE = 60.0  # the test's own bound on waiting (not a timing assertion): about 2.5 s is expected


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisClusterSetup]:
    """Three masters with a replica each, for this module's drills (each leaves it whole)."""
    try:
        with private_redis_cluster(masters=3, replicas=1) as setup:
            yield setup
    except ServerError as exc:
        pytest.fail(str(exc))


class Drill:
    """One failover drill's stores, all keys in the slot of ``{tag}``, and its record."""

    def __init__(self, cluster: RedisClusterSetup) -> None:
        import redis.cluster

        self.cluster = cluster
        self.tag = "drill" + uuid.uuid4().hex[:10]
        tag = "{" + self.tag + "}"
        self.master = cluster.master_of(tag)
        other = next(port for port in cluster.nodes if port != self.master)
        dying = f"127.0.0.1:{self.master}"
        self.client = redis.cluster.RedisCluster(host="127.0.0.1", port=other)
        self.runs: dict[str, int] = {}
        # The receiver's stores answer within a second (socket_timeout=1, connect_timeout
        # the same): a delivery during the failover is answered 503 and delivered again.
        self.store = RedisDedupeStore(f"redis://{dying}/0", prefix=f"{tag}:dedupe:", socket_timeout=1)
        self.receiver = WebhookReceiver(
            SECRET, self.handler, start_worker=False, store=self.store,
            inbox=RedisInbox(f"redis+cluster://{dying}", prefix=f"{tag}:inbox:", socket_timeout=1))
        # The poller's keep their defaults: a call during the failover waits for the promotion.
        self.lease = Lease(self.client, key=self.tag, ttl=60)  # its keys {tag}:lease, {tag}:fence
        self.checkpoint = RedisCheckpoint(f"redis+cluster://127.0.0.1:{other}", key=self.tag)
        self.budget = CallBudget(f"redis://{dying}", per_minute=100_000, key=f"{tag}:budget")
        self.saved: Optional[PollState] = None
        self.killed_at: Optional[float] = None
        self.recovered_at: Optional[float] = None
        self.refused = 0  # deliveries answered other than 200/202 (503 during the switch), delivered again

    def handler(self, event: Any) -> None:
        self.runs[event.dedupe_key] = self.runs.get(event.dedupe_key, 0) + 1

    def requests(self) -> list[Any]:
        """Each story's first delivery, then the service's retry of it (a duplicate)."""
        out = []
        for _ in range(STORIES):
            payload = sample_payload()
            out += [build_test_request(payload, SECRET), build_test_request(payload, SECRET)]
        return out

    def answered(self, status: int) -> bool:
        """Whether the service is done with a delivery; the recovery's time is noted."""
        if status in (200, 202):
            if self.killed_at is not None and self.recovered_at is None:
                self.recovered_at = time.monotonic()
            return True
        self.refused += 1
        return False

    def state(self, n: int) -> PollState:
        return PollState.start(datetime(2026, 1, 1, 0, n % 60, tzinfo=timezone.utc))

    def kill_master(self) -> None:
        """Once the replica holds every write acknowledged so far (``WAIT`` on a write of the
        test's own, after the stores'), SIGKILL the master of the stores' slot."""
        import redis

        with redis.Redis(port=self.master, socket_timeout=5) as master:
            master.set("{" + self.tag + "}:replicated", "1")
            assert master.execute_command("WAIT", 1, 5000) >= 1
        self.cluster.kill(self.master)
        self.killed_at = time.monotonic()

    def check(self) -> None:
        """Every story once, the lease still held, the last checkpoint saved, then the killed
        node back as a replica (the cluster whole for the next drill)."""
        assert len(self.runs) == STORIES and set(self.runs.values()) == {1}, self.runs
        assert self.killed_at is not None and self.recovered_at is not None
        promoted = self.cluster.wait_promoted(self.master)
        assert self.cluster.master_of("{" + self.tag + "}") == promoted != self.master
        assert self.checkpoint.load() == self.saved
        self.cluster.restart(self.master)
        print(f"recovered {self.recovered_at - self.killed_at:.1f} s after the kill; "
              f"{self.refused} deliveries refused meanwhile")

    def close(self) -> None:
        for closing in (self.receiver, self.lease, self.checkpoint, self.budget):
            closing.close()
        self.client.close()


def _bounded(what: str) -> Callable[[], None]:
    deadline = time.monotonic() + PATIENCE

    def check() -> None:
        assert time.monotonic() < deadline, f"{what}: still failing after {PATIENCE} s"

    return check


@pytest.mark.slow
def test_the_stores_recover_from_a_cluster_failover(cluster: RedisClusterSetup) -> None:
    drill = Drill(cluster)
    token = drill.lease.acquire()
    assert token is not None
    drill.checkpoint.fence(token)
    # The stream stops after story KILL_AFTER - 1 until the master is dead: the kill falls
    # between two stories, and before the stream ends however fast the machine runs it.
    kill_now, killed = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def poll_step(n: int) -> None:
        """What a poller does each round: renew, draw, save its cursor."""
        assert drill.lease.renew()
        drill.budget.try_acquire()
        drill.checkpoint.save(drill.state(n))
        drill.saved = drill.state(n)

    def stream() -> None:
        try:
            requests = drill.requests()
            for n in range(STORIES):
                if n == KILL_AFTER:
                    kill_now.set()
                    assert killed.wait(PATIENCE), "the master was not killed"
                for request in requests[2 * n: 2 * n + 2]:
                    in_time = _bounded("a delivery")
                    while not drill.answered(drill.receiver.handle(request.body, request.headers).status):
                        in_time()
                in_time = _bounded("a poller step")
                while True:
                    try:
                        poll_step(n)
                        break
                    except StoreError:
                        in_time()
        except BaseException as exc:
            failures.append(exc)
            kill_now.set()

    worker = threading.Thread(target=stream, daemon=True)
    worker.start()
    try:
        assert kill_now.wait(PATIENCE) and not failures, failures
        drill.kill_master()
        killed.set()
        worker.join(timeout=4 * PATIENCE)
        assert not worker.is_alive() and not failures, failures
        while drill.receiver.run_inbox_once(16):
            pass
        drill.check()
    finally:
        drill.close()


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_async_stores_recover_from_a_cluster_failover(cluster: RedisClusterSetup) -> None:
    drill = Drill(cluster)
    token = await drill.lease.acquire_async()
    assert token is not None
    drill.checkpoint.fence(token)
    requests = drill.requests()
    try:
        for n in range(STORIES):
            if n == KILL_AFTER:
                drill.kill_master()  # between two stories: nothing of the loop's is in flight
            for request in requests[2 * n: 2 * n + 2]:
                in_time = _bounded("a delivery")
                while not drill.answered((await drill.receiver.handle_async(request.body, request.headers)).status):
                    in_time()
            in_time = _bounded("a poller step")
            while True:
                try:
                    assert await drill.lease.renew_async()
                    await drill.budget.try_acquire_async()
                    await asyncio.to_thread(drill.checkpoint.save, drill.state(n))
                    drill.saved = drill.state(n)
                    break
                except StoreError:
                    in_time()
        # The sync clients of the stores given the dead node's URL are made only now, after
        # the kill: they start from the nodes the async ones have seen, not from that one.
        assert all(drill.store.claim_status(key).state == "done" for key in drill.runs)
        assert drill.budget.try_acquire()
        while drill.receiver.run_inbox_once(16):
            pass
        drill.check()
    finally:
        await drill.receiver.aclose()
        await drill.lease.aclose()
        await drill.budget.aclose()
        drill.checkpoint.close()
        drill.client.close()


def test_a_master_without_its_replica_refuses_writes_and_the_receiver_answers_503() -> None:
    """docs/fleet.md's setting that narrows what a failover can lose: with
    ``min-replicas-to-write 1``, a master no replica acknowledges refuses writes (NOREPLICAS),
    a typed error, and the receiver answers 503 (the service delivers again) rather than 202."""
    import redis

    with private_redis() as url:
        with redis.Redis.from_url(url) as admin:
            admin.config_set("min-replicas-to-write", 1)
        store, inbox = RedisDedupeStore(url), RedisInbox(url)
        with pytest.raises(StoreError, match="NOREPLICAS"):
            store.claim("story")
        receiver = WebhookReceiver(SECRET, lambda event: None, store=store, inbox=inbox, start_worker=False)
        request = build_test_request(sample_payload(), SECRET)
        assert receiver.handle(request.body, request.headers).status == 503
        receiver.close()


# -- the rule: a call that never ran is tried again on a cluster, and nothing else ----------


def _refused() -> BaseException:
    """redis-py's error for a node that refused the connection (nothing was sent)."""
    import redis

    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError:
            raise redis.ConnectionError("Error 111 connecting to 127.0.0.1:7000. Connection refused.") from None
    except redis.ConnectionError as exc:
        return exc


def _refresh_failed(started: BaseException) -> BaseException:
    """redis-py's error when the slot map's refresh, begun on ``started``, reached no node."""
    import redis.exceptions

    try:
        try:
            raise started
        except redis.exceptions.RedisError:
            raise redis.exceptions.RedisClusterException("Redis Cluster cannot be connected.") from _refused()
    except redis.exceptions.RedisClusterException as exc:
        return exc


def _never_ran() -> list[BaseException]:
    import redis.exceptions

    return [_refused(), redis.exceptions.ClusterDownError("CLUSTERDOWN The cluster is down"),
            redis.exceptions.SlotNotCoveredError("Slot 1 not covered"), _refresh_failed(_refused())]


def _after_sending() -> list[BaseException]:
    import redis

    return [redis.ConnectionError("Connection closed by server."), redis.TimeoutError("Timeout reading from socket"),
            _refresh_failed(redis.ConnectionError("Connection closed by server."))]


class FailsFirst:
    """A client whose first ``fails`` script calls raise ``error``, then answer 1 (awaitably
    with ``awaited``)."""

    def __init__(self, error: BaseException, fails: int = 1, *, awaited: bool = False) -> None:
        self.error, self.fails, self.awaited, self.calls = error, fails, awaited, 0

    def register_script(self, source: str) -> Callable[..., Any]:
        def run(**kwargs: Any) -> Any:
            self.calls += 1
            if self.calls <= self.fails:
                raise self.error
            return 1

        async def arun(**kwargs: Any) -> Any:
            return run(**kwargs)

        return arun if self.awaited else run


def _runner(client: Any, cluster: bool, *, seconds: float = 10.0, aclient: Any = None) -> Redis:
    runner = Redis("test", client, socket_timeout=seconds, async_client=aclient)
    runner.cluster = cluster  # a stand-in client: say which kind of server it stands for
    return runner


@pytest.mark.parametrize("error", _never_ran(), ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("cluster", [True, False])
def test_a_call_that_never_ran_is_tried_again_on_a_cluster_only(error: BaseException, cluster: bool) -> None:
    client = FailsFirst(error, fails=3)
    runner = _runner(client, cluster)
    if cluster:  # the cluster client re-read its slot map on each error: the fourth try is the answer
        assert runner.execute("return 1", [], []) == 1
        assert client.calls == 4
    else:
        with pytest.raises(StoreError):
            runner.execute("return 1", [], [])
        assert client.calls == 1


@pytest.mark.parametrize("error", _after_sending(), ids=lambda e: type(e).__name__)
def test_an_error_after_sending_is_not_tried_again_on_a_cluster(error: BaseException) -> None:
    client = FailsFirst(error)
    lease = Lease(client, key="sent")  # type: ignore[arg-type]  # a stand-in client
    lease._runner.cluster = True
    with pytest.raises(StoreError):
        lease.force_release()
    assert client.calls == 1  # the script may have run: trying it again could run it twice


def test_a_cluster_that_stays_down_fails_the_call_once_connect_timeout_has_passed() -> None:
    client = FailsFirst(_refused(), fails=10**9)
    runner = _runner(client, True, seconds=0.3)
    with pytest.raises(StoreError, match="Connection refused"):
        runner.execute("return 1", [], [])
    assert 1 < client.calls < 10**9  # tried again with a pause between tries, then given up


@pytest.mark.anyio
@pytest.mark.parametrize("cluster", [True, False])
async def test_the_async_calls_follow_the_same_rule(cluster: bool) -> None:
    refused, sent = FailsFirst(_refused(), fails=2, awaited=True), FailsFirst(_after_sending()[0], awaited=True)
    if cluster:
        assert await _runner(FailsFirst(_refused()), True, aclient=refused).aexecute("return 1", [], []) == 1
        assert refused.calls == 3
    else:
        with pytest.raises(StoreError):
            await _runner(FailsFirst(_refused()), False, aclient=refused).aexecute("return 1", [], [])
        assert refused.calls == 1
    with pytest.raises(StoreError):
        await _runner(FailsFirst(_refused()), cluster, aclient=sent).aexecute("return 1", [], [])
    assert sent.calls == 1
