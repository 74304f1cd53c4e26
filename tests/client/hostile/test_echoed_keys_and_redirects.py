"""Hostile servers and careless callers: the key echoed where a scan of the body would not look.

A scripted loopback server echoes the key outside the body (the
status line's reason phrase, every header, a ``Set-Cookie``, a body straddling the 64 KiB
cut of an error, a ``Location``): no exception, repr, kept answer, SDK log line or later
request holds it. An injected client's ``auth=`` never replaces the key, and what no retry
can mend (a redirect loop, a TLS failure, a URL the library cannot send) ends at the first
attempt, with the requests the server saw equal to ``client.calls``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from typing import Any, Callable, Optional

import httpx
import pytest

import sports_posts as sp
from sports_posts._decoders import MAX_ERROR_BODY_BYTES
from sports_posts.testing import RetryWaits
from tests.client.bodies import INFO
from tests.stacks import STACKS, loopback_tls, module

from .conftest import API_KEY
from .server import Connection, ScriptedServer, head
from .test_secrets import _everything

INFO_BODY = json.dumps(INFO).encode()


def run(
    kind: str, base_url: str, fn: Callable[[Any], Any], *, waits: Optional[RetryWaits] = None, **options: Any
) -> tuple[Any, int]:
    """``fn(client)`` on a fresh client (awaited if async): its result (or the SDK error it
    raised) and ``client.calls``. Its waits between retries are recorded in ``waits``, never slept."""
    options.setdefault("max_retries", 2)
    waits = waits if waits is not None else RetryWaits()
    options.setdefault("sleep", waits.sleep if kind == "sync" else waits.async_sleep)

    if kind == "sync":
        with sp.SportsPosts(api_key=API_KEY, base_url=base_url, **options) as client:
            try:
                return fn(client), client.calls
            except sp.SportsPostsError as exc:
                return exc, client.calls

    async def main() -> tuple[Any, int]:
        async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=base_url, **options) as client:
            try:
                return await fn(client), client.calls
            except sp.SportsPostsError as exc:
                return exc, client.calls

    return asyncio.run(main())


def pool(kind: str, stack: str = "httpx", **options: Any) -> Any:
    lib = module(stack)
    options.setdefault("verify", loopback_tls())
    return lib.Client(**options) if kind == "sync" else lib.AsyncClient(**options)


# ---------------------------------------------------------------------------------------
# The key echoed in every place a server can put text


def _echo_everywhere(conn: Connection) -> None:
    """A 503 whose reason phrase, every header (Set-Cookie and Location among them) and body
    carry the key; a request that already carries a cookie gets the service's answer."""
    key = conn.header("authorization").split()[-1]
    if conn.header("cookie"):
        conn.send(head("200 OK", {"Content-Type": "application/json", "Content-Length": str(len(INFO_BODY))}) + INFO_BODY)
        return
    body = json.dumps({"ok": False, "error_code": "X", "error_message": f"down {key}"}).encode()
    conn.send(head(f"503 Unavailable {key}", {
        "Content-Type": "application/json",
        "Content-Length": str(len(body)),
        "Set-Cookie": f"session={key}; Path=/",
        "Location": f"https://elsewhere.example/v1?key={key}",
        "X-Echo": key,
        f"X-{key}": "name",
        "WWW-Authenticate": f'Bearer realm="{key}"',
    }) + body)


