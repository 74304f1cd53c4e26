"""No secret, in any connection-string form a driver accepts, reaches a repr, an error, a
pickle, a log record or the command line's output (issue 49, class 1)."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path
from typing import Any, Callable

import pytest

import sports_posts as sp
from sports_posts import ParameterError
from sports_posts._stores import StoreError, redact_url, store_kind
from sports_posts.polling import Lease, PostgresCheckpoint, RedisCheckpoint
from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox, RedisDedupeStore, RedisInbox

from ..cli.conftest import run

SECRET = "s3cret-pw-9f1c"
PASSPHRASE = "key-passphrase-4d2e"

# Every form a libpq connection string takes with a secret in it; port 1 refuses at once.
POSTGRES_FORMS = {
    "url": f"postgresql://app:{SECRET}@127.0.0.1:1/feeds",
    "query password": f"postgresql://app@127.0.0.1:1/feeds?password={SECRET}",
    "query sslpassword": f"postgresql://app@127.0.0.1:1/feeds?sslpassword={PASSPHRASE}&password={SECRET}",
    "keyword dsn": f"host=127.0.0.1 port=1 dbname=feeds user=app password={SECRET} sslpassword={PASSPHRASE}",
    "quoted keyword dsn": f"host=127.0.0.1 port=1 dbname=feeds user=app password='{SECRET} x\\'y'",
    "multi-host url": f"postgresql://app:{SECRET}@127.0.0.1:1,127.0.0.1:2/feeds?target_session_attrs=read-write",
}
REDIS_FORMS = {
    "url": f"redis://:{SECRET}@127.0.0.1:1/0",
    "user url": f"redis://app:{SECRET}@127.0.0.1:1/0",
    "query password": f"redis://127.0.0.1:1/0?password={SECRET}",
}

POSTGRES_STORES: dict[str, Callable[[str], Any]] = {
    "PostgresDedupeStore": lambda url: PostgresDedupeStore(url, connect_timeout=2),
    "PostgresInbox": lambda url: PostgresInbox(url, connect_timeout=2),
    "PostgresCheckpoint": lambda url: PostgresCheckpoint(url, key="k", connect_timeout=2),
    "Lease": lambda url: Lease(url, key="feed"),
    "CallBudget": lambda url: sp.CallBudget(url, per_month=10),
}
REDIS_STORES: dict[str, Callable[[str], Any]] = {
    "RedisDedupeStore": RedisDedupeStore,
    "RedisInbox": RedisInbox,
    "RedisCheckpoint": lambda url: RedisCheckpoint(url, key="k"),
    "Lease": lambda url: Lease(url, key="feed"),
    "CallBudget": lambda url: sp.CallBudget(url, per_month=10),
}

ACTIONS: dict[str, Callable[[Any], Any]] = {
    "PostgresDedupeStore": lambda store: store.claim("story"),
    "RedisDedupeStore": lambda store: store.claim("story"),
    "PostgresInbox": lambda store: store.take_due(1),
    "RedisInbox": lambda store: store.take_due(1),
    "PostgresCheckpoint": lambda store: store.load(),
    "RedisCheckpoint": lambda store: store.load(),
    "Lease": lambda store: store.acquire(),
    "CallBudget": lambda store: store.try_acquire(),
}


def assert_no_secret(text: str) -> None:
    assert SECRET not in text and PASSPHRASE not in text, text
    assert "s3cret" not in text and "passphrase-4d2e" not in text, text


def check_everywhere(make: Callable[[], Any], act: Callable[[Any], Any], caplog: pytest.LogCaptureFixture) -> None:
    """The store's repr, the error of a call on a refused port (text, repr, pickle), and every
    log record at DEBUG hold no secret."""
    caplog.set_level(logging.DEBUG)
    store = make()
    assert_no_secret(repr(store))
    with pytest.raises(StoreError) as caught:
        act(store)
    error = caught.value
    assert_no_secret(str(error))
    assert_no_secret(repr(error))
    assert_no_secret(repr(pickle.loads(pickle.dumps(error))))
    assert_no_secret(str(pickle.dumps(error)))
    assert error.__cause__ is None
    for record in caplog.records:
        assert_no_secret(record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            assert_no_secret(repr(record.exc_info[1]))
    close = getattr(store, "close", None)
    if callable(close):
        close()


@pytest.mark.parametrize("form", list(POSTGRES_FORMS))
@pytest.mark.parametrize("kind", list(POSTGRES_STORES))
def test_no_postgres_secret_in_reprs_errors_pickles_or_logs(kind: str, form: str, caplog: pytest.LogCaptureFixture) -> None:
    url = POSTGRES_FORMS[form]
    check_everywhere(lambda: POSTGRES_STORES[kind](url), ACTIONS["Lease" if kind == "Lease" else kind], caplog)


@pytest.mark.parametrize("form", list(REDIS_FORMS))
@pytest.mark.parametrize("kind", list(REDIS_STORES))
def test_no_redis_secret_in_reprs_errors_pickles_or_logs(kind: str, form: str, caplog: pytest.LogCaptureFixture) -> None:
    url = REDIS_FORMS[form]
    check_everywhere(lambda: REDIS_STORES[kind](url), ACTIONS[kind], caplog)


def test_a_keyword_dsn_shows_where_it_points_and_is_postgres() -> None:
    dsn = POSTGRES_FORMS["keyword dsn"]
    assert store_kind(dsn) == "postgres"
    assert repr(PostgresDedupeStore(dsn)).startswith("PostgresDedupeStore(")
    shown = redact_url(dsn)
    assert "password=***" in shown and "sslpassword=***" in shown and "host=127.0.0.1" in shown
    assert store_kind("./inbox.db") == "sqlite" and store_kind("file:///tmp/x.db") == "sqlite"
    assert store_kind("mysql://h/db") == ""


@pytest.mark.postgres
def test_a_keyword_dsn_is_accepted_as_psycopg_accepts_it(pg: str) -> None:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    dsn = make_conninfo("", **conninfo_to_dict(pg))
    assert "://" not in dsn
    store = PostgresDedupeStore(dsn)
    try:
        assert store.claim("keyword-dsn-story") is True
        assert store.claim("keyword-dsn-story") is False
    finally:
        store.close()


@pytest.mark.parametrize("make", [PostgresDedupeStore, RedisDedupeStore, lambda url: Lease(url, key="x")])
@pytest.mark.parametrize("url", [
    f"postgresql://app:first@127.0.0.1:1/feeds\npostgresql://app:{SECRET}@127.0.0.1:1/feeds",
    f"redis://127.0.0.1:1/0\r\nredis://:{SECRET}@127.0.0.1:1/0",
    f"host=127.0.0.1 dbname=feeds\x00password={SECRET}",
])
def test_a_url_with_a_control_character_is_refused_without_showing_it(make: Callable[[str], Any], url: str) -> None:
    with pytest.raises(ParameterError) as caught:
        make(url)
    message = str(caught.value)
    assert_no_secret(message)
    assert "control character" in message and "127.0.0.1" not in message


def test_an_oversized_url_is_refused_in_one_short_line() -> None:
    url = f"postgresql://app:{SECRET}@127.0.0.1:1/feeds?application_name=" + "a" * 100_000
    with pytest.raises(ParameterError) as caught:
        PostgresDedupeStore(url)
    assert_no_secret(str(caught.value))
    assert len(str(caught.value)) < 200 and "\n" not in str(caught.value)


def test_a_malformed_keyword_dsn_is_refused_without_echoing_it() -> None:
    with pytest.raises(ParameterError) as caught:
        PostgresDedupeStore(f"host=127.0.0.1 dbname=feeds password={SECRET} 'unterminated")
    assert_no_secret(str(caught.value))


# -- the command line ---------------------------------------------------------------------


@pytest.mark.parametrize("argv", [("inbox", "status"), ("budget", "status"), ("lease", "status", "feed")])
@pytest.mark.parametrize("form", ["keyword dsn", "query sslpassword", "quoted keyword dsn"])
def test_the_ops_commands_never_print_a_secret(argv: tuple[str, ...], form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPORTS_POSTS_STORE_URL", POSTGRES_FORMS[form])
    status, out, err = run(*argv)
    assert status == 4, err  # cannot reach the store (port 1 refuses)
    assert_no_secret(out + err)
    assert "SQLite" not in err  # a keyword DSN is PostgreSQL's, never read as a file path


def test_a_url_file_of_two_lines_is_refused_without_showing_either(tmp_path: Path) -> None:
    file = tmp_path / "store-url"
    file.write_text(f"postgresql://app:first-line-pw@127.0.0.1:1/feeds\npostgresql://app:{SECRET}@127.0.0.1:1/x\n")
    status, out, err = run("inbox", "status", "--url-file", str(file))
    assert status == 1 and out == ""
    assert_no_secret(err)
    assert "first-line-pw" not in err and "control character" in err


def test_an_oversized_url_file_is_refused_in_one_short_line(tmp_path: Path) -> None:
    file = tmp_path / "store-url"
    file.write_bytes(f"postgresql://app:{SECRET}@127.0.0.1:1/feeds?x=".encode() + b"a" * 20_000_000)
    status, out, err = run("inbox", "status", "--url-file", str(file))
    assert status == 1 and out == ""
    assert_no_secret(err)
    assert len(err) < 300 and err.count("\n") == 1 and "larger than" in err


def test_a_prefix_is_refused_where_the_store_has_none(tmp_path: Path) -> None:
    status, _, err = run("inbox", "status", "--prefix", "fleet:", POSTGRES_FORMS["url"])
    assert status == 1 and "--prefix is for a Redis inbox only" in err
