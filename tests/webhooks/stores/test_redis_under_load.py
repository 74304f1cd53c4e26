"""The Redis stores under load, on several event loops and across a fork, on a real redis-server.

Connections come from redis-py's pools: each call takes one for itself, so concurrent calls
on one loop or from many threads never read each other's replies. An asyncio client is
bound to its loop: each loop gets its own (``_scoped.PerLoop``); a forked child opens its
own connections and the parent keeps its own.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis
import redis.asyncio

from sports_posts.testing import serve_asgi
from sports_posts.webhooks import RedisDedupeStore, RedisInbox, WebhookEvent, WebhookReceiver
from sports_posts.webhooks.adapters.asgi import WebhookASGIApp
from tests.forked import with_os_fork
from tests.webhooks.stores.redis_process import RedisProcess
from tests.webhooks.webhook_helpers import SECRET, signed

pytestmark = [pytest.mark.redis, pytest.mark.usefixtures("no_earlier_garbage")]

BOUND = 60.0
"""The longest any wait of these tests may take (a hang fails the test, never the run)."""


def _prefix() -> str:
    return f"load:{uuid.uuid4().hex[:8]}:"


def test_200_concurrent_aclaims_on_one_loop_each_get_their_own_answer(redis_url: str) -> None:
    store = RedisDedupeStore(redis_url, prefix=_prefix())
    keys = [f"story:{i}" for i in range(100)]
    problems: list[Any] = []

    async def scenario() -> list[bool]:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: problems.append(context))
        try:
            # Each key twice, interleaved: 200 calls in flight on one loop.
            return list(await asyncio.wait_for(asyncio.gather(*(store.aclaim(k) for k in keys + keys)), BOUND))
        finally:
            await store.aclose()

    answers = asyncio.run(scenario())
    firsts, seconds = answers[:100], answers[100:]
    assert [a or b for a, b in zip(firsts, seconds)] == [True] * 100  # each key claimed ...
    assert [a and b for a, b in zip(firsts, seconds)] == [False] * 100  # ... exactly once
    assert problems == []
    store.close()


def test_64_threads_on_one_sync_store_claim_each_key_once(redis_url: str) -> None:
    store = RedisDedupeStore(redis_url, prefix=_prefix())
    keys = [f"story:{i}" for i in range(256)]
    barrier = threading.Barrier(64)
    won: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()
    unhandled: list[Any] = []
    previous = threading.excepthook
    threading.excepthook = unhandled.append

    def work(offset: int) -> None:
        barrier.wait(BOUND)
        for i in range(32):  # every key is tried by 8 threads
            key = keys[(offset * 4 + i * 8) % len(keys)]
            if store.claim(key):
                with lock:
                    won[key] += 1
                store.complete(key)
            else:
                assert store.is_complete(key) or True  # in flight or done: either is an answer

    try:
        threads = [threading.Thread(target=work, args=(n,)) for n in range(64)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(BOUND)
        assert not any(thread.is_alive() for thread in threads)
    finally:
        threading.excepthook = previous
        store.close()
    assert unhandled == []
    assert set(won.values()) == {1}
    tried = {keys[(n * 4 + i * 8) % len(keys)] for n in range(64) for i in range(32)}
    assert set(won) == tried


@pytest.mark.parametrize("given", ["url", "sync client", "asyncio client"])
def test_a_store_works_in_one_asyncio_run_after_another(redis_url: str, given: str) -> None:
    async def asyncio_client() -> Any:  # made in a loop: Python 3.9's asyncio.Lock needs one
        return redis.asyncio.Redis.from_url(redis_url)

    client: Any = (redis_url if given == "url" else redis.Redis.from_url(redis_url) if given == "sync client"
                   else asyncio.run(asyncio_client()))
    store = RedisDedupeStore(client, prefix=_prefix())
    inbox = RedisInbox(client, prefix=_prefix())

    async def claim(key: str, last: bool = False) -> tuple[bool, bool, bool]:
        answers = await store.aclaim(key), await store.aclaim(key), await inbox.aput(key, b"{}")
        if last and given == "asyncio client":
            await client.aclose()  # on the loop its connections belong to
        return answers

    # Five loops, one after another (a notebook's cells, async_to_sync per request): a URL or
    # a sync client gives each its own asyncio client; a customer's asyncio client drops the
    # connections of the closed loop (before, the second loop met "Event loop is closed").
    for n in range(5):
        assert asyncio.run(claim(f"story:{n}", last=n == 4)) == (True, False, True)
    if given != "asyncio client":
        assert store.claim("story:0") is False
        assert inbox.put("k1", b"{}") is True
        store.close()
        inbox.close()
    if given == "sync client":
        client.close()


def test_the_clients_of_closed_loops_are_dropped_with_their_connections() -> None:
    server = RedisProcess()
    server.start()
    try:
        store = RedisDedupeStore(server.url, prefix=_prefix())
        inbox = RedisInbox(server.url, prefix=_prefix())
        watcher = redis.Redis.from_url(server.url)

        async def use(n: int) -> None:
            assert await store.aclaim(f"story:{n}") is True
            assert await inbox.aput(f"k{n}", b"{}") is True

        # async_to_sync in a Django view makes a loop per request: 30 requests.
        for n in range(30):
            asyncio.run(use(n))
        gc.collect()  # the dropped clients' connections close when collected (asyncio holds cycles)
        connections = len(watcher.client_list()) - 1
        # The last loop's client may still be held until a next loop asks; every other one is gone.
        assert connections <= 4, connections
        watcher.close()
        store.close()
        inbox.close()
    finally:
        server.close()


@pytest.mark.processes
@pytest.mark.parametrize("given", ["url", "client"])
def test_after_a_fork_the_child_uses_its_own_connections_and_the_parent_goes_on(
    redis_url: str, given: str
) -> None:
    client = redis.Redis.from_url(redis_url) if given == "client" else None
    store = RedisDedupeStore(client if client is not None else redis_url, prefix=_prefix())
    inbox = RedisInbox(client if client is not None else redis_url, prefix=_prefix())
    # Used before the fork, sync and async: the pools hold connections the child inherits.
    assert store.claim("before") is True
    assert asyncio.run(store.aclaim("before-async")) is True
    assert inbox.put("before", b"{}") is True
    parent_consumer = inbox.consumer

    def both(side: str) -> dict[str, Any]:
        """200 sync and 200 async calls, while the other process makes its own."""
        sync = [store.claim(f"{side}:{i}") for i in range(100)]
        sync += [store.claim(f"{side}:{i}") for i in range(100)]

        async def run() -> list[bool]:
            return list(await asyncio.gather(*(store.aclaim(f"{side}:a{i % 100}") for i in range(200))))

        answers = asyncio.run(run())
        return {"sync": sync, "async": answers, "consumer": inbox.consumer, "put": inbox.put(f"{side}", b"{}"),
                "taken": [e.key for e in inbox.take_due(1)] if side == "child" else []}

    result = with_os_fork(lambda: both("child"))
    mine = both("parent")
    assert "error" not in result, result
    for answers in (result, mine):
        assert answers["sync"] == [True] * 100 + [False] * 100
        assert sorted(answers["async"]) == [False] * 100 + [True] * 100
        assert answers["put"] is True
    assert result["consumer"] != parent_consumer  # another consumer of the group
    assert mine["consumer"] == parent_consumer
    assert store.claim("before") is False and store.claim("after") is True
    store.close()
    inbox.close()
    if client is not None:
        client.close()


@pytest.mark.processes
def test_a_lease_held_before_a_fork_is_not_held_by_the_child(redis_url: str) -> None:
    from sports_posts.polling import Lease

    lease = Lease(redis_url, key=f"feed:{uuid.uuid4().hex[:8]}", ttl=30)
    token = lease.acquire()
    assert token is not None
    holder = lease.holder

    def child() -> dict[str, Any]:
        # Same object, another process: it must not renew (or release) the parent's lease.
        return {"holder": lease.holder, "token": lease.token, "renewed": lease.renew(),
                "acquired": lease.acquire(), "status": lease.status().holder}

    result = with_os_fork(child)
    assert "error" not in result, result
    assert result["holder"] != holder and result["token"] is None
    assert result["renewed"] is False and result["acquired"] is None
    assert result["status"] == holder
    assert lease.renew() is True and lease.token == token  # the parent still holds it
    lease.release()


@pytest.mark.processes
def test_a_call_budget_after_a_fork_counts_the_childs_calls_and_the_parents(redis_url: str) -> None:
    from sports_posts import CallBudget

    # A monthly cap: a minute turning during the test would not reset it.
    budget = CallBudget(redis_url, per_month=50, key=f"budget:{uuid.uuid4().hex[:8]}")
    assert budget.try_acquire().granted
    assert asyncio.run(budget.try_acquire_async()).granted

    def child() -> dict[str, Any]:
        async def run() -> list[bool]:
            return [d.granted for d in await asyncio.gather(*(budget.try_acquire_async() for _ in range(20)))]

        return {"sync": [budget.try_acquire().granted for _ in range(4)], "async": asyncio.run(run())}

    result = with_os_fork(child)
    assert "error" not in result, result
    mine = [budget.try_acquire().granted for _ in range(30)]
    # 2 + 24 + 30 = 56 draws of a 50-a-month budget shared by both processes: 50 granted.
    assert sum(result["sync"]) + sum(result["async"]) + sum(mine) == 48
    budget.close()


# --- 200 deliveries into one receiver over uvicorn ----------------------------------------

STORIES = 200
TRANSPORT_ERRORS: list[str] = []


class Effects:
    """The handler's effect: a count per story, from any thread."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()
        self.all_seen = threading.Event()

    def __call__(self, event: WebhookEvent) -> None:
        with self.lock:
            self.counts[event.data.id] += 1
            if len(self.counts) >= STORIES:
                self.all_seen.set()


