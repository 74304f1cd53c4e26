"""The operations commands (inbox, budget, lease) against the suite's real Redis and PostgreSQL
servers, and a SQLite file: what they print, and what they change."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

from sports_posts import CallBudget
from sports_posts.polling import Lease

from .conftest import run


def run_json(*argv: str) -> Any:
    status, out, err = run(*argv, "--json")
    assert status == 0, err
    return json.loads(out)


@pytest.fixture
def pg(postgres_url: str) -> Iterator[str]:
    import psycopg

    from sports_posts._stores.postgres import schema_sql

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(schema_sql())
        conn.execute("TRUNCATE sports_posts_inbox")
    yield postgres_url


@pytest.fixture(params=["postgresql", "redis", "sqlite"])
def inbox_at(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Callable[[], Any], list[str]]:
    """(URL, a maker of the inbox object on it, the extra CLI arguments)."""
    if request.param == "postgresql":
        from sports_posts.webhooks import PostgresInbox

        url = request.getfixturevalue("pg")
        return url, lambda: PostgresInbox(url, max_attempts=1), []
    if request.param == "redis":
        from sports_posts.webhooks import RedisInbox

        url = request.getfixturevalue("redis_url")
        prefix = f"test:{uuid.uuid4().hex[:8]}:"
        return url, lambda: RedisInbox(url, prefix=prefix, max_attempts=1), ["--prefix", prefix]
    from sports_posts.webhooks import SQLiteInbox

    path = str(tmp_path / "inbox.db")
    return path, lambda: SQLiteInbox(path, max_attempts=1), []


def _dead_letter(inbox: Any, key: str) -> None:
    inbox.put(key, b'{"x":1}', f"delivery-{key}")
    for entry in inbox.take_due(10):
        if entry.key == key:
            inbox.mark_failed(entry, "RuntimeError: storage down", permanent=True)


def test_inbox_status_dead_requeue_and_purge(inbox_at: tuple[str, Callable[[], Any], list[str]]) -> None:
    url, make, extra = inbox_at
    inbox = make()
    _dead_letter(inbox, "broken")
    inbox.put("waiting", b'{"x":0}', "delivery-w")
    assert run_json("inbox", "status", url, *extra) == {"pending": 1, "processing": 0, "done": 0, "dead": 1}
    dead = run_json("inbox", "dead", url, *extra)
    assert [(d["key"], d["attempts"], d["last_error"]) for d in dead] == [("broken", 1, "RuntimeError: storage down")]
    status, out, _ = run("inbox", "status", url, *extra)
    assert status == 0 and "dead        1" in out

    status, out, _ = run("inbox", "requeue", url, "broken", "waiting", *extra, "--json")
    assert status == 3, "a key that was not dead fails the command: nothing there (exit 3)"
    assert json.loads(out) == {"requeued": ["broken"], "not_dead": ["waiting"]}
    assert run_json("inbox", "status", url, *extra)["pending"] == 2

    for entry in inbox.take_due(10):  # the requeued one fails for good again; the other is done
        if entry.key == "broken":
            inbox.mark_failed(entry, "RuntimeError: storage down", permanent=True)
        else:
            inbox.mark_done(entry)
    status, _, err = run("inbox", "purge-dead", url, *extra)
    assert status == 5 and "--force" in err and run_json("inbox", "status", url, *extra)["dead"] == 1
    assert run_json("inbox", "purge-dead", url, "--force", *extra) == {"purged": 1}
    assert run_json("inbox", "status", url, *extra)["dead"] == 0 and run_json("inbox", "dead", url, *extra) == []
    inbox.close()


def test_a_missing_sqlite_inbox_is_an_error_not_an_empty_one(tmp_path: Path) -> None:
    status, _, err = run("inbox", "status", str(tmp_path / "nope.db"))
    assert status == 3 and "no SQLite inbox" in err and not (tmp_path / "nope.db").exists()


@pytest.mark.parametrize("store", ["postgres_url", "redis_url"])
def test_budget_status_shows_use_and_draws_nothing(store: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue(store)
    key = f"test:budget:{uuid.uuid4().hex[:8]}"
    budget = CallBudget(url, per_minute=50, per_month=100, key=key)
    budget.acquire()
    budget.acquire()
    budget.close()
    args = ("budget", "status", url, "--key", key, "--per-minute", "50", "--per-month", "100")
    first, second = run_json(*args), run_json(*args)
    assert first == second, "status draws nothing"
    assert first["month_used"] == 2 and first["month_left"] == 98 and first["per_month"] == 100
    assert first["minute_used"] in (0, 2)  # 0 when the store's minute turned since the draws
    assert len(first["month"]) == 7 and first["month"][4] == "-"
    # without the bounds on the command line: the ones the fleet's last draw stored
    stored = run_json("budget", "status", url, "--key", key)
    assert stored["stored"] is True and stored["per_month"] == 100 and stored["per_minute"] == 50
    assert stored["month_left"] == 98
    status, out, _ = run(*args)
    assert status == 0 and "used 2, left 98 of 100" in out
    status, out, _ = run("budget", "status", url, "--key", key)
    assert status == 0 and "used 2, left 98 of 100" in out and "stored by the last draw" in out
    # a budget with one bound stores the other as none
    CallBudget(url, per_month=7, key=key).acquire()
    stored = run_json("budget", "status", url, "--key", key)
    assert stored["per_month"] == 7 and stored["per_minute"] is None and stored["month_left"] == 4


@pytest.mark.parametrize("store", ["postgres_url", "redis_url"])
def test_a_seeded_budget_says_its_bounds_are_not_stored_yet(store: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue(store)
    key = f"test:budget:{uuid.uuid4().hex[:8]}"
    CallBudget(url, per_month=100, key=key).seed(5)
    stored = run_json("budget", "status", url, "--key", key)
    assert stored["stored"] is False and stored["per_month"] is None and stored["month_used"] == 5
    status, out, _ = run("budget", "status", url, "--key", key)
    assert status == 0 and "not stored yet" in out


@pytest.mark.parametrize("store", ["postgres_url", "redis_url"])
def test_lease_status_and_a_forced_release_that_fences_the_old_holder(
    store: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue(store)
    key = f"test:lease:{uuid.uuid4().hex[:8]}"
    status, _, err = run("lease", "status", url, key)
    assert status == 3 and "no lease" in err, "a key no poller has taken is not a healthy free lease"
    stuck = Lease(url, key=key, ttl=600)
    token = stuck.acquire()
    assert token is not None
    shown = run_json("lease", "status", url, key)
    assert shown["holder"] == stuck.holder and shown["token"] == token and 0 < shown["expires_in"] <= 600

    status, _, err = run("lease", "release", url, key)
    assert status == 5 and "--force" in err and f"token {token}" in err
    assert run_json("lease", "status", url, key)["holder"] == stuck.holder, "nothing released without --force"

    released = run_json("lease", "release", url, key, "--force")
    assert released["released"] is True and released["holder"] == stuck.holder
    assert run_json("lease", "status", url, key)["holder"] is None
    assert stuck.renew() is False, "the old holder learns at its next renewal"
    successor = Lease(url, key=key)
    assert successor.acquire() == token + 1, "the fencing counter was kept"
    status, out, _ = run("lease", "status", url, key)
    assert status == 0 and f"token       {token + 1}" in out and successor.holder in out
    stuck.close()
    successor.close()


@pytest.fixture
def empty_database(postgres_url: str) -> Iterator[str]:
    """A database of the session's server with no table at all (a mistyped database name)."""
    import psycopg

    name = f"empty_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield postgres_url.rsplit("/", 1)[0] + "/" + name


