"""Every store against a real server that restarts, freezes (SIGSTOP) or is unreachable, and
against its own clients frozen or killed inside a call: the next call after a restart
succeeds in the same process, a frozen server is a typed error within the store's bound,
and a frozen or killed client holds no one else up."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from typing import Any, Callable

import pytest

from sports_posts import CallBudget, ParameterError, PollState, RedisCheckpoint
from sports_posts._stores import StoreError
from sports_posts.polling import Lease, PostgresCheckpoint
from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox, RedisDedupeStore, RedisInbox
from tests.stores.bounded import PATIENCE, bounded
from tests.stores.pg_process import PostgresProcess
from tests.webhooks.stores.redis_process import RedisProcess

BOUND = 0.5  # every store's statement/socket timeout here: small, so the tests settle fast


@pytest.fixture(scope="module")
def pg() -> Iterator[PostgresProcess]:
    with PostgresProcess() as server:
        yield server


@pytest.fixture(scope="module")
def rd() -> Iterator[RedisProcess]:
    with RedisProcess(persistent=True) as server:  # a restart keeps the data: the dedupe marker too
        yield server


Call = Callable[[], Any]


def _store(kind: str, url: str) -> tuple[Any, Call]:
    """A store of ``kind`` on ``url`` with small bounds, and one call of it that writes."""
    key = f"faults:{uuid.uuid4().hex}"
    bounds: dict[str, Any] = {"connect_timeout": 2.0, "statement_timeout": BOUND}
    if kind == "lease":
        lease = Lease(url, key=key, ttl=30, **bounds)
        return lease, lease.acquire
    if kind == "budget":
        budget = CallBudget(url, per_minute=10_000, key=key, **bounds)
        return budget, budget.try_acquire
    if kind == "checkpoint":
        checkpoint: Any = (RedisCheckpoint if url.startswith("redis") else PostgresCheckpoint)(url, key=key, **bounds)
        return checkpoint, checkpoint.load
    if kind == "inbox":
        inbox: Any = (RedisInbox(url, socket_timeout=BOUND) if url.startswith("redis")
                      else PostgresInbox(url, **bounds))
        return inbox, lambda: inbox.put(uuid.uuid4().hex, b"x")
    store: Any = (RedisDedupeStore(url, socket_timeout=BOUND) if url.startswith("redis")
                  else PostgresDedupeStore(url, **bounds))
    return store, lambda: store.claim(uuid.uuid4().hex)


KINDS = ["lease", "budget", "checkpoint", "inbox", "dedupe"]


@pytest.mark.parametrize("kind", KINDS)
def test_after_a_postgres_restart_the_next_call_succeeds(pg: PostgresProcess, kind: str) -> None:
    store, call = _store(kind, pg.url)
    call()
    pg.restart()
    call()  # same object, same process: the dropped connection is replaced
    store.close()


@pytest.mark.parametrize("kind", KINDS)
def test_after_a_redis_restart_the_next_call_succeeds(rd: RedisProcess, kind: str) -> None:
    store, call = _store(kind, rd.url)
    call()
    rd.kill()
    rd.start()  # same port; the restarted server has no scripts loaded (NOSCRIPT, reloaded)
    call()
    store.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_frozen_postgres_is_a_typed_error_within_the_bound_then_recovers(pg: PostgresProcess, kind: str) -> None:
    store, call = _store(kind, pg.url)
    call()
    pg.freeze()
    try:
        outcome = bounded(call)
    finally:
        pg.thaw()
    assert isinstance(outcome, StoreError) and outcome.engine == "postgres", outcome
    # The store says which bound ended the call (a new thread connects first): statement_timeout
    # or connect_timeout themselves, no grace on top.
    assert (f"within the call's bound of {BOUND:g} s (statement_timeout)" in str(outcome)
            or "within the call's bound of 2 s per host (connect_timeout)" in str(outcome)), outcome
    call()  # the broken connection is replaced
    store.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_frozen_redis_is_a_typed_error_within_the_bound_then_recovers(rd: RedisProcess, kind: str) -> None:
    store, call = _store(kind, rd.url)
    call()
    rd.pause()
    try:
        outcome = bounded(call)
    finally:
        rd.resume()
    assert isinstance(outcome, StoreError) and outcome.engine == "redis", outcome
    call()
    store.close()


# A client that freezes (or dies) right after its statement ran, before it read the answer:
# a runner that kept the statement's transaction open then would hold its row locks.
_FROZEN_CLIENT = textwrap.dedent("""
    import os, signal, sys
    import psycopg
    from sports_posts import CallBudget
    from sports_posts.polling import Lease

    url, key, what = sys.argv[1:4]
    lease = Lease(url, key=key, ttl=0.5)
    budget = CallBudget(url, per_minute=10_000, key=key)
    lease.acquire(); budget.try_acquire()  # connected, tables made: the next call is the one
    def freeze(*args, **kwargs):
        print("frozen", flush=True)
        os.kill(os.getpid(), signal.SIGSTOP)
        raise SystemExit(3)
    psycopg.Cursor.fetchone = psycopg.Cursor.fetchall = freeze
    (lease.acquire if what == "lease" else budget.try_acquire)()