class Watched:
    """The ASGI app, setting the server loop's exception handler on the first request."""

    def __init__(self, app: Any, problems: list[Any]) -> None:
        self.app, self.problems, self.set = app, problems, False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if not self.set and scope["type"] == "http":
            asyncio.get_running_loop().set_exception_handler(lambda loop, context: self.problems.append(context))
            self.set = True
        await self.app(scope, receive, send)


SOCKET_TIMEOUT = 2.0
LEASE = 8.0
CALL_BOUND = 2 * SOCKET_TIMEOUT + 2.0
"""A store call's documented bound (a connect, then the command, each within the socket
timeout: docs/fleet.md), with a generous margin for a loaded machine."""


class Timed:
    """Records how long each call of the wrapped store methods takes."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.lock = threading.Lock()

    def note(self, started: float) -> None:
        with self.lock:
            self.longest = max(self.longest, time.monotonic() - started)


def _timed(cls: type, methods: tuple[str, ...], timed: Timed) -> type:
    namespace: dict[str, Any] = {}
    for name in methods:
        original = getattr(cls, name)
        if asyncio.iscoroutinefunction(original):
            async def wrapper(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
                started = time.monotonic()
                try:
                    return await _original(self, *args, **kwargs)
                finally:
                    timed.note(started)
        else:
            def wrapper(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:  # type: ignore[misc]
                started = time.monotonic()
                try:
                    return _original(self, *args, **kwargs)
                finally:
                    timed.note(started)
        namespace[name] = wrapper
    return type(f"Timed{cls.__name__}", (cls,), namespace)


@pytest.fixture
def persistent_redis() -> Iterator[RedisProcess]:
    server = RedisProcess(persistent=True)  # the production setting: a restart keeps the keys
    server.start()
    try:
        yield server
    finally:
        server.close()


async def _deliver_until_accepted(http: httpx.AsyncClient, url: str, story: str,
                                  statuses: collections.Counter[int]) -> None:
    """One delivery of ``story``, redelivered (a new delivery id each time, as the service
    does) until it is answered 2xx."""
    for _ in range(1000):
        request = signed(id=story)
        try:
            response = await http.post(url, content=request.body, headers=dict(request.headers))
            status = response.status_code
        except httpx.TransportError as exc:
            status = 0
            TRANSPORT_ERRORS.append(repr(exc))
        statuses[status] += 1
        if 200 <= status < 300:
            return
        await asyncio.sleep(0.05)  # the service's backoff, shortened: not a synchronisation
    raise AssertionError(f"{story} was never accepted")


def _run_burst(server: RedisProcess, *, restart_after: int) -> tuple[Effects, collections.Counter[int], list[Any]]:
    timed = Timed()
    store_class = _timed(RedisDedupeStore, ("claim", "complete", "release", "is_complete", "aclaim", "acomplete",
                                            "arelease", "ais_complete"), timed)
    inbox_class = _timed(RedisInbox, ("put", "take_due", "mark_done", "mark_failed", "next_due"), timed)
    effects = Effects()
    problems: list[Any] = []
    unhandled: list[Any] = []
    previous = threading.excepthook
    threading.excepthook = unhandled.append
    # Short leases: a claim or a take whose reply the restart cut off ran on the server, and
    # only its lease lapsing frees it (300 s by default; the service retries for ~31 min).
    store = store_class(server.url, prefix=_prefix(), socket_timeout=SOCKET_TIMEOUT, lease=LEASE)
    inbox = inbox_class(server.url, prefix=_prefix(), socket_timeout=SOCKET_TIMEOUT, backoff=(0.05, 0.1, 0.2),
                        lease=LEASE)
    receiver = WebhookReceiver(SECRET, effects, store=store, inbox=inbox, poll_interval=0.1, max_workers=16)
    receiver.start()
    statuses: collections.Counter[int] = collections.Counter()
    stories = [str(1790000000000100000 + i) for i in range(STORIES)]
    try:
        with serve_asgi(Watched(WebhookASGIApp(receiver), problems), lifespan="off") as root:
            async def burst() -> None:
                # A connection per request: a kept-alive one that uvicorn closed after its idle
                # timeout (5 s) while the client reused it would be a ReadError of the harness.
                limits = httpx.Limits(max_connections=200, max_keepalive_connections=0)
                async with httpx.AsyncClient(timeout=30, limits=limits) as http:
                    # Each story twice at once: a retry racing its first delivery.
                    tasks = [asyncio.ensure_future(_deliver_until_accepted(http, root + "/", story, statuses))
                             for story in stories + stories]
                    if restart_after:
                        while sum(statuses.values()) < restart_after:
                            await asyncio.wait(tasks, timeout=0.05, return_when=asyncio.FIRST_COMPLETED)
                        await asyncio.to_thread(server.kill)
                        # Down until a delivery felt it (answered 503, or cut off), then back.
                        while not statuses[503] + statuses[0] and not all(task.done() for task in tasks):
                            await asyncio.wait(tasks, timeout=0.05, return_when=asyncio.FIRST_COMPLETED)
                        await asyncio.to_thread(server.start)
                    await asyncio.wait_for(asyncio.gather(*tasks), 240)

            asyncio.run(burst())
            assert effects.all_seen.wait(BOUND + LEASE), len(effects.counts)
            # Every entry settles done (outcomes recorded once the server was back).
            for _ in range(600):
                if inbox.counts().get("done") == STORIES:
                    break
                effects.all_seen.wait(0.05)  # polling the store's state, bounded
            assert inbox.counts() == {"pending": 0, "processing": 0, "done": STORIES, "dead": 0}
    finally:
        receiver.close(timeout=30)
        threading.excepthook = previous
        store.close()
        inbox.close()
    assert unhandled == []
    assert timed.longest <= CALL_BOUND, timed.longest  # every store call inside its bound
    return effects, statuses, problems


@pytest.mark.slow
@pytest.mark.processes
def test_200_deliveries_with_duplicates_into_one_receiver_over_uvicorn_each_handled_once(
    persistent_redis: RedisProcess,
) -> None:
    effects, statuses, problems = _run_burst(persistent_redis, restart_after=0)
    assert set(effects.counts.values()) == {1} and len(effects.counts) == STORIES
    assert problems == []
    assert set(statuses) <= {200, 202, 409}, statuses


@pytest.mark.slow
@pytest.mark.processes
def test_the_same_burst_with_redis_restarted_in_the_middle_still_handles_each_story_once(
    persistent_redis: RedisProcess,
) -> None:
    effects, statuses, problems = _run_burst(persistent_redis, restart_after=60)
    assert set(effects.counts.values()) == {1} and len(effects.counts) == STORIES, effects.counts.most_common(3)
    assert problems == []
    assert statuses[503] + statuses[0] > 0, statuses  # the restart was felt, and redelivered through