def _tables(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return [row[0] for row in rows]


@pytest.mark.parametrize("argv", [("inbox", "status"), ("inbox", "dead"), ("inbox", "requeue", "--all"),
                                  ("budget", "status"), ("lease", "status", "KEY"), ("lease", "release", "KEY")])
def test_on_an_empty_postgres_every_command_says_so_and_creates_nothing(empty_database: str, argv: tuple[str, ...]) -> None:
    command, rest = argv[:2], argv[2:]
    status, out, err = run(*command, empty_database, *rest)
    assert status == 3 and "no " in err and "nothing was created" in err, err
    assert _tables(empty_database) == []


def test_on_redis_a_mistyped_prefix_or_key_says_so_and_creates_nothing(redis_client: Any, redis_url: str) -> None:
    for argv in (("inbox", "status", redis_url, "--prefix", "nope:"), ("budget", "status", redis_url, "--key", "nope"),
                 ("lease", "status", redis_url, "nope")):
        status, _, err = run(*argv)
        assert status == 3 and "nothing was created" in err, (argv, err)
    assert redis_client.dbsize() == 0


def test_an_empty_url_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = run("inbox", "status", "")  # a usage error, as for every empty path argument
    assert status == 2 and out == ""
    assert err.splitlines()[-1] == "sports-posts inbox status: error: argument URL: an empty path: name a file"
    assert list(tmp_path.iterdir()) == []


def test_the_url_comes_from_the_environment_or_a_file(pg: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    status, _, err = run("inbox", "status")
    assert status == 1 and "SPORTS_POSTS_STORE_URL" in err and "--url-file" in err
    monkeypatch.setenv("SPORTS_POSTS_STORE_URL", pg)
    assert run_json("inbox", "status")["dead"] == 0
    monkeypatch.delenv("SPORTS_POSTS_STORE_URL")
    secret = tmp_path / "store-url"
    secret.write_text(pg + "\n")
    assert run_json("inbox", "status", "--url-file", str(secret))["dead"] == 0
    status, _, err = run("lease", "status", "--url-file", str(tmp_path / "missing"), "some-key")
    assert status == 1 and "--url-file" in err


def test_counts_in_text_output_agree_with_their_number(tmp_path: Path) -> None:
    from sports_posts.webhooks import SQLiteInbox

    path = str(tmp_path / "inbox.db")
    inbox = SQLiteInbox(path, max_attempts=1)
    _dead_letter(inbox, "one")
    status, out, err = run("inbox", "dead", path)
    assert status == 0 and "sports-posts: 1 dead letter\n" in err
    status, out, _ = run("inbox", "purge-dead", path, "--force")
    assert status == 0 and out == "purged 1 dead letter\n"
    _dead_letter(inbox, "two")
    _dead_letter(inbox, "three")
    assert run("inbox", "purge-dead", path, "--force")[1] == "purged 2 dead letters\n"
    inbox.close()


def test_each_outcome_has_its_own_exit_status(pg: str, tmp_path: Path) -> None:
    """0 ok, 3 nothing there, 4 cannot reach, 5 refused (docs/cli.md, "Exit status"): a
    script tells "no lease under that key" from "the store is down" from "not allowed"."""
    import psycopg

    key = f"test:budget:{uuid.uuid4().hex[:8]}"
    CallBudget(pg, per_month=10, key=key).acquire()
    assert run("budget", "status", pg, "--key", key)[0] == 0
    assert run("budget", "status", pg, "--key", key + ":mistyped")[0] == 3
    assert run("budget", "status", "postgresql://test@127.0.0.1:1/nothing", "--key", key)[0] == 4
    role = f"ro_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")  # may connect, may not read the SDK's tables
    denied = pg.replace("://test@", f"://{role}@", 1)
    assert "://test@" in pg and denied != pg
    status, _, err = run("budget", "status", denied, "--key", key)
    assert status == 5 and "permission denied" in err, err
    assert run("inbox", "purge-dead", str(tmp_path / "inbox.db"))[0] == 3  # no inbox: nothing there


@pytest.fixture(params=["postgresql", "redis", "sqlite"])
def dedupe_at(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Callable[[], Any], str, list[str]]:
    """(a maker of a dedupe store, the URL and the options that name the same store)."""
    if request.param == "postgresql":
        from sports_posts.webhooks import PostgresDedupeStore

        url = request.getfixturevalue("pg")
        return lambda: PostgresDedupeStore(url), url, []
    if request.param == "redis":
        from sports_posts.webhooks import RedisDedupeStore

        url = request.getfixturevalue("redis_url")
        prefix = f"test:{uuid.uuid4().hex[:8]}:"
        return lambda: RedisDedupeStore(url, prefix=prefix), url, ["--prefix", prefix]
    from sports_posts.webhooks import SQLiteDedupeStore

    path = str(tmp_path / "dedupe.db")
    return lambda: SQLiteDedupeStore(path), path, []


def test_a_stuck_claim_is_shown_and_released(dedupe_at: tuple[Callable[[], Any], str, list[str]]) -> None:
    """The 409 loop's cause, as an operator meets it: a worker claimed a story and died.
    `claim status` shows the claim and when its lease ends; `claim release --force` frees it
    and the next delivery is processed; a done story is never released."""
    make, url, options = dedupe_at
    key = f"breaking_news:{uuid.uuid4().hex[:10]}"

    def claim(command: str, *extra: str) -> tuple[str, ...]:
        return ("claim", command, url, key, *options, *extra)

    worker = make()
    assert worker.claim(key) is True  # ... and the worker dies here
    shown = run_json(*claim("status"))
    assert shown["state"] == "claimed" and 0 < shown["expires_in"] <= 300
    other = make()
    assert other.claim(key) is False  # a redelivery: 409 in_progress
    status, _, err = run(*claim("release"))
    assert status == 5 and "--force" in err
    released = run_json(*claim("release", "--force"))
    assert released["released"] is True
    assert run(*claim("status"))[0] == 3  # nothing there now
    assert other.claim(key) is True  # the next delivery is processed
    other.complete(key)
    done = run_json(*claim("status"))
    assert done["state"] == "done" and done["expires_in"] > 3600
    status, _, err = run(*claim("release", "--force"))
    assert status == 3 and "done" in err
    assert make().claim(key) is False  # still a duplicate


def test_inbox_active_lists_what_workers_hold(inbox_at: tuple[str, Callable[[], Any], list[str]]) -> None:
    """Work in progress an operator can see (Sidekiq's Busy tab): each entry a worker holds,
    with the worker (host:pid), its attempts and deliveries, and the lease's time left."""
    import os
    import socket

    url, make, extra = inbox_at
    inbox = make()
    for n in range(3):
        inbox.put(f"active-{n}", b'{"x":1}', f"delivery-{n}")
    taken = inbox.take_due(2)  # a worker holds two; the third waits
    assert len(taken) == 2
    active = run_json("inbox", "active", url, *extra)
    assert sorted(entry["key"] for entry in active) == sorted(entry.key for entry in taken)
    for entry in active:
        assert entry["holder"].startswith(f"{socket.gethostname()}:{os.getpid()}")
        assert entry["attempts"] == 0 and entry["deliveries"] == 1
        assert 0 < entry["lease_left"] <= 300
    inbox.mark_done(taken[0])
    assert [entry["key"] for entry in run_json("inbox", "active", url, *extra)] == [taken[1].key]
    status, out, err = run("inbox", "active", url, *extra)
    assert status == 0 and taken[1].key in out and "1 entry in progress" in err


@pytest.mark.parametrize("engine", ["postgresql", "redis", "sqlite"])
def test_an_inbox_reports_its_latency_and_one_name_per_queue(engine: str, request: pytest.FixtureRequest,
                                                            tmp_path: Path) -> None:
    """The queue's latency (the oldest due entry's wait for a worker, Sidekiq's figure) and its
    name in metrics, the same from every process: a fleet's figures are then one series per
    queue, not one per process. The store's clock is injected: time passes without a sleep."""
    from sports_posts.webhooks import PostgresInbox, RedisInbox, SQLiteInbox

    now = [1_800_000_000.0]

    def clock() -> float:
        return now[0]

    def make() -> Any:
        if engine == "postgresql":
            return PostgresInbox(request.getfixturevalue("pg"), clock=clock)
        if engine == "redis":
            return RedisInbox(request.getfixturevalue("redis_url"), prefix=prefix, clock=clock)
        return SQLiteInbox(str(tmp_path / "inbox.db"), clock=clock)

    prefix = f"test:{uuid.uuid4().hex[:8]}:"
    first, second = make(), make()
    assert first.queue == second.queue and first.queue.startswith({"postgresql": "postgres", "redis": "redis",
                                                                   "sqlite": "sqlite"}[engine])
    assert first.latency() == 0.0  # nothing waits
    first.put("waits-1", b"{}", "d1")
    now[0] += 42.5
    assert abs(second.latency() - 42.5) < 1.0
    for entry in second.take_due(10):
        second.mark_done(entry)
    assert first.latency() == 0.0  # taken and done: nothing waits
