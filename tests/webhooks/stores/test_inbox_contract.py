"""One contract, three engines: SQLite, PostgreSQL and Redis inboxes behave alike, so the
receiver takes any of them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

from sports_posts import ParameterError
from sports_posts.webhooks import Inbox, PostgresInbox, RedisInbox, SQLiteInbox
from tests.webhooks.webhook_helpers import FakeClock

ENGINES = ["sqlite", "postgres", "redis"]

MakeInbox = Callable[..., Any]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make(engine: str, request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock) -> Iterator[MakeInbox]:
    made: list[Any] = []

    def factory(**options: Any) -> Any:
        options.setdefault("clock", clock)
        if engine == "sqlite":
            inbox: Any = SQLiteInbox(tmp_path / "inbox.sqlite3", **options)
        elif engine == "postgres":
            inbox = PostgresInbox(request.getfixturevalue("pg"), **options)
        else:
            request.getfixturevalue("redis_client")  # flushed
            inbox = RedisInbox(request.getfixturevalue("redis_url"), **options)
        made.append(inbox)
        return inbox

    yield factory
    for inbox in made:
        inbox.close()


def lease_for(engine: str) -> float:
    """SQLite and PostgreSQL read the injected clock; Redis measures idle time itself, so its
    tests use a lease under a millisecond (XAUTOCLAIM's 0 ms idle: lapsed at once)."""
    return 1e-4 if engine == "redis" else 30.0


def test_each_engine_satisfies_the_inbox_protocol(make: MakeInbox) -> None:
    assert isinstance(make(), Inbox)


def test_a_story_is_stored_once_then_leased_to_one_worker_then_done(make: MakeInbox) -> None:
    inbox = make(lease=300.0)
    assert inbox.put("story-1", b'{"a":1}', "dlv-1") is True
    assert inbox.put("story-1", b'{"a":1}', "dlv-2") is False, "a retry of a stored story"
    assert inbox.get("story-1").state == "pending"
    assert inbox.counts() == {"pending": 1, "processing": 0, "done": 0, "dead": 0}

    [entry] = inbox.take_due()
    assert (entry.key, entry.body, entry.delivery_id, entry.attempts) == ("story-1", b'{"a":1}', "dlv-1", 0)
    assert entry.token
    assert inbox.take_due() == [], "leased: nobody else takes it"
    assert inbox.counts()["processing"] == 1

    inbox.mark_done(entry)
    done = inbox.get("story-1")
    assert (done.state, done.attempts, done.body) == ("done", 1, b"")
    assert inbox.counts() == {"pending": 0, "processing": 0, "done": 1, "dead": 0}
    assert inbox.put("story-1", b"{}") is False, "remembered while retained"
    assert inbox.take_due() == []


def test_failures_back_off_then_go_dead_then_requeue_gives_fresh_attempts(make: MakeInbox, clock: FakeClock) -> None:
    inbox = make(max_attempts=3, backoff=(10.0, 20.0))
    inbox.put("s", b"x")
    [entry] = inbox.take_due()
    assert inbox.mark_failed(entry, "boom 1") == "pending"
    assert inbox.get("s").last_error == "boom 1"
    assert inbox.take_due() == [], "not before its backoff"
    due = inbox.next_due()
    assert due is not None and due == pytest.approx(clock.now + 10.0, abs=0.01)

    clock.advance(10.0)
    [entry] = inbox.take_due()
    assert entry.attempts == 1
    assert inbox.mark_failed(entry, "boom 2") == "pending"
    clock.advance(19.0)
    assert inbox.take_due() == [], "the second backoff is 20 s"
    clock.advance(1.0)
    [entry] = inbox.take_due()
    assert inbox.mark_failed(entry, "boom 3") == "dead"

    [dead] = inbox.dead()
    assert (dead.key, dead.attempts, dead.last_error, dead.body) == ("s", 3, "boom 3", b"x")
    assert inbox.counts() == {"pending": 0, "processing": 0, "done": 0, "dead": 1}
    assert inbox.next_due() is None
    clock.advance(10_000)
    assert inbox.take_due() == [], "dead stays dead"

    assert inbox.requeue("s") is True
    assert inbox.requeue("s") is False, "no longer dead"
    assert inbox.dead() == []
    [entry] = inbox.take_due()
    assert entry.attempts == 0
    inbox.mark_done(entry)
    assert inbox.counts()["done"] == 1


def test_a_permanent_failure_is_dead_at_once(make: MakeInbox) -> None:
    inbox = make()
    inbox.put("s", b"x")
    [entry] = inbox.take_due()
    assert inbox.mark_failed(entry, "no longer parses", permanent=True) == "dead"
    assert [e.key for e in inbox.dead()] == ["s"]


def test_a_dead_workers_lease_lapses_and_its_late_answer_is_fenced(
    engine: str, make: MakeInbox, clock: FakeClock
) -> None:
    lease = lease_for(engine)
    first, second = make(lease=lease), make(lease=lease)
    first.put("s", b"x")
    [stale] = first.take_due()
    clock.advance(lease + 0.001)
    [fresh] = second.take_due()
    assert fresh.key == "s" and fresh.token != stale.token

    first.mark_done(stale)  # the first worker wakes up late: its lease is gone
    assert second.get("s").state == "processing", "a lapsed lease decides nothing"
    second.mark_done(fresh)
    assert second.get("s").state == "done"


def test_limit_bounds_a_take_and_workers_share_the_queue(make: MakeInbox) -> None:
    a, b = make(), make()
    for i in range(5):
        a.put(f"s{i}", b"x")
    first, rest = a.take_due(limit=3), b.take_due(limit=16)
    assert len(first) == 3 and len(rest) == 2
    assert {e.key for e in first} | {e.key for e in rest} == {f"s{i}" for i in range(5)}


@pytest.mark.parametrize("engine", ["postgres", "redis"])  # the fleet stores; SQLite's is sqlite3's
@pytest.mark.parametrize("bad", [None, "", "a\x00b", "\ud800", 7])
def test_a_bad_key_is_a_parameter_error(engine: str, make: MakeInbox, bad: Any) -> None:
    inbox = make()
    with pytest.raises(ParameterError):
        inbox.put(bad, b"x")
    with pytest.raises(ParameterError):
        inbox.put("k", "not bytes")


def test_an_entry_whose_worker_dies_every_time_goes_dead_on_every_engine(
    engine: str, make: MakeInbox, clock: FakeClock
) -> None:
    lease = lease_for(engine)
    inbox = make(max_attempts=2, lease=lease)
    inbox.put("poison", b"x")
    for _ in range(2):  # the handler kills its worker each time: no mark_done, no mark_failed
        assert [e.key for e in inbox.take_due()] == ["poison"]
        clock.advance(lease + 0.001)
    assert inbox.take_due() == [], "dead, not leased a third time"
    [dead] = inbox.dead()
    assert dead.state == "dead" and dead.attempts == 0, "no run ended: attempts counts none"
    assert dead.last_error == "leased 2 times without an outcome (workers died)"
    assert inbox.counts()["dead"] == 1
    assert inbox.requeue("poison") is True
    assert [e.key for e in inbox.take_due()] == ["poison"], "requeue gives fresh leases too"


def test_a_failed_entrys_last_error_is_its_handlers(make: MakeInbox) -> None:
    inbox = make(max_attempts=1)
    inbox.put("s", b"x")
    [entry] = inbox.take_due()
    assert inbox.mark_failed(entry, "ValueError: bad story") == "dead"
    [dead] = inbox.dead()
    assert (dead.attempts, dead.last_error) == (1, "ValueError: bad story")


def test_purge_dead_deletes_only_dead_entries_and_counts_them(make: MakeInbox) -> None:
    inbox = make(max_attempts=1)
    for key in ("a", "b", "c"):
        inbox.put(key, b"x")
    entries = {e.key: e for e in inbox.take_due()}
    inbox.mark_failed(entries["a"], "boom", permanent=True)
    inbox.mark_failed(entries["b"], "boom", permanent=True)
    inbox.mark_done(entries["c"])
    assert inbox.purge_dead() == 2
    assert inbox.dead() == [] and inbox.get("a") is None and inbox.get("b") is None
    assert inbox.counts() == {"pending": 0, "processing": 0, "done": 1, "dead": 0}
    assert inbox.purge_dead() == 0
    assert inbox.put("a", b"x") is True, "a purged key can be stored again"