""")


@pytest.mark.parametrize("what", ["lease", "budget"])
@pytest.mark.parametrize("then", ["frozen", "killed"])
def test_a_client_frozen_or_killed_inside_a_call_holds_no_one_up(pg: PostgresProcess, what: str, then: str) -> None:
    key = f"faults:{uuid.uuid4().hex}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", _FROZEN_CLIENT, pg.url, key, what],
                             stdout=subprocess.PIPE, env=env)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == b"frozen"
        if then == "killed":
            child.kill()
            child.wait(timeout=10)
        if what == "budget":
            budget = CallBudget(pg.url, per_minute=10_000, key=key, statement_timeout=BOUND)
            outcome = bounded(budget.try_acquire)
            assert not isinstance(outcome, BaseException) and outcome.granted, outcome
            budget.close()
        else:
            lease = Lease(pg.url, key=key, ttl=0.5, statement_timeout=BOUND)

            def take_over() -> Any:
                deadline = time.monotonic() + PATIENCE / 2  # the frozen holder's ttl must lapse
                while time.monotonic() < deadline:
                    token = lease.acquire()
                    if token is not None:
                        return token
                    time.sleep(0.05)  # the server's clock decides the expiry; poll it
                return None

            token = bounded(take_over)
            assert isinstance(token, int) and token > 0, token
            lease.close()
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGCONT)
            child.kill()
        child.wait(timeout=10)


@pytest.mark.parametrize("make", [
    lambda url: CallBudget(url, per_minute=1),
    lambda url: Lease(url),
    lambda url: RedisCheckpoint(url),
    lambda url: RedisInbox(url),
    lambda url: RedisDedupeStore(url),
])
def test_a_mistyped_redis_url_is_a_parameter_error_at_construction(
    make: Callable[[str], Any], secrets_never_leak: Any
) -> None:
    secrets_never_leak.register("pw_secret_typo")  # no log line or error message may show it
    with pytest.raises(ParameterError) as info:
        make("redis://:pw_secret_typo@localhost:63799x/0")
    assert "pw_secret_typo" not in str(info.value) and "63799x" in str(info.value)


@pytest.mark.parametrize("make", [
    lambda url: CallBudget(url, per_minute=1),
    lambda url: Lease(url),
    lambda url: PostgresCheckpoint(url),
    lambda url: PostgresInbox(url),
    lambda url: PostgresDedupeStore(url),
])
def test_a_mistyped_postgres_url_is_a_parameter_error_at_construction(
    make: Callable[[str], Any], secrets_never_leak: Any
) -> None:
    secrets_never_leak.register("pw_secret_typo")
    with pytest.raises(ParameterError) as info:
        make("postgresql://test:pw_secret_typo@localhost:54x/postgres")
    assert "pw_secret_typo" not in str(info.value)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("engine", ["redis", "postgres"])
def test_an_unreachable_store_is_a_typed_error_and_no_password_shows(
    engine: str, kind: str, secrets_never_leak: Any
) -> None:
    secret = "pw_secret_in_query"
    secrets_never_leak.register(secret)  # the suite then checks every log record and error too
    url = (f"redis://127.0.0.1:1/0?password={secret}" if engine == "redis"
           else f"postgresql://test@127.0.0.1:1/postgres?password={secret}")
    store, call = _store(kind, url)
    with pytest.raises(StoreError) as info:
        call()
    assert info.value.engine == engine
    assert secret not in str(info.value) and secret not in repr(store)


@pytest.mark.parametrize("module, extra", [("redis", "redis"), ("psycopg", "postgres")])
@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_extra_is_one_error_with_the_pip_line(
    monkeypatch: pytest.MonkeyPatch, module: str, extra: str, kind: str
) -> None:
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.setitem(sys.modules, name, None)  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, module, None)  # type: ignore[arg-type]
    url = "redis://127.0.0.1:1/0" if module == "redis" else "postgresql://test@127.0.0.1:1/postgres"
    with pytest.raises(StoreError, match=rf"pip install 'sports-posts\[{extra}\]'") as info:
        _store(kind, url)
    assert info.value.engine == extra


def test_poll_state_round_trips_through_a_restarted_postgres(pg: PostgresProcess) -> None:
    from datetime import datetime, timezone

    checkpoint = PostgresCheckpoint(pg.url, key=f"faults:{uuid.uuid4().hex}", statement_timeout=BOUND)
    state = PollState.start(datetime(2026, 3, 1, tzinfo=timezone.utc))
    checkpoint.save(state)
    pg.restart()
    assert checkpoint.load() == state
    checkpoint.close()


@pytest.mark.parametrize("engine", ["postgres", "redis"])
def test_a_budget_draw_on_a_frozen_store_ends_within_the_calls_timeout(
    pg: PostgresProcess, rd: RedisProcess, engine: str
) -> None:
    from sports_posts import APITimeoutError, SportsPosts

    server: Any = pg if engine == "postgres" else rd
    # The store's own bound is long; the call's timeout is what must end the draw.
    budget = CallBudget(server.url, per_minute=10_000, key=f"faults:{uuid.uuid4().hex}", statement_timeout=60)
    client = SportsPosts(api_key="sk_test_faults", base_url="http://127.0.0.1:9/v1", budget=budget,
                         timeout=BOUND, max_retries=0)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # one thread: its connection is made
        pool.submit(budget.try_acquire).result()
        (server.freeze if engine == "postgres" else server.pause)()
        try:
            future = pool.submit(lambda: client.posts.list(limit=1))
            try:
                outcome = future.exception(timeout=PATIENCE)
            except concurrent.futures.TimeoutError:
                pytest.fail(f"the call was still waiting after {PATIENCE} s: unbounded")
        finally:
            (server.thaw if engine == "postgres" else server.resume)()
    if engine == "postgres":
        assert isinstance(outcome, APITimeoutError), outcome
    else:  # redis-py has no per-command timeout: the draw ends at the socket timeout, typed
        assert isinstance(outcome, (APITimeoutError, StoreError)), outcome
    assert client.calls == 0, "nothing was sent"
    client.close()
    budget.close()


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ["postgres", "redis"])
async def test_an_async_budget_draw_on_a_frozen_store_ends_within_the_calls_timeout(
    pg: PostgresProcess, rd: RedisProcess, engine: str
) -> None:
    import anyio

    from sports_posts import APITimeoutError, AsyncSportsPosts

    server: Any = pg if engine == "postgres" else rd
    budget = CallBudget(server.url, per_minute=10_000, key=f"faults:{uuid.uuid4().hex}", statement_timeout=60)
    await budget.try_acquire_async()
    client = AsyncSportsPosts(api_key="sk_test_faults", base_url="http://127.0.0.1:9/v1", budget=budget,
                              timeout=BOUND, max_retries=0)
    (server.freeze if engine == "postgres" else server.pause)()
    try:
        with anyio.fail_after(PATIENCE):
            with pytest.raises(APITimeoutError):
                await client.posts.list(limit=1)
    finally:
        (server.thaw if engine == "postgres" else server.resume)()
    assert client.calls == 0, "nothing was sent"
    await client.aclose()
    await budget.aclose()


@pytest.mark.parametrize("kind", ["inbox", "dedupe"])
def test_a_locked_sqlite_file_is_a_typed_store_error(tmp_path: Any, kind: str) -> None:
    import sqlite3

    from sports_posts.webhooks import SQLiteDedupeStore, SQLiteInbox

    path = tmp_path / "store.sqlite3"
    store: Any = (SQLiteInbox(path, busy_timeout=0.05) if kind == "inbox"
                  else SQLiteDedupeStore(path, busy_timeout=0.05))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the file past the busy timeout
    try:
        with pytest.raises(StoreError) as info:
            store.put("k", b"x") if kind == "inbox" else store.claim("k")
        assert info.value.engine == "sqlite" and type(store).__name__ in str(info.value)
        assert not isinstance(info.value, sqlite3.Error)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.put("k", b"x") if kind == "inbox" else store.claim("k")
    store.close()


def test_the_watchdog_keeps_only_what_runs_and_ends_only_what_overruns() -> None:
    import socket as socket_module
    import types

    from sports_posts._stores.watchdog import _Watchdog

    def no_cancel() -> Any:
        raise RuntimeError("no cancel request here: the socket shutdown alone")

    dog = _Watchdog()
    left, right = socket_module.socketpair()
    conn = types.SimpleNamespace(pgconn=types.SimpleNamespace(socket=left.fileno(), cancel_conn=no_cancel))
    try:
        for _ in range(1000):  # statements that finish in time: disarmed, never fired
            assert dog.disarm(dog.arm(30.0, conn, 1.0)) is False
        assert dog._armed == {} and dog._fired == set(), "finished statements do not pile up"
        assert right.send(b"x") == 1 and left.recv(1) == b"x", "nothing was shut down"
        ticket = dog.arm(0.01, conn, 0.0)  # a statement that overruns its bound
        right.settimeout(PATIENCE)
        assert right.recv(1) == b"", "its socket was shut down"
        assert dog.disarm(ticket) is True, "the call learns that its bound ended it"
    finally:
        left.close()
        right.close()


def test_a_frozen_postgres_ends_a_call_on_an_open_connection_at_its_statement_timeout(pg: PostgresProcess) -> None:
    # A pool of the customer's (no check of its own): the same, and the pool stays open.
    from psycopg_pool import ConnectionPool

    with ConnectionPool(pg.url, min_size=1, max_size=1, open=True, kwargs={"autocommit": True}) as given:
        _counts_on_a_frozen_server_end_at_the_statement_timeout(
            pg, PostgresInbox(given, connect_timeout=2.0, statement_timeout=BOUND))
        assert not given.closed, "the customer's pool stays open"


def test_a_frozen_postgres_ends_a_call_on_a_pooled_connection_at_its_statement_timeout(
    pg: PostgresProcess,
) -> None:
    inbox = PostgresInbox(pg.url, connect_timeout=2.0, statement_timeout=BOUND)
    _counts_on_a_frozen_server_end_at_the_statement_timeout(pg, inbox)
    inbox.close()


def _counts_on_a_frozen_server_end_at_the_statement_timeout(pg: PostgresProcess, inbox: PostgresInbox) -> None:
    """A call on a pooled connection of a server frozen under it ends at its statement_timeout
    (SQLSTATE 57014); the ended connection is discarded and the next call gets a new one."""
    inbox.counts()  # the pool holds an open connection, lent at once (the server said nothing to it)
    pg.freeze()
    try:
        outcome = bounded(inbox.counts)
    finally:
        pg.thaw()
    assert isinstance(outcome, StoreError), outcome
    assert f"within the call's bound of {BOUND:g} s (statement_timeout)" in str(outcome), outcome
    assert outcome.code == "57014"
    assert inbox.counts()["dead"] == 0  # the ended connection was discarded and replaced


def test_a_frozen_postgres_ends_an_async_put_at_its_statement_timeout(pg: PostgresProcess) -> None:
    # aput reads its answer on the libpq connection itself (_stores/quoted.py): the same watchdog
    inbox = PostgresInbox(pg.url, connect_timeout=2.0, statement_timeout=BOUND)

    async def put(key: str) -> bool:
        return await inbox.aput(key, b"x")

    async def scenario() -> tuple[Any, bool]:
        assert await put(uuid.uuid4().hex)
        pg.freeze()
        try:
            outcome: Any = await put(uuid.uuid4().hex)
        except StoreError as exc:
            outcome = exc
        finally:
            pg.thaw()
        after = await put(uuid.uuid4().hex)  # the ended connection was discarded and replaced
        await inbox.aclose()
        return outcome, after

    outcome, after = bounded(lambda: asyncio.run(scenario()))
    assert isinstance(outcome, StoreError), outcome
    assert f"within the call's bound of {BOUND:g} s (statement_timeout)" in str(outcome), outcome
    assert outcome.code == "57014" and after is True
