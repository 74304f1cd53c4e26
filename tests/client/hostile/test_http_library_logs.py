"""The key out of the HTTP libraries' own log records: a server that echoes it in the reason
phrase and in headers, with every logger at DEBUG, leaves it in no record of httpx, httpcore,
httpx2 or httpcore2; records of other loggers are left as they are."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

import sports_posts as sp
from sports_posts import _redact
from sports_posts.testing import RetryWaits
from tests.client.hostile.server import Connection, ScriptedServer, head
from tests.stacks import STACKS, module

API_KEY = "sk_live_LOGECHO_9c2d7e1f0b"


def echo(conn: Connection) -> None:
    """A 503 whose reason phrase and headers (values and a name) carry the key."""
    key = conn.header("authorization").split()[-1]
    body = json.dumps({"ok": False, "error_code": "X", "error_message": "down"}).encode()
    conn.send(head(f"503 Unavailable {key}", {
        "Content-Type": "application/json",
        "Content-Length": str(len(body)),
        "Set-Cookie": f"session={key}; Path=/",
        "X-Echo": key,
        f"X-{key}": "name",
    }) + body)


class Everything(logging.Handler):
    """Every record that reaches the root logger, formatted as a handler would write it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.name, self.format(record)))


@pytest.fixture
def every_logger_at_debug() -> Iterator[Everything]:
    handler = Everything()
    root = logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in ("", *_redact.HTTP_LOGGERS)}
    root.addHandler(handler)
    for name in levels:
        logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def call(kind: str, stack: str, base_url: str) -> Any:
    lib = module(stack)
    waits = RetryWaits()  # the retry's wait, recorded instead of slept

    if kind == "sync":
        with sp.SportsPosts(api_key=API_KEY, base_url=base_url, max_retries=1, http_client=lib.Client(),
                            sleep=waits.sleep) as c:
            try:
                return c.account.information()
            except sp.APIStatusError as exc:
                return exc

    async def main() -> Any:
        async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=base_url, max_retries=1,
                                       http_client=lib.AsyncClient(), sleep=waits.async_sleep) as c:
            try:
                return await c.account.information()
            except sp.APIStatusError as exc:
                return exc

    return asyncio.run(main())


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_key_echoed_in_the_reason_phrase_and_headers_is_in_no_http_library_record(
    every_logger_at_debug: Everything, kind: str, stack: str
) -> None:
    core = "httpcore" if stack == "httpx" else "httpcore2"
    with ScriptedServer(echo) as server:
        error = call(kind, stack, server.base_url)
    assert isinstance(error, sp.InternalServerError)
    names = {name for name, _ in every_logger_at_debug.lines}
    assert stack in names and f"{core}.http11" in names and f"{core}.connection" in names  # they did log
    library = [line for name, line in every_logger_at_debug.lines if name.split(".")[0] in (stack, core)]
    assert any("Unavailable <redacted>" in line for line in library)  # the INFO line and the DEBUG trace
    for _, line in every_logger_at_debug.lines:
        assert API_KEY not in line and API_KEY.lower() not in line, line


def test_other_loggers_records_are_left_as_they_are(every_logger_at_debug: Everything) -> None:
    # no test-secret prefix: the suite's secret watch would take the application's line for a leak
    key = "live_APPLICATION_OWN_0123456789"
    client = sp.SportsPosts(api_key=key, base_url="https://api.test/v1")
    try:
        logging.getLogger("myapp").info("a record of the application's own: %s", key)
        logging.getLogger("httpx").info("the library's: %s", key)
    finally:
        client.close()
    assert ("myapp", f"myapp INFO a record of the application's own: {key}") in every_logger_at_debug.lines
    assert ("httpx", "httpx INFO the library's: <redacted>") in every_logger_at_debug.lines


def test_a_key_is_redacted_for_as_long_as_a_client_or_a_copy_holds_it() -> None:
    key = "sk_live_LIFETIME_0a1b2c3d4e"
    client = sp.SportsPosts(api_key=key, base_url="https://api.test/v1")
    copy = client.with_options(max_retries=0)
    assert key in _redact._secrets
    client.close()
    del client
    gc.collect()
    assert key in _redact._secrets  # the copy still uses it
    del copy
    gc.collect()
    assert key not in _redact._secrets


def test_a_client_collected_while_the_registry_is_busy_never_blocks() -> None:
    """The collector may finalize a client inside ``watch_key`` on the same thread (the lock
    held): forgetting its key must not wait for that lock."""
    import threading

    class Holder:
        pass

    key = "sk_live_COLLECTED_5f6e7d8c9b"
    holder: Any = Holder()
    _redact.watch_key(holder, key)
    assert key in _redact._secrets

    def collect_with_the_lock_held() -> None:
        nonlocal holder
        with _redact._lock:
            holder = None  # the finalizer runs here, on this thread
            gc.collect()

    thread = threading.Thread(target=collect_with_the_lock_held, daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "forgetting a key waited for the lock its own thread holds"
    other = Holder()
    _redact.watch_key(other, "sk_live_ANOTHER_1a2b3c4d5e")  # the next client counts it out
    assert key not in _redact._secrets
    del other
    gc.collect()
