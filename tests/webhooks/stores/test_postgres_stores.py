"""PostgresDedupeStore and PostgresInbox against a real PostgreSQL server: the dedupe protocol,
the exactly-once claim inside the caller's transaction, async twins, errors and migration."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from sports_posts import ParameterError, SportsPostsError
from sports_posts._stores.postgres import schema_sql
from sports_posts.webhooks import (
    DedupeStore,
    PostgresDedupeStore,
    PostgresInbox,
    StoreError,
    WebhookReceiver,
    build_test_request,
    sample_payload,
)
from tests.webhooks.webhook_helpers import FakeClock

SECRET = "whsec_fleet_postgres_test"


def test_the_dedupe_protocol_claim_lease_complete_release(pg: str, clock: FakeClock) -> None:
    a = PostgresDedupeStore(pg, lease=30, ttl=3600, clock=clock)
    b = PostgresDedupeStore(pg, lease=30, ttl=3600, clock=clock)
    assert isinstance(a, DedupeStore)
    assert a.claim("k") is True
    assert b.claim("k") is False, "claimed by a"
    assert not b.is_complete("k")
    a.release("k")
    assert b.claim("k") is True, "released: the next retry is processed"
    clock.advance(31)
    assert a.claim("k") is True, "b's lease lapsed (b died)"
    b.complete("k")  # b wakes up late: done anyway, with a warning
    assert a.is_complete("k") and b.is_complete("k")
    assert a.claim("k") is False
    clock.advance(3601)
    assert not a.is_complete("k") and a.claim("k") is True, "forgotten after the ttl"


def _effects_table(conn: psycopg.Connection[Any]) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS story_effects (story text NOT NULL, pid integer)")


def test_claim_in_commits_or_rolls_back_with_the_callers_writes(pg: str) -> None:
    store = PostgresDedupeStore(pg)
    with psycopg.connect(pg, autocommit=True) as conn:
        _effects_table(conn)
        with pytest.raises(RuntimeError), conn.transaction():
            assert store.claim_in(conn, "story-1") is True
            conn.execute("INSERT INTO story_effects (story) VALUES ('story-1')")
            raise RuntimeError("the handler fails after its write")
        with conn.transaction():
            assert store.claim_in(conn, "story-1") is True, "rolled back: not done"
            conn.execute("INSERT INTO story_effects (story) VALUES ('story-1')")
        with conn.transaction():
            assert store.claim_in(conn, "story-1") is False, "committed: done once"
        assert conn.execute("SELECT count(*) FROM story_effects").fetchone() == (1,)


def _waiting_on_a_lock(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        ).fetchone()
    return bool(row and row[0])


@pytest.mark.parametrize("first_commits", [True, False])
def test_a_concurrent_claim_in_waits_for_the_first_transaction(pg: str, first_commits: bool) -> None:
    store = PostgresDedupeStore(pg)
    answers: list[bool] = []
    # ``first`` is not in autocommit mode: its statements open a transaction that stays open.
    with psycopg.connect(pg) as first, psycopg.connect(pg, autocommit=True) as second:
        assert store.claim_in(first, "story") is True

        def contender() -> None:
            with second.transaction():
                answers.append(store.claim_in(second, "story"))

        thread = threading.Thread(target=contender)
        thread.start()
        deadline = time.monotonic() + 10
        while not _waiting_on_a_lock(pg):  # the contender blocks on the first's row
            assert time.monotonic() < deadline, "the contender never waited"
            time.sleep(0.01)
        first.commit() if first_commits else first.rollback()
        thread.join(10)
    assert answers == [not first_commits]


def test_claim_in_refuses_a_connection_outside_a_transaction(pg: str) -> None:
    store = PostgresDedupeStore(pg)
    with psycopg.connect(pg, autocommit=True) as conn, pytest.raises(ParameterError, match="transaction"):
        store.claim_in(conn, "k")


def test_async_twins_run_the_same_statements(pg: str, clock: FakeClock) -> None:
    async def scenario() -> None:
        store = PostgresDedupeStore(pg, lease=30, clock=clock)
        inbox = PostgresInbox(pg, clock=clock, backoff=(5.0,))
        assert await store.aclaim("k") is True
        assert await store.aclaim("k") is False
        await store.acomplete("k")
        assert await store.ais_complete("k")
        await store.arelease("k")
        assert await store.ais_complete("k"), "release never undoes done"

        assert await inbox.aput("s", b"x", "d") is True
        [entry] = await inbox.atake_due()
        assert await inbox.amark_failed(entry, "boom") == "pending"
        assert await inbox.anext_due() == pytest.approx(clock.now + 5.0)
        clock.advance(5)
        [entry] = await inbox.atake_due()
        await inbox.amark_done(entry)
        assert (await inbox.aget("s")).state == "done"  # type: ignore[union-attr]
        assert (await inbox.acounts())["done"] == 1
        assert await inbox.adead() == [] and await inbox.arequeue("s") is False

        async with await psycopg.AsyncConnection.connect(pg, autocommit=True) as conn:
            async with conn.transaction():
                assert await store.aclaim_in(conn, "effect") is True
            async with conn.transaction():
                assert await store.aclaim_in(conn, "effect") is False
        await store.aclose()
        await inbox.aclose()

    asyncio.run(scenario())


def test_a_given_connection_is_used_and_left_open(pg: str) -> None:
    with psycopg.connect(pg, autocommit=True) as conn:
        inbox = PostgresInbox(conn)
        assert inbox.put("s", b"x")
        inbox.close()
        assert not conn.closed
        assert "127.0.0.1" in repr(inbox)
        with pytest.raises(ParameterError, match="a\\* methods|sync"):
            asyncio.run(inbox.aput("t", b"x"))


def test_the_receiver_drains_a_postgres_inbox(pg: str) -> None:
    handled: list[str] = []
    receiver = WebhookReceiver(
        SECRET, lambda event: handled.append(event.data.id),  # type: ignore[attr-defined]
        store=PostgresDedupeStore(pg), inbox=PostgresInbox(pg), start_worker=False,
    )
    payload = sample_payload(id="1790000000000000001")
    request = build_test_request(payload, SECRET)
    assert receiver.handle(request.body, request.headers).status_code == 202
    assert receiver.handle(request.body, request.headers).status_code == 200, "a retry: duplicate"
    assert receiver.run_inbox_once() == 1
    assert handled == ["1790000000000000001"]
    assert receiver.inbox is not None and receiver.inbox.counts()["done"] == 1
    receiver.close()


def test_an_entry_leased_too_often_without_an_outcome_goes_dead(pg: str, clock: FakeClock) -> None:
    inbox = PostgresInbox(pg, max_attempts=2, lease=10, clock=clock)
    inbox.put("poison", b"x")
    for _ in range(2):  # the handler kills its worker each time
        assert len(inbox.take_due()) == 1
        clock.advance(11)
    assert inbox.take_due() == []
    [dead] = inbox.dead()
    assert dead.key == "poison" and "without an outcome" in (dead.last_error or "")


def test_migrate_is_idempotent_and_the_sql_file_ships(pg: str) -> None:
    import sports_posts._stores as package

    shipped = Path(package.__file__).with_name("schema.sql")
    assert shipped.read_text() == schema_sql()
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute("DROP TABLE sports_posts_inbox, sports_posts_claims, sports_posts_effects")
    errors: list[BaseException] = []

    def first_use() -> None:  # several workers start at once: the advisory lock serialises them
        try:
            PostgresInbox(pg).put("s", b"x")
        except BaseException as exc:  # pragma: no cover - the failure is the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=first_use) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    PostgresInbox(pg, auto_migrate=False).migrate()
    assert PostgresInbox(pg).counts()["pending"] == 1


def test_without_auto_migrate_a_missing_table_is_a_store_error(pg: str) -> None:
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute("DROP TABLE sports_posts_inbox")
    with pytest.raises(StoreError) as caught:
        PostgresInbox(pg, auto_migrate=False).put("s", b"x")
    assert caught.value.engine == "postgres" and caught.value.code == "42P01"


def test_an_unreachable_server_is_a_store_error_without_the_password(
    secrets_never_leak: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from support.servers import free_port as _free_port

    password = "pw_s3cret-db-Passw0rd"
    secrets_never_leak.register(password)
    url = f"postgresql://app:{password}@127.0.0.1:{_free_port()}/db"
    store = PostgresDedupeStore(url, connect_timeout=2)
    assert password not in repr(store) and "127.0.0.1" in repr(store)
    with pytest.raises(StoreError) as caught:
        store.claim("k")
    assert password not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    receiver = WebhookReceiver(SECRET, lambda event: None, store=store, start_worker=False)
    request = build_test_request(sample_payload(), SECRET)
    assert receiver.handle(request.body, request.headers).status_code == 503
    assert password not in caplog.text and password not in repr(receiver)


def test_a_bad_target_is_a_parameter_error() -> None:
    with pytest.raises(ParameterError):
        PostgresInbox("mysql://nope")
    with pytest.raises(ParameterError):
        PostgresDedupeStore(object())  # type: ignore[arg-type]  # refused at run time, as typed
    with pytest.raises(ParameterError):
        PostgresInbox("postgresql://x/y", max_attempts=0)


def test_without_the_extra_the_class_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # what an environment without it looks like
    with pytest.raises(SportsPostsError, match=r"sports-posts\[postgres\]"):
        PostgresInbox("postgresql://x/y")
    monkeypatch.setitem(sys.modules, "redis", None)
    from sports_posts.webhooks import RedisInbox

    with pytest.raises(SportsPostsError, match=r"sports-posts\[redis\]"):
        RedisInbox("redis://x")


def test_mark_done_many_records_a_batch_and_refuses_each_entry_whose_lease_moved_on(
    pg: str, clock: FakeClock
) -> None:
    first, second = PostgresInbox(pg, lease=30, clock=clock), PostgresInbox(pg, lease=30, clock=clock)
    for i in range(4):
        first.put(f"s{i}", b"x")
    batch = first.take_due(16)
    assert len(batch) == 4
    clock.advance(31)  # the first worker stalls past its lease: the second takes two of them again
    retaken = second.take_due(2)
    assert len(retaken) == 2

    assert first.mark_done_many(batch) == 2, "only the entries still under the first's lease"
    for entry in retaken:
        row = second.get(entry.key)
        assert row is not None and (row.state, row.token) == ("processing", entry.token), \
            "a stale lease token decides nothing"
    assert second.mark_done_many(retaken) == 2
    rows = [second.get(f"s{i}") for i in range(4)]
    assert [(row.state, row.attempts, row.body) for row in rows if row] == [("done", 1, b"")] * 4
    assert second.mark_done_many(retaken) == 0, "a second record of the same batch changes nothing"
    assert second.mark_done_many([]) == 0
    assert second.counts() == {"pending": 0, "processing": 0, "done": 4, "dead": 0}


def test_amark_done_many_is_the_same_statement_on_an_async_connection(pg: str, clock: FakeClock) -> None:
    async def scenario() -> None:
        inbox = PostgresInbox(pg, lease=30, clock=clock)
        for i in range(3):
            await inbox.aput(f"a{i}", b"x")
        batch = await inbox.atake_due(16)
        clock.advance(31)
        [again] = await inbox.atake_due(1)
        assert again.key in {e.key for e in batch} and again.token != batch[0].token
        assert await inbox.amark_done_many(batch) == 2
        assert (await inbox.acounts())["processing"] == 1
        assert await inbox.amark_done_many([again]) == 1
        assert (await inbox.acounts())["done"] == 3
        await inbox.aclose()

    asyncio.run(scenario())


def test_the_inbox_worker_records_a_batchs_successes_in_one_call_and_failures_apart(pg: str) -> None:
    inbox = PostgresInbox(pg)
    calls: list[int] = []
    real = inbox.mark_done_many

    def spy(entries: Any) -> int:
        calls.append(len(entries))
        return real(entries)

    inbox.mark_done_many = spy  # type: ignore[method-assign]

    def handler(event: Any) -> None:
        if event.data.id == "fails":
            raise RuntimeError("boom")

    receiver = WebhookReceiver(SECRET, handler, inbox=inbox, start_worker=False)
    for story in ("a1", "a2", "a3", "a4", "fails"):
        request = build_test_request(sample_payload(id=story), SECRET)
        assert receiver.handle(request.body, request.headers).status == 202
    assert receiver.run_inbox_once() == 5
    assert calls == [4], "the four successes in one statement"
    assert inbox.counts() == {"pending": 1, "processing": 0, "done": 4, "dead": 0}
    receiver.close()


def test_a_slow_handler_holds_back_no_other_outcome_of_its_batch(
    pg: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sports_posts.webhooks._inbox_worker as inbox_worker

    monkeypatch.setattr(inbox_worker, "BATCH_WAIT", 0.05)
    inbox = PostgresInbox(pg)
    batches: list[int] = []
    real = inbox.mark_done_many

    def spy(entries: Any) -> int:
        batches.append(len(entries))
        return real(entries)

    inbox.mark_done_many = spy  # type: ignore[method-assign]
    release = threading.Event()

    def handler(event: Any) -> None:
        if event.data.id == "slow":
            assert release.wait(60), "the test never released the slow handler"

    receiver = WebhookReceiver(SECRET, handler, inbox=inbox, start_worker=False)
    for story in ("f1", "f2", "f3", "f4", "slow"):
        request = build_test_request(sample_payload(id=story), SECRET)
        assert receiver.handle(request.body, request.headers).status == 202
    worker = threading.Thread(target=receiver.run_inbox_once)
    worker.start()
    try:
        deadline = time.monotonic() + 30
        while inbox.counts()["done"] < 4:  # recorded while the slow handler still runs
            assert time.monotonic() < deadline, "the fast entries waited for the slow one"
            time.sleep(0.01)
        slow = inbox.get("breaking_news:slow")
        assert slow is not None and slow.state == "processing"
    finally:
        release.set()
        worker.join(60)
    assert batches == [4], "the four fast successes in one statement"
    assert inbox.counts() == {"pending": 0, "processing": 0, "done": 5, "dead": 0}
    receiver.close()
