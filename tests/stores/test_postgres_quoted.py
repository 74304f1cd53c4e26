"""The hot path of ``PostgresInbox.put`` and ``mark_done`` and ``PostgresDedupeStore.claim``
(``sports_posts/_stores/quoted.py``): its values quoted on the client by libpq, its message
sent and read on the libpq connection in the caller's task or thread, with no cursor.
Every value comes back as it was put, on every deployment and with either setting of
``standard_conforming_strings``; a failure is the store's typed error; a cancelled call
returns at once while its statement runs on and gives its connection back (a frozen server
ending an async put at its bound: tests/stores/test_store_faults.py)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import psycopg
import pytest

from sports_posts._stores import StoreError
from sports_posts._stores import quoted as quoted_module
from sports_posts._stores.quoted import Quoted, Template
from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox

pytestmark = pytest.mark.postgres

KEYS = ["plain", "it's", "back\\slash", "per%cent %(key)s %s", "E'\\x00'", "$$dollar$$", "; DROP TABLE x; --",
        "ünïcødé ✓ 𝄞", "line\nbreak\ttab", "k" * 2000]
BODIES = [bytes(range(256)), b"", b"\\x41", b"'quoted' \\ \"double\"", "ünïcødé".encode()]
DELIVERIES = [None, "d-1", "it's \\ 'd'", "%(delivery)s"]


def _cases() -> list[tuple[str, bytes, Any]]:
    return [(key, BODIES[i % len(BODIES)], DELIVERIES[i % len(DELIVERIES)]) for i, key in enumerate(KEYS)]


def _stored(url: str) -> dict[str, tuple[bytes, Any]]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT key, body, delivery_id FROM sports_posts_inbox").fetchall()
    return {key: (bytes(body), delivery) for key, body, delivery in rows}


@pytest.mark.parametrize("sync", [True, False], ids=["put", "aput"])
def test_every_key_body_and_delivery_id_comes_back_as_put(pg: str, deployment: str, sync: bool) -> None:
    inbox = PostgresInbox(deployment)
    cases = _cases()
    if sync:
        first = [inbox.put(key, body, delivery) for key, body, delivery in cases]
        again = [inbox.put(key, b"other", "other") for key, _, _ in cases]
        inbox.close()
    else:
        async def scenario() -> tuple[list[bool], list[bool]]:
            first = [await inbox.aput(key, body, delivery) for key, body, delivery in cases]
            again = [await inbox.aput(key, b"other", "other") for key, _, _ in cases]
            await inbox.aclose()
            return first, again

        first, again = asyncio.run(scenario())
    assert first == [True] * len(cases) and again == [False] * len(cases), "a retry of a stored story is refused"
    assert _stored(pg) == {key: (body, delivery) for key, body, delivery in cases}


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_claims_and_done_marks_of_every_key_mean_what_they_say_on_the_quoted_path(
    pg: str, deployment: str, sync: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # claim and mark_done go the quoted way (no cursor) but for a sweep's turn: every key is
    # claimed once, refused while claimed, and done; every entry leased is marked done once.
    quoted: list[str] = []

    def counted(*args: Any) -> int:
        quoted.append("sync")
        return quoted_module.reply(*args)

    async def acounted(*args: Any) -> int:
        quoted.append("async")
        return await quoted_module.areply(*args)

    monkeypatch.setattr("sports_posts._stores.postgres.reply", counted)
    monkeypatch.setattr("sports_posts._stores.postgres.areply", acounted)
    store, inbox = PostgresDedupeStore(deployment), PostgresInbox(deployment)
    keys = [f"{i}:{key}" for i, key in enumerate(KEYS)]
    if sync:
        claimed = [(store.claim(key), store.claim(key)) for key in keys]
        for key in keys:
            store.complete(key)
        done = [store.is_complete(key) for key in keys]
        for key in keys:
            inbox.put(key, b"x")
        taken = inbox.take_due(len(keys))
        for entry in taken:
            inbox.mark_done(entry)
        counts = inbox.counts()
        store.close()
        inbox.close()
    else:
        async def scenario() -> tuple[Any, ...]:
            claimed = [(await store.aclaim(key), await store.aclaim(key)) for key in keys]
            for key in keys:
                await store.acomplete(key)
            done = [await store.ais_complete(key) for key in keys]
            for key in keys:
                await inbox.aput(key, b"x")
            taken = await inbox.atake_due(len(keys))
            for entry in taken:
                await inbox.amark_done(entry)
            counts = await inbox.acounts()
            await store.aclose()
            await inbox.aclose()
            return claimed, done, taken, counts

        claimed, done, taken, counts = asyncio.run(scenario())
    assert claimed == [(True, False)] * len(keys) and done == [True] * len(keys)
    assert sorted(entry.key for entry in taken) == sorted(keys)
    assert counts["done"] == len(keys) and counts["processing"] == 0, counts
    # Every claim, put and mark_done (a sweep's turn, one call in a thousand, sends a list of two)
    assert quoted == ["sync" if sync else "async"] * (2 * len(keys) + len(keys) + len(keys)), quoted


def test_a_sweeps_turn_sends_its_statement_and_the_delete_and_means_the_same(
    pg: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every call a sweep's turn: claim and mark_done then send a list of two statements
    # (no longer one Quoted), whose first answers as the quoted one does.
    from sports_posts.webhooks import _store

    monkeypatch.setattr(_store, "_SWEEP_EVERY", 1)
    now = [1_000_000.0]
    store = PostgresDedupeStore(pg, lease=60, ttl=7200, clock=lambda: now[0])
    inbox = PostgresInbox(pg, clock=lambda: now[0])
    assert not isinstance(store._claim_sql("k", "t"), Quoted)
    assert store.claim("lapsed") is True
    now[0] += 61  # its lease lapsed: the next claim's sweep deletes its row
    assert (store.claim("it's"), store.claim("it's")) == (True, False)
    with psycopg.connect(pg, autocommit=True) as conn:
        keys = {row[0] for row in conn.execute("SELECT key FROM sports_posts_claims").fetchall()}
    assert keys == {"it's"}
    assert inbox.put("entry", b"x") is True
    [entry] = inbox.take_due(1)
    inbox.mark_done(entry)
    assert inbox.counts()["done"] == 1
    store.close()
    inbox.close()


@pytest.mark.parametrize("conforming", ["on", "off"])
def test_values_are_quoted_for_the_connections_own_settings(pg: str, conforming: str) -> None:
    # A pool of the customer's whose connections run with standard_conforming_strings off
    # (backslashes escape in '...' literals): libpq's escaping follows the connection.
    from psycopg_pool import AsyncConnectionPool, ConnectionPool

    kwargs = {"autocommit": True, "options": f"-c standard_conforming_strings={conforming}"}
    cases = _cases()
    with ConnectionPool(pg, min_size=1, max_size=1, kwargs=kwargs) as given:
        inbox = PostgresInbox(given)
        assert [inbox.put(f"sync:{key}", body, delivery) for key, body, delivery in cases] == [True] * len(cases)

    async def scenario() -> list[bool]:
        async with AsyncConnectionPool(pg, min_size=1, max_size=1, kwargs=kwargs) as given:
            inbox = PostgresInbox(given)
            return [await inbox.aput(f"async:{key}", body, delivery) for key, body, delivery in cases]

    assert asyncio.run(scenario()) == [True] * len(cases)
    expected = {f"{side}:{key}": (body, delivery) for side in ("sync", "async") for key, body, delivery in cases}
    assert _stored(pg) == expected


def test_a_pool_whose_connections_are_not_in_autocommit_leaves_no_transaction_open(pg: str) -> None:
    from psycopg_pool import AsyncConnectionPool

    async def scenario() -> tuple[bool, Any]:
        async with AsyncConnectionPool(pg, min_size=1, max_size=1, kwargs={"autocommit": False}) as given:
            inbox = PostgresInbox(given)
            put = await inbox.aput("committed", b"x")
            async with given.connection() as conn:
                return put, conn.info.transaction_status

    put, status = asyncio.run(scenario())
    assert put is True and status == psycopg.pq.TransactionStatus.IDLE
    assert "committed" in _stored(pg), "committed: another connection sees it"


def test_a_nul_in_a_delivery_id_is_a_store_error_and_the_connection_stays_usable(pg: str) -> None:
    inbox = PostgresInbox(pg, pool_size=1)

    async def scenario() -> tuple[Any, bool]:
        try:
            await inbox.aput("nul", b"x", "d\x00")
        except StoreError as exc:
            failed: Any = exc
        else:
            failed = None
        after = await inbox.aput("after", b"x")
        await inbox.aclose()
        return failed, after

    failed, after = asyncio.run(scenario())
    assert isinstance(failed, StoreError) and "NUL" in str(failed), failed
    with pytest.raises(StoreError, match="NUL"):
        inbox.put("nul", b"x", "d\x00")
    inbox.close()
    assert after is True and set(_stored(pg)) == {"after"}, "nothing of the refused put was stored"


def test_a_statement_the_server_refuses_is_a_store_error_with_its_sqlstate(pg: str) -> None:
    inbox = PostgresInbox(pg, pool_size=1)
    failing = Quoted(Template("SELECT 1 / %(zero)s"), {"zero": 0})

    async def scenario() -> tuple[Any, bool]:
        try:
            await inbox._db.arun(failing)
        except StoreError as exc:
            failed: Any = exc
        else:
            failed = None
        after = await inbox.aput("after", b"x")  # the one connection came back idle
        await inbox.aclose()
        return failed, after

    failed, after = asyncio.run(scenario())
    assert isinstance(failed, StoreError) and failed.code == "22012", failed
    assert "division by zero" in str(failed) and "DivisionByZero" in str(failed)
    assert after is True


@pytest.mark.parametrize("value", [None, True, False, 0, 7, -5, 2.5, -2.5, 1e300, -1e-300, math.inf, -math.inf,
                                   "", "it's \\ %", "ünï"])
def test_a_literal_means_what_psycopgs_own_binding_means(pg: str, value: Any) -> None:
    # Each value where the store's statements put them: alone, in an expression, cast.
    sql = "SELECT %(v)s IS NULL, (%(v)s)::text, pg_typeof(%(v)s)::text"
    with psycopg.connect(pg, autocommit=True) as conn:
        mine = conn.execute(Template(sql).render(conn, {"v": value})).fetchone()
        cast = conn.execute(Template("SELECT %(v)s::text").render(conn, {"v": value})).fetchone()
        with psycopg.ClientCursor(conn) as cur:
            theirs = cur.execute(sql, {"v": value}).fetchone()
    assert mine is not None and theirs is not None and cast is not None
    assert cast[0] == mine[1], "a negative number cast as a whole (psycopg's own '-5::text' is -('5'))"
    if isinstance(value, float) and math.isfinite(value):
        assert float(mine[1]) == float(theirs[1]) == value  # the same number (numeric or float8)
        assert mine[::2] == theirs[::2]
    else:
        assert mine == theirs


def test_nan_and_bytes_become_the_same_values(pg: str) -> None:
    with psycopg.connect(pg, autocommit=True) as conn:
        row = conn.execute(Template("SELECT %(n)s::float8, %(b)s").render(conn, {"n": math.nan, "b": b"\x00'\\"}))
        nan, data = row.fetchone()  # type: ignore[misc]
    assert math.isnan(nan) and bytes(data) == b"\x00'\\"


def test_a_template_refuses_a_stray_percent_and_a_value_it_cannot_write() -> None:
    with pytest.raises(ValueError, match="placeholder"):
        Template("SELECT 5 % 2")
    assert Template("SELECT 5 %% 2, %(a)s").sql == "SELECT 5 %% 2, %(a)s"
    quoted = Quoted(Template("SELECT %(a)s"), {"a": 1})
    assert len(quoted) == 1 and list(quoted) == [("SELECT %(a)s", {"a": 1})]
    assert quoted[0] == quoted[-1] and quoted[:1] == [("SELECT %(a)s", {"a": 1})]


def test_a_value_without_a_literal_is_a_type_error(pg: str) -> None:
    with psycopg.connect(pg, autocommit=True) as conn, pytest.raises(TypeError, match="list"):
        Template("SELECT %(a)s").render(conn, {"a": [1, 2]})


def test_the_percent_of_a_template_is_sent_as_one(pg: str) -> None:
    with psycopg.connect(pg, autocommit=True) as conn:
        rendered = Template("SELECT 5 %% 2 = %(one)s").render(conn, {"one": 1})
        assert conn.execute(rendered).fetchone() == (True,)


# -- a cancelled call returns at once; its statement runs on and gives its connection back --


async def _until(check: Any) -> None:
    """Wait (bounded) until ``check()`` is true: the state of another connection."""
    for _ in range(3000):
        if await check():
            return
        await asyncio.sleep(0.01)
    pytest.fail("the state was never reached")


def test_a_put_cancelled_while_it_waits_for_a_connection_is_put_once_the_pool_lends_one(pg: str) -> None:
    inbox = PostgresInbox(pg, pool_size=1)
    db = inbox._db

    async def scenario() -> tuple[bool, bool, Any]:
        async with await psycopg.AsyncConnection.connect(pg, autocommit=True) as holder:
            await holder.execute("SELECT pg_advisory_lock(4242)")
            # the pool's only connection, held by a call that waits for the lock
            blocker = asyncio.ensure_future(db.arun([("SELECT pg_advisory_xact_lock(4242)", None)]))

            async def blocked() -> bool:
                rows = await (await holder.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
                )).fetchone()
                return bool(rows and rows[0])

            await _until(blocked)
            put = asyncio.ensure_future(inbox.aput("waited", b"body", "d"))
            await _until(lambda: _waiting(db))
            put.cancel()
            with pytest.raises(asyncio.CancelledError):
                await put
            returned_at_once = not blocker.done()
            await holder.execute("SELECT pg_advisory_unlock(4242)")
        await blocker
        entry = await inbox.aget("waited")  # the pool serves in turn: the put's rest ran first
        again = await inbox.aput("waited", b"other")
        await inbox.aclose()
        return returned_at_once, again, entry

    returned_at_once, again, entry = asyncio.run(scenario())
    assert returned_at_once, "the cancelled put returned while the pool's only connection was still busy"
    assert entry is not None and entry.body == b"body" and entry.delivery_id == "d"
    assert again is False


async def _waiting(db: Any) -> bool:
    return bool((await db.apool()).get_stats().get("requests_waiting", 0))


async def _lock_waits(conn: Any) -> bool:
    """Whether a statement of another connection waits for a lock (a row's, an advisory one)."""
    cur = await conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()")
    row = await cur.fetchone()
    return bool(row and row[0])


def test_a_put_cancelled_while_it_waits_for_its_reply_returns_at_once_and_its_insert_runs_on(pg: str) -> None:
    inbox = PostgresInbox(pg, pool_size=1)

    async def backend() -> int:
        return int((await inbox._db.arun([("SELECT pg_backend_pid()", None)]))[0][1][0][0])

    async def scenario() -> tuple[bool, Any, bool, list[Any]]:
        await inbox.amigrate()  # not during the test: its CREATE INDEX would wait for the holder too
        before = await backend()
        async with await psycopg.AsyncConnection.connect(pg) as holder, \
                await psycopg.AsyncConnection.connect(pg, autocommit=True) as watcher:
            # another transaction inserted the key and has not decided: the put's INSERT waits for it
            await holder.execute("INSERT INTO sports_posts_inbox (key, body, state, due_at, received_at)"
                                 " VALUES ('raced', 'theirs', 'pending', 0, 0)")
            put = asyncio.ensure_future(inbox.aput("raced", b"mine", "d"))
            await _until(lambda: _lock_waits(watcher))
            put.cancel()
            with pytest.raises(asyncio.CancelledError):
                await put
            returned_at_once = holder.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
            await holder.rollback()  # now the put's INSERT goes through
        entry = await inbox.aget("raced")  # the pool serves in turn: the put's rest ran first
        idle = await backend() == before  # the one connection, given back idle, not replaced
        async with await psycopg.AsyncConnection.connect(pg, autocommit=True) as conn:
            active = await (await conn.execute(
                "SELECT state FROM pg_stat_activity WHERE query LIKE '%%INSERT INTO sports_posts_inbox%%'"
                " AND state = 'active' AND pid <> pg_backend_pid()")).fetchall()
        await inbox.aclose()
        return returned_at_once, entry, idle, active

    returned_at_once, entry, idle, active = asyncio.run(scenario())
    assert returned_at_once, "the cancelled put returned while its INSERT still waited"
    assert entry is not None and entry.body == b"mine" and entry.delivery_id == "d", "its INSERT ran on"
    assert idle and active == [], "its connection came back idle"


def test_a_cancelled_put_whose_loop_ends_leaves_no_task_behind(pg: str, caplog: pytest.LogCaptureFixture) -> None:
    inbox = PostgresInbox(pg, pool_size=1, auto_migrate=False)  # the pg fixture made the tables
    with psycopg.connect(pg) as holder:
        holder.execute("INSERT INTO sports_posts_inbox (key, body, state, due_at, received_at)"
                       " VALUES ('ended', 'theirs', 'pending', 0, 0)")

        async def scenario() -> None:
            put = asyncio.ensure_future(inbox.aput("ended", b"mine"))
            async with await psycopg.AsyncConnection.connect(pg, autocommit=True) as watcher:
                await _until(lambda: _lock_waits(watcher))
            put.cancel()
            with pytest.raises(asyncio.CancelledError):
                await put
            # the loop ends here, the put's INSERT still waiting: its task is cancelled in turn

        asyncio.run(scenario())
        holder.commit()
    assert "Task was destroyed" not in caplog.text and "exception was never retrieved" not in caplog.text
    assert inbox.put("after", b"x") is True  # the store works on (a sync pool of its own)
    inbox.close()
    assert _stored(pg)["ended"] == (b"theirs", None)
