"""Every PostgreSQL store on the deployments customers run: the server itself, and a PgBouncer
with its default settings (transaction and session pooling) in front of it. Each store is
called more often than psycopg's prepare threshold, sync and async; the store's timeouts
apply inside its own transactions; a call that gives up decides nothing; four worker
processes drain one inbox through the pooler with ``claim_in`` effects exactly once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import uuid
from datetime import datetime, timezone
from typing import Any

import psycopg
import pytest

from sports_posts import CallBudget, PollState
from sports_posts._stores import CoordinationError, StoreError
from sports_posts.polling import Lease, PostgresCheckpoint
from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox

STATE = PollState(datetime(2026, 1, 1, tzinfo=timezone.utc), datetime(2026, 1, 1, tzinfo=timezone.utc), {})
CALLS = 12  # more than psycopg's prepare_threshold (5): a prepared statement would surface


def _connect(url: str) -> psycopg.Connection[Any]:
    """A customer's connection as psycopg documents it for PgBouncer."""
    return psycopg.connect(url, autocommit=True, prepare_threshold=None)


def test_every_store_works_many_times_in_a_row(deployment: str) -> None:
    dedupe, inbox = PostgresDedupeStore(deployment), PostgresInbox(deployment)
    budget = CallBudget(deployment, per_minute=10_000, key=f"budget:{uuid.uuid4().hex}")
    lease = Lease(deployment, key=f"lease:{uuid.uuid4().hex}")
    checkpoint = PostgresCheckpoint(deployment, key=lease.key)
    draws = []
    for n in range(CALLS):
        assert dedupe.claim(f"d{n}") and not dedupe.claim(f"d{n}")
        dedupe.complete(f"d{n}")
        assert dedupe.is_complete(f"d{n}")
        assert inbox.put(f"i{n}", b"{}") and not inbox.put(f"i{n}", b"{}")
        for entry in inbox.take_due(1):
            inbox.mark_done(entry)
        draws.append(budget.try_acquire())
        assert draws[-1].granted
        assert lease.acquire() == 1 and lease.renew()
        checkpoint.fence(1)
        checkpoint.load()
        checkpoint.save(STATE)
    assert inbox.counts()["done"] == CALLS
    # each draw counted once: one more than the last in the same minute of the store's clock
    assert draws[0].minute_used == 1
    for last, draw in zip(draws, draws[1:]):
        same_minute = last.now_ms // 60_000 == draw.now_ms // 60_000
        assert draw.minute_used == (last.minute_used + 1 if same_minute else 1)
    for n in range(CALLS):  # a batch recorded in one statement, as the receiver's worker does
        inbox.put(f"batch{n}", b"{}")
    assert inbox.mark_done_many(inbox.take_due(CALLS)) == CALLS
    assert inbox.counts()["done"] == 2 * CALLS
    with _connect(deployment) as conn:
        for n in range(CALLS):
            with conn.transaction():
                assert dedupe.claim_in(conn, f"e{n}") is True
            with conn.transaction():
                assert dedupe.claim_in(conn, f"e{n}") is False
    for store in (dedupe, inbox, lease, checkpoint):
        store.close()


def test_every_async_twin_works_many_times_in_a_row(deployment: str) -> None:
    async def main() -> None:
        dedupe, inbox = PostgresDedupeStore(deployment), PostgresInbox(deployment)
        budget = CallBudget(deployment, per_minute=10_000, key=f"budget:{uuid.uuid4().hex}")
        lease = Lease(deployment, key=f"lease:{uuid.uuid4().hex}")
        for n in range(CALLS):
            assert await dedupe.aclaim(f"a{n}") and not await dedupe.aclaim(f"a{n}")
            await dedupe.acomplete(f"a{n}")
            assert await inbox.aput(f"a{n}", b"{}")
            for entry in await inbox.atake_due(1):
                await inbox.amark_done(entry)
            assert (await budget.try_acquire_async()).granted
            assert await lease.acquire_async() == 1
        assert (await inbox.acounts())["done"] == CALLS
        for n in range(CALLS):
            await inbox.aput(f"abatch{n}", b"{}")
        assert await inbox.amark_done_many(await inbox.atake_due(CALLS)) == CALLS
        assert (await inbox.acounts())["done"] == 2 * CALLS
        conn = await psycopg.AsyncConnection.connect(deployment, autocommit=True, prepare_threshold=None)
        try:
            for n in range(CALLS):
                async with conn.transaction():
                    assert await dedupe.aclaim_in(conn, f"ae{n}") is True
        finally:
            await conn.close()
        for store in (dedupe, inbox, lease):
            await store.aclose()

    asyncio.run(main())


def test_the_stores_timeouts_apply_inside_their_own_transactions(deployment: str) -> None:
    inbox = PostgresInbox(deployment, statement_timeout=4.0)
    for _ in range(CALLS):
        rows = inbox._db.run([("SHOW statement_timeout", None), ("SHOW lock_timeout", None)])
        assert rows[0][1] == [("3600ms",)], "90% of the bound: the server stops first"
    with _connect(deployment) as conn:
        assert conn.execute("SHOW statement_timeout").fetchone() == ("0",), "nothing leaks to a pooled session"
    inbox.close()