def test_a_key_echoed_in_the_reason_phrase_and_every_header_is_in_no_error_or_log_line(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sports_posts")
    with ScriptedServer(_echo_everywhere) as server:
        error, calls = run(kind, server.base_url, lambda c: c.account.information(), max_retries=1)
    assert isinstance(error, sp.InternalServerError)
    assert calls == 2 and len(server.heads) == 2
    text = _everything(error) + repr(error.response) + str(error.response.reason_phrase)
    assert API_KEY.lower() not in text.lower()
    assert error.response.reason_phrase == "Unavailable <redacted>"
    assert error.response.headers["location"] == "https://elsewhere.example/v1?key=<redacted>"
    assert "x-<redacted>" in error.response.headers
    messages = [r.getMessage() for r in caplog.records]
    assert any("retrying" in m for m in messages)
    assert all(API_KEY not in m for m in messages)
    # the SDK's own pool kept no cookie: the retry carried none
    assert all(b"cookie" not in h.lower() for h in server.heads)


@pytest.mark.parametrize("stack", STACKS)
def test_a_callers_cookie_jar_may_send_an_echoed_cookie_back_but_no_sdk_log_or_error_shows_it(
    kind: str, stack: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sports_posts")
    with ScriptedServer(_echo_everywhere) as server:
        answer, calls = run(kind, server.base_url, lambda c: c.with_raw_response.account.information(),
                            max_retries=1, http_client=pool(kind, stack))
    assert isinstance(answer, sp.RawResponse), answer
    assert calls == 2
    assert b"cookie: session=" in server.heads[1].lower(), "the caller's own jar kept it: their choice"
    assert API_KEY not in _everything(answer)
    assert all(API_KEY not in r.getMessage() for r in caplog.records)


def test_a_key_straddling_the_cut_of_an_error_body_is_redacted_whole(kind: str) -> None:
    def straddle(conn: Connection) -> None:
        key = conn.header("authorization").split()[-1].encode()
        start = MAX_ERROR_BODY_BYTES - len(key) // 2  # half the key before the cut, half after
        body = b"." * start + key + b"." * 1000
        conn.send(head("500 Internal Server Error", {"Content-Type": "text/plain", "Content-Length": str(len(body))})
                  + body)

    with ScriptedServer(straddle) as server:
        error, _ = run(kind, server.base_url, lambda c: c.account.information(), max_retries=0)
    assert isinstance(error, sp.InternalServerError) and isinstance(error.body, str)  # typed object: narrowed
    assert len(error.body) == MAX_ERROR_BODY_BYTES, "still cut at its bound"
    kept = error.body + error.response.content.decode()
    assert API_KEY[:4] not in kept, "no part of the key is left"
    assert "<redacted>" in error.body


def test_a_redirect_to_a_url_with_the_key_is_kept_redacted_and_not_followed(kind: str) -> None:
    def moved(conn: Connection) -> None:
        key = conn.header("authorization").split()[-1]
        conn.send(head("302 Found", {"Location": f"/v1/elsewhere?k={key}", "Content-Length": "0"}))

    with ScriptedServer(moved) as server:
        error, calls = run(kind, server.base_url, lambda c: c.account.information())
    assert isinstance(error, sp.APIStatusError) and error.status_code == 302
    assert calls == 1 and len(server.heads) == 1
    assert error.response.headers["location"] == "/v1/elsewhere?k=<redacted>"
    assert API_KEY not in _everything(error)


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("target", ["/v1/elsewhere?k={key}", "http://127.0.0.1:9/{key}/v1", "/v1/{key}"])
def test_a_callers_client_never_follows_a_redirect_to_a_url_with_the_key(
    kind: str, stack: str, target: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sports_posts")
    caplog.set_level(logging.INFO, logger="httpx")  # its line of each request (httpcore's DEBUG: see security.md)

    def moved(conn: Connection) -> None:
        key = conn.header("authorization").split()[-1]
        conn.send(head("302 Found", {"Location": target.format(key=key), "Content-Length": "0"}))

    with ScriptedServer(moved) as server:
        error, calls = run(kind, server.base_url, lambda c: c.account.information(),
                           http_client=pool(kind, stack, follow_redirects=True))
    assert isinstance(error, sp.APIConnectionError) and "not retried" in str(error), error
    assert len(server.heads) == 1 == calls, "the hop was never sent, and nothing retried"
    assert API_KEY not in _everything(error)
    assert all(API_KEY not in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("stack", STACKS)
def test_a_callers_client_still_follows_an_ordinary_redirect_and_calls_counts_it(kind: str, stack: str) -> None:
    def moved_once(conn: Connection) -> None:
        if b"/v1/account/information " in conn.head:
            conn.send(head("307 Temporary Redirect", {"Location": "/v1/moved/information", "Content-Length": "0"}))
        else:
            _answer_info(conn)

    with ScriptedServer(moved_once) as server:
        answer, calls = run(kind, server.base_url, lambda c: c.account.information(),
                            http_client=pool(kind, stack, follow_redirects=True))
    assert not isinstance(answer, Exception), answer
    assert len(server.heads) == 2 == calls
    assert b"authorization: bearer " + API_KEY.lower().encode() in server.heads[1].lower(), "same origin: kept"


# ---------------------------------------------------------------------------------------
# The caller's client never replaces the key


class _OtherCredentials(httpx.Auth):
    def auth_flow(self, request: httpx.Request) -> Any:
        request.headers["Authorization"] = "Basic b3RoZXI6Y3JlZGVudGlhbHM="
        yield request


def _answer_info(conn: Connection) -> None:
    conn.send(head("200 OK", {"Content-Type": "application/json", "Content-Length": str(len(INFO_BODY))}) + INFO_BODY)


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("auth", ["basic", "flow"])
def test_an_injected_clients_auth_never_replaces_the_key(kind: str, stack: str, auth: str) -> None:
    lib = module(stack)
    given: Any = ("someone", "other-credentials") if auth == "basic" else _OtherCredentials()
    if auth == "flow" and stack != "httpx":
        given = type("Other", (lib.Auth,), {"auth_flow": _OtherCredentials.auth_flow})()
    with ScriptedServer(_answer_info) as server:
        answer, calls = run(kind, server.base_url, lambda c: c.account.information(),
                            http_client=pool(kind, stack, auth=given))
    assert not isinstance(answer, Exception), answer
    assert calls == 1
    assert [Connection(None, h, threading.Event()).header("authorization") for h in server.heads] == [  # type: ignore[arg-type]
        f"Bearer {API_KEY}"
    ]


# ---------------------------------------------------------------------------------------
# Only what can recover is retried


def _redirect_to(location: str) -> Callable[[Connection], None]:
    def script(conn: Connection) -> None:
        conn.send(head("302 Found", {"Location": location, "Content-Length": "0"}))

    return script


@pytest.mark.parametrize("stack", STACKS)
def test_a_redirect_loop_ends_at_once_and_calls_counts_every_hop(kind: str, stack: str, retry_waits: RetryWaits) -> None:
    with ScriptedServer(_redirect_to("/v1/account/information")) as server:
        error, calls = run(kind, server.base_url, lambda c: c.account.information(), waits=retry_waits, max_retries=2,
                           http_client=pool(kind, stack, follow_redirects=True, max_redirects=3))
    assert isinstance(error, sp.APIConnectionError), error
    assert "not retried" in str(error)
    assert len(server.heads) == 4 == calls, "the first request and three redirects; no retry"
    assert retry_waits.waits == []


@pytest.mark.parametrize("stack", STACKS)
def test_a_redirect_to_an_unsupported_url_ends_at_once(kind: str, stack: str, retry_waits: RetryWaits) -> None:
    with ScriptedServer(_redirect_to("ftp://127.0.0.1/v1/account/information")) as server:
        error, calls = run(kind, server.base_url, lambda c: c.account.information(), waits=retry_waits, max_retries=2,
                           http_client=pool(kind, stack, follow_redirects=True))
    assert isinstance(error, sp.APIConnectionError), error
    assert len(server.heads) == 1 == calls
    assert retry_waits.waits == []


class _NotTLS:
    """A loopback server that answers a TLS handshake with plain HTTP: the client's TLS
    fails (wrong version), as it would against a certificate or protocol it refuses."""

    def __init__(self) -> None:
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def __enter__(self) -> _NotTLS:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)
        self._listener.close()

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:
                continue
            with sock:
                self.connections += 1
                sock.settimeout(5)
                try:
                    sock.recv(65536)
                    sock.sendall(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass


@pytest.mark.parametrize("stack", STACKS)
def test_a_tls_failure_ends_at_once(kind: str, stack: str, retry_waits: RetryWaits) -> None:
    with _NotTLS() as server:
        error, calls = run(kind, server.base_url, lambda c: c.account.information(), waits=retry_waits, max_retries=2,
                           http_client=pool(kind, stack))
    assert isinstance(error, sp.APIConnectionError) and not isinstance(error, sp.APITimeoutError), error
    assert "TLS" in str(error)
    assert server.connections == 1 == calls
    assert retry_waits.waits == []


def test_a_connection_cut_before_the_answer_is_still_retried(kind: str, retry_waits: RetryWaits) -> None:
    def hang_up(conn: Connection) -> None:
        conn.sock.close()

    with ScriptedServer(hang_up) as server:
        error, calls = run(kind, server.base_url, lambda c: c.account.information(), waits=retry_waits, max_retries=2)
    assert isinstance(error, sp.APIConnectionError) and "not retried" not in str(error)
    assert len(server.heads) == 3 == calls and len(retry_waits.waits) == 2
