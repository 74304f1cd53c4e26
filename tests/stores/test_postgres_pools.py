"""The PostgreSQL stores under load and in every process model, on real servers: their
connections come from psycopg_pool (one per call in flight), so concurrent calls on one
event loop, many threads, two event loops and a forked child each get their own answer
within the call's bound; a call that gives up never crashes the PgBouncer before the server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from sports_posts._stores import StoreError
from sports_posts._stores.postgres import DEFAULT_POOL_SIZE
from sports_posts.polling import Lease
from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox
from tests.stores.bounded import PATIENCE, bounded
from tests.stores.pg_process import PostgresProcess

pytestmark = [pytest.mark.postgres, pytest.mark.usefixtures("no_earlier_garbage")]

CONNECT, STATEMENT = 3.0, 3.0
BOUND = CONNECT + STATEMENT  # a call's documented bound (connect_timeout + statement_timeout)
MARGIN = 2.0  # a busy shared machine; the bound itself is what is asserted


@pytest.fixture
def unhandled() -> Iterator[list[BaseException]]:
    """Every exception that reaches the top of a thread during the test (the watchdog's and
    cancel threads' too): the test asserts there is none."""
    seen: list[BaseException] = []
    previous = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        seen.append(args.exc_value if args.exc_value is not None else RuntimeError(str(args.exc_type)))
        previous(args)

    threading.excepthook = hook
    try:
        yield seen
    finally:
        threading.excepthook = previous


async def _timed(call: Any) -> tuple[Any, float]:
    started = time.monotonic()
    try:
        result = await call
    except Exception as exc:  # every outcome is kept: the test asserts there is no error
        result = exc
    return result, time.monotonic() - started


def _loop_errors(loop: asyncio.AbstractEventLoop, seen: list[Any]) -> None:
    loop.set_exception_handler(lambda _loop, context: seen.append(context))


@pytest.mark.parametrize("n", [20, 200])
def test_concurrent_async_claims_on_one_loop_each_get_their_answer_within_the_bound(
    pg: str, pgbouncer_transaction_url: str, n: int, unhandled: list[BaseException]
) -> None:
    store = PostgresDedupeStore(pgbouncer_transaction_url, connect_timeout=CONNECT, statement_timeout=STATEMENT)
    keys = [f"burst:{uuid.uuid4().hex}" for _ in range(n // 2)]
    loop_errors: list[Any] = []

    async def burst() -> list[tuple[Any, float]]:
        _loop_errors(asyncio.get_running_loop(), loop_errors)
        assert await store.aclaim(f"warm:{uuid.uuid4().hex}")  # a receiver that served before the burst
        calls = [store.aclaim(key) for key in keys] + [store.aclaim(key) for key in reversed(keys)]
        outcomes = await asyncio.gather(*(_timed(call) for call in calls))
        await store.aclose()
        return outcomes

    outcomes = asyncio.run(burst())
    errors = [result for result, _ in outcomes if isinstance(result, BaseException)]
    assert errors == [], errors[:3]
    slowest = max(took for _, took in outcomes)
    assert slowest < BOUND + MARGIN, f"a call took {slowest:.1f} s against a bound of {BOUND:g} s"
    first, second = [r for r, _ in outcomes[: n // 2]], [r for r, _ in outcomes[n // 2:]][::-1]
    assert all(a != b for a, b in zip(first, second)), "each key is claimed exactly once"
    # What the calls answered is what committed: a claim reported True owns the row.
    with psycopg.connect(pg, autocommit=True) as conn:
        held = conn.execute("SELECT count(*) FROM sports_posts_claims WHERE key = ANY(%s)", [keys]).fetchone()
    assert held == (len(keys),)
    assert unhandled == [] and loop_errors == []


@pytest.mark.parametrize("n", [20, 200])
def test_concurrent_async_inbox_puts_on_one_loop_each_get_their_answer(
    pg: str, pgbouncer_transaction_url: str, n: int, unhandled: list[BaseException]
) -> None:
    inbox = PostgresInbox(pgbouncer_transaction_url, connect_timeout=CONNECT, statement_timeout=STATEMENT)
    keys = [f"put:{uuid.uuid4().hex}" for _ in range(n // 2)]

    async def burst() -> list[tuple[Any, float]]:
        assert await inbox.aput(f"warm:{uuid.uuid4().hex}", b"x")  # a receiver that served before the burst
        calls = [inbox.aput(key, key.encode()) for key in keys + keys]
        outcomes = await asyncio.gather(*(_timed(call) for call in calls))
        await inbox.aclose()
        return outcomes

    outcomes = asyncio.run(burst())
    assert [r for r, _ in outcomes if isinstance(r, BaseException)] == []
    assert max(took for _, took in outcomes) < BOUND + MARGIN
    answers = [r for r, _ in outcomes]
    assert [a or b for a, b in zip(answers[: n // 2], answers[n // 2:])] == [True] * (n // 2)
    assert sum(answers) == n // 2, "each key is put once, its duplicate refused"
    with psycopg.connect(pg, autocommit=True) as conn:
        rows = conn.execute("SELECT key, body FROM sports_posts_inbox WHERE key = ANY(%s)", [keys]).fetchall()
    assert sorted((k, bytes(b)) for k, b in rows) == sorted((k, k.encode()) for k in keys)
    assert unhandled == []


def test_64_threads_on_one_sync_store(pgbouncer_transaction_url: str, unhandled: list[BaseException]) -> None:
    store = PostgresDedupeStore(pgbouncer_transaction_url, connect_timeout=CONNECT, statement_timeout=STATEMENT)
    keys = [f"threads:{uuid.uuid4().hex}" for _ in range(256)]
    start = threading.Barrier(64)

    def work(index: int) -> list[tuple[str, Any]]:
        start.wait()
        seen = []
        for key in keys[index::64]:
            seen.append(("claim", store.claim(key)))
            seen.append(("again", store.claim(key)))  # claimed, not complete: refused
            store.complete(key)
            seen.append(("done", store.is_complete(key)))
        return seen

    with concurrent.futures.ThreadPoolExecutor(64) as threads:
        results = [step for steps in threads.map(work, range(64)) for step in steps]
    assert results == [("claim", True), ("again", False), ("done", True)] * len(keys)
    assert unhandled == []
    store.close()


def test_a_store_works_from_two_event_loops_in_turn(pg: str) -> None:
    store = PostgresDedupeStore(pg, connect_timeout=CONNECT, statement_timeout=STATEMENT)
    first, second = f"loops:{uuid.uuid4().hex}", f"loops:{uuid.uuid4().hex}"
    assert asyncio.run(store.aclaim(first)) is True  # the first loop's pool stays behind it
    assert asyncio.run(store.aclaim(second)) is True  # asyncio.run again: a pool of its own
    assert asyncio.run(store.aclaim(first)) is False

    async def close() -> None:
        await store.aclose()

    asyncio.run(close())


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded, use of fork:DeprecationWarning")
def test_a_forked_child_uses_its_own_connections_and_the_parent_keeps_its_own(pg: str) -> None:
    store = PostgresDedupeStore(pg, connect_timeout=CONNECT, statement_timeout=STATEMENT)
    db = store._db
    assert db.execute("SELECT %(v)s::text", (), {"v": "before"}) == ("before",)  # the parent's pool is open

    def echo_many(who: str, count: int) -> bool:
        # Each answer is checked against its own question: a reply read by the wrong
        # process (a socket shared across the fork) would show up here.
        def one(i: int) -> bool:
            value = f"{who}-{i}-{uuid.uuid4().hex}"
            return db.execute("SELECT %(v)s::text, pg_backend_pid()", (), {"v": value}) is not None and \
                db.execute("SELECT %(v)s::text", (), {"v": value}) == (value,)

        with concurrent.futures.ThreadPoolExecutor(4) as threads:
            return all(threads.map(one, range(count)))

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own pool; nothing of the parent's is used or closed
        os.close(read)
        try:
            ok = echo_many("child", 200) and asyncio.run(store.aclaim(f"child:{uuid.uuid4().hex}")) is True
            backend = db.execute("SELECT pg_backend_pid()", (), None)
            os.write(write, f"{int(ok)} {backend[0] if backend else 0}".encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        parent_ok = echo_many("parent", 200)
        with os.fdopen(read, "rb") as pipe:
            answer = pipe.read().decode()
    finally:
        _, status = os.waitpid(pid, 0)
    child_ok, child_backend = answer.split()
    assert child_ok == "1", "the child's calls each got their own answer"
    assert parent_ok, "the parent's calls each got their own answer"
    parents = {db.execute("SELECT pg_backend_pid()", (), None) for _ in range(DEFAULT_POOL_SIZE)}
    assert (int(child_backend),) not in parents, "the child opened its own connections"
    assert db.execute("SELECT %(v)s::text", (), {"v": "after"}) == ("after",)  # the parent's pool is intact
    store.close()


def test_a_full_pool_is_a_typed_error_that_names_pool_size(pg: str) -> None:
    inbox = PostgresInbox(pg, connect_timeout=2.0, statement_timeout=10.0, pool_size=1)
    db = inbox._db
    inbox.counts()  # the pool and its one connection are open
    pool = db.pool()
    with concurrent.futures.ThreadPoolExecutor(1) as other:
        busy = other.submit(db.run, [("SELECT pg_sleep(5)", None)])
        deadline = time.monotonic() + PATIENCE
        while pool.get_stats()["pool_available"] and time.monotonic() < deadline:
            time.sleep(0.01)  # polling the pool's state: the sleeper takes its one connection
        started = time.monotonic()
        outcome = bounded(inbox.counts)
        took = time.monotonic() - started
        busy.result(timeout=PATIENCE)
    assert isinstance(outcome, StoreError), outcome
    assert "pool is full" in str(outcome) and "pool_size" in str(outcome), outcome
    assert took < 2.0 + MARGIN, "the wait for a slot is within connect_timeout"
    assert inbox.counts()["dead"] == 0  # the slot is free again
    inbox.close()


def test_pool_size_is_checked_and_a_given_pool_is_used_as_given(pg: str) -> None:
    from psycopg_pool import ConnectionPool

    from sports_posts import ParameterError

    with pytest.raises(ParameterError, match="pool_size"):
        PostgresInbox(pg, pool_size=0)
    with ConnectionPool(pg, min_size=1, max_size=2, open=True) as given:  # not autocommit: committed by the store
        with pytest.raises(ParameterError, match="pool_size"):
            PostgresInbox(given, pool_size=3)
        inbox = PostgresInbox(given)
        key = uuid.uuid4().hex
        assert inbox.put(key, b"x") is True
        assert inbox.put(key, b"x") is False
        inbox.close()
        assert not given.closed, "a pool you pass is never closed by the store"
        assert inbox.counts()["pending"] >= 1
        lease = Lease(given, key=f"pool:{uuid.uuid4().hex}", ttl=30)  # the fleet objects take it too
        assert lease.acquire() == 1, "the first fencing token"
        lease.release()


def test_a_cancelled_async_call_returns_at_once_and_its_connection_comes_back_clean(pg: str) -> None:
    inbox = PostgresInbox(pg, connect_timeout=CONNECT, statement_timeout=STATEMENT, pool_size=1)
    db = inbox._db

    async def scenario() -> tuple[Any, Any]:
        sleeper = asyncio.ensure_future(db.arun([("SELECT pg_sleep(0.5), 'sleeper'", None)]))
        await asyncio.sleep(0)  # let it take the only connection
        while not sleeper.done() and (await db.apool()).get_stats().get("pool_available", 1) != 0:
            await asyncio.sleep(0.01)  # polling the pool's state: the sleeper holds the connection
        sleeper.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sleeper
        # The only connection comes back once the sleeper's statement ended: this call gets
        # its own answer on it, never the sleeper's.
        mine = await db.arun([("SELECT 'mine'", None)])
        status = await db.arun([("SELECT state FROM pg_stat_activity WHERE query LIKE '%%pg_sleep(0.5)%%'"
                                 " AND pid <> pg_backend_pid()", None)])
        await inbox.aclose()
        return mine, status

    mine, status = asyncio.run(scenario())
    assert mine[-1][1] == [("mine",)]
    assert ("active",) not in status[-1][1]


# -- the cancel request never crashes PgBouncer (issue 49 item 0) ------------------------


@pytest.fixture
def frozen_pg() -> Iterator[PostgresProcess]:
    with PostgresProcess() as server:
        yield server


def _cancel_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "sports-posts-pg-cancel"]


@pytest.mark.slow
@pytest.mark.processes
@pytest.mark.parametrize("mode", ["session", "transaction"])
def test_a_call_that_gives_up_on_a_frozen_server_never_crashes_pgbouncer(
    frozen_pg: PostgresProcess, mode: str, unhandled: list[BaseException]
) -> None:
    from support.servers import private_pgbouncer

    with private_pgbouncer(frozen_pg.url, mode) as bouncer:
        for round_ in range(2):
            inbox = PostgresInbox(bouncer, connect_timeout=2.0, statement_timeout=1.0)
            inbox.counts()
            frozen_pg.freeze()
            try:
                started = time.monotonic()
                outcome = bounded(inbox.counts)
                took = time.monotonic() - started
            finally:
                frozen_pg.thaw()
            assert isinstance(outcome, StoreError), outcome
            assert took < 2.0 + 1.0 + MARGIN, f"round {round_}: the call took {took:.1f} s"
            # The cancel request's socket is read until PgBouncer closes it, after the resumed
            # server answered: wait for that (bounded), then PgBouncer must still serve.
            deadline = time.monotonic() + PATIENCE
            while _cancel_threads() and time.monotonic() < deadline:
                _cancel_threads()[0].join(0.1)
            assert _cancel_threads() == [], "the cancel request ended once the server resumed"
            for _ in range(3):
                with psycopg.connect(bouncer, autocommit=True, connect_timeout=5) as conn:
                    assert conn.execute("SELECT 1").fetchone() == (1,), "PgBouncer is alive and serving"
            assert inbox.counts()["dead"] == 0
            inbox.close()
    assert unhandled == []


# -- one ASGI receiver under a burst, through PgBouncer, with a restart in the middle -----


@pytest.fixture
def restartable_pg() -> Iterator[PostgresProcess]:
    with PostgresProcess() as server:
        yield server


@pytest.mark.slow
@pytest.mark.processes
@pytest.mark.parametrize("restart", [False, True], ids=["steady", "postgres-restarted"])
def test_200_concurrent_deliveries_into_one_uvicorn_receiver_each_story_once(
    restartable_pg: PostgresProcess, restart: bool, unhandled: list[BaseException]
) -> None:
    import httpx

    from sports_posts.testing import serve_asgi
    from sports_posts.webhooks import WebhookReceiver
    from sports_posts.webhooks.adapters.asgi import WebhookASGIApp
    from support.servers import private_pgbouncer
    from tests.webhooks.webhook_helpers import SECRET, signed

    direct = restartable_pg.url
    with psycopg.connect(direct, autocommit=True) as conn:
        conn.execute("CREATE TABLE story_effects (story text NOT NULL)")  # no key: a second effect shows

    with private_pgbouncer(direct, "transaction") as bouncer:
        store = PostgresDedupeStore(bouncer, lease=3.0, connect_timeout=2.0, statement_timeout=2.0)
        inbox = PostgresInbox(bouncer, lease=3.0, backoff=(0.2,), max_attempts=50, connect_timeout=2.0,
                              statement_timeout=2.0)

        def handler(event: Any) -> None:
            # The exactly-once effect docs/fleet.md shows: the claim commits with the write.
            with psycopg.connect(direct, connect_timeout=5) as conn, conn.transaction():
                if store.claim_in(conn, f"effect:{event.dedupe_key}"):
                    conn.execute("INSERT INTO story_effects VALUES (%s)", [event.dedupe_key])

        receiver = WebhookReceiver(SECRET, handler, store=store, inbox=inbox, poll_interval=0.2)
        stories = [str(10**18 + int(uuid.uuid4().int % 10**17) + i) for i in range(150)]
        requests = [signed(id=story) for story in stories] + [signed(id=story) for story in stories[:50]]
        statuses: dict[int, list[int]] = {i: [] for i in range(len(requests))}

        async def deliver(client: httpx.AsyncClient, url: str, index: int) -> None:
            request = requests[index]
            try:
                answer = await client.post(url, content=request.body, headers=request.headers)
                statuses[index].append(answer.status_code)
            except httpx.HTTPError:
                statuses[index].append(0)  # the service retries a failed request too

        async def service(url: str) -> None:
            limits = httpx.Limits(max_connections=len(requests), max_keepalive_connections=len(requests))
            async with httpx.AsyncClient(timeout=30.0, limits=limits) as client:
                burst = [asyncio.ensure_future(deliver(client, url, i)) for i in range(len(requests))]
                if restart:  # PostgreSQL restarted (fast stop, start) once a third have answered
                    while sum(1 for s in statuses.values() if s) < len(requests) // 3:
                        await asyncio.sleep(0.005)  # polling the burst's progress
                    await asyncio.get_running_loop().run_in_executor(None, restartable_pg.restart)
                await asyncio.gather(*burst)
                # The service's retries: each delivery not yet acknowledged is sent again.
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    pending = [i for i, s in statuses.items() if not (200 <= s[-1] < 300)]
                    if not pending:
                        return
                    await asyncio.sleep(0.25)  # the service's retry cadence, not a synchronisation
                    await asyncio.gather(*(deliver(client, url, i) for i in pending))

        with serve_asgi(WebhookASGIApp(receiver), lifespan="on") as root:
            asyncio.run(service(root + "/"))
            deadline = time.monotonic() + 60
            with psycopg.connect(direct, autocommit=True) as conn:
                while time.monotonic() < deadline:
                    done = conn.execute("SELECT count(*) FROM story_effects").fetchone()
                    if done and done[0] >= len(stories):
                        break
                    time.sleep(0.05)  # polling the inbox worker's progress
                effects = conn.execute("SELECT story, count(*) FROM story_effects GROUP BY story").fetchall()
        receiver.close()
        store.close()
        inbox.close()

    never_acknowledged = [i for i, s in statuses.items() if not (200 <= s[-1] < 300)]
    assert never_acknowledged == [], f"a 409 or 503 loop: {[statuses[i] for i in never_acknowledged[:5]]}"
    counts: dict[Any, Any] = dict(effects)
    assert len(counts) == len(stories), f"{len(stories) - len(counts)} stories lost"
    assert set(counts.values()) == {1}, "every story's effect exactly once"
    if not restart:
        assert all(s == [s[0]] and 200 <= s[0] < 300 for s in statuses.values()), "steady: each answered 2xx at once"
    assert unhandled == []


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_a_connection_the_pool_cannot_open_is_an_error_that_says_why_and_shows_no_password(
    pg: str, sync: bool
) -> None:
    url = pg.replace("test@", "test:hunter2@").replace("/postgres", "/no_such_database")
    inbox = PostgresInbox(url, connect_timeout=2.0)
    if sync:
        outcome = bounded(inbox.counts)
    else:
        outcome = bounded(lambda: asyncio.run(inbox.acounts()))
    assert isinstance(outcome, StoreError), outcome
    assert "no_such_database" in str(outcome) and "does not exist" in str(outcome), outcome
    assert outcome.code == "08001"  # no connection: nothing was sent
    assert "hunter2" not in str(outcome) + repr(inbox)
    inbox.close()