def test_a_call_that_gives_up_decided_nothing(deployment: str) -> None:
    key = f"lease:{uuid.uuid4().hex}"
    first = Lease(deployment, key=key, ttl=0.1)
    assert first.acquire() == 1  # the row exists; it expires at once
    with _connect(deployment) as blocker, blocker.transaction():
        blocker.execute("SELECT 1 FROM sports_posts_leases WHERE key = %s FOR UPDATE", (key,))
        late = Lease(deployment, key=key, ttl=60, statement_timeout=0.5)
        with pytest.raises(CoordinationError) as caught:
            late.acquire()  # waits for the row lock, then gives up
        assert caught.value.code in ("57014", "55P03", None), caught.value
    status = _after_the_lock(deployment, key)
    assert status == (None, 1), "a failure reported to the caller must decide nothing"
    assert late.token is None


def test_four_workers_drain_through_the_pooler_with_claim_in_effects_exactly_once(
    pgbouncer_transaction_url: str, pg: str
) -> None:
    url = pgbouncer_transaction_url
    inbox = PostgresInbox(url)
    stories = [f"story-{n}" for n in range(120)]
    for story in stories:
        inbox.put(story, story.encode())
    with _connect(pg) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS story_effects (story text NOT NULL, pid integer)")
        conn.execute("TRUNCATE story_effects")
    worker = textwrap.dedent("""
        import os, sys
        import psycopg
        from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox
        url = sys.argv[1]
        inbox, store = PostgresInbox(url, lease=30), PostgresDedupeStore(url)
        conn = psycopg.connect(url, autocommit=True, prepare_threshold=None)
        while True:
            entries = inbox.take_due(4)
            if not entries:
                break
            for entry in entries:
                with conn.transaction():
                    if store.claim_in(conn, entry.key):
                        conn.execute("INSERT INTO story_effects VALUES (%s, %s)", (entry.body.decode(), os.getpid()))
            inbox.mark_done_many(entries)  # the batch in one statement, as the receiver's worker
    """)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    procs = [subprocess.Popen([sys.executable, "-c", worker, url], env=env, stderr=subprocess.PIPE)
             for _ in range(4)]
    errors = [proc.communicate(timeout=120)[1].decode()[-2000:] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0, 0], errors
    with _connect(pg) as conn:
        rows = conn.execute("SELECT story, count(*) FROM story_effects GROUP BY story").fetchall()
    assert sorted(story for story, _ in rows) == sorted(stories)
    assert {count for _, count in rows} == {1}
    assert inbox.counts()["done"] == len(stories)
    inbox.close()


def test_a_multi_host_url_is_accepted_and_its_password_never_shows(pg: str) -> None:
    url = pg.replace("test@", "test:hunter2@").replace(
        "/postgres", ",127.0.0.1:1/postgres") + "?target_session_attrs=read-write"
    inbox = PostgresInbox(url, connect_timeout=2)
    assert "hunter2" not in repr(inbox) and "127.0.0.1:1" in repr(inbox)
    assert inbox.put(uuid.uuid4().hex, b"{}")  # the first host answers
    inbox.close()


def test_claim_in_opens_no_connection_of_its_own(pg: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = PostgresDedupeStore("postgresql://test@127.0.0.1:1/postgres")  # nothing listens there
    opened: list[str] = []
    monkeypatch.setattr(store._db, "pool", lambda: opened.append("own"))
    with _connect(pg) as conn, conn.transaction():
        assert store.claim_in(conn, uuid.uuid4().hex) is True
    assert opened == []


def test_a_failover_loses_nothing_committed_and_needs_no_restart() -> None:
    from support.servers import PostgresPair, ServerError

    try:
        pair = PostgresPair()
    except ServerError as exc:
        pytest.fail(str(exc))
    try:
        try:
            pair.start()
        except ServerError as exc:
            pytest.fail(str(exc))
        inbox = PostgresInbox(pair.url, connect_timeout=2, statement_timeout=5)
        lease = Lease(pair.url, key="failover")
        assert lease.acquire() == 1
        stored = [f"before-{n}" for n in range(20)]
        for key in stored:
            assert inbox.put(key, b"{}")
        pair.stop_primary()
        with pytest.raises(StoreError):
            inbox.put("during", b"{}")  # the primary is gone, the standby does not take writes
        pair.promote()
        assert inbox.put("after", b"{}")  # the same object finds the promoted standby
        assert {inbox.get(key) is not None for key in stored} == {True}, "a committed row is lost"
        assert lease.status().token == 1
        inbox.close()
        lease.close()
    finally:
        pair.close()



def test_a_call_the_client_ends_first_is_cancelled_on_the_server(
    deployment: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server would wait far longer than the client: only the client's cancel request
    # (through the pooler too) can stop the statement before the lock is released.
    monkeypatch.setattr("sports_posts._stores.postgres.SERVER_SHARE", 40.0)
    key = f"lease:{uuid.uuid4().hex}"
    assert Lease(deployment, key=key, ttl=0.1).acquire() == 1
    with _connect(deployment) as blocker, blocker.transaction():
        blocker.execute("SELECT 1 FROM sports_posts_leases WHERE key = %s FOR UPDATE", (key,))
        late = Lease(deployment, key=key, ttl=60, statement_timeout=0.5)
        with pytest.raises(CoordinationError) as caught:
            late.acquire()
        assert "within the call's bound of 0.5 s" in str(caught.value)
    assert _after_the_lock(deployment, key) == (None, 1), "the cancel request stopped the statement on the server"


def _after_the_lock(url: str, key: str) -> tuple[Any, int]:
    """The lease row once every statement queued for its lock before this one is done (the
    lock queue is first come, first served): (live holder, token)."""
    with _connect(url) as conn, conn.transaction():
        row = conn.execute(
            "SELECT CASE WHEN expires_at > clock_timestamp() THEN holder END, token"
            " FROM sports_posts_leases WHERE key = %s FOR UPDATE", (key,)).fetchone()
    assert row is not None
    return row[0], int(row[1])
