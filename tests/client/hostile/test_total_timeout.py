"""``timeout`` bounds a whole attempt (connect, headers, body), not each read: a server
that trickles its answer ends in APITimeoutError soon after the timeout.

These tests wait for real (the server's trickle is the attack); each asserts an upper
bound with a wide margin, never a speed."""

from __future__ import annotations

import time
from typing import Any

import pytest

import sports_posts as sp

from .conftest import call
from .server import Connection, ScriptedServer, head

MARGIN = 4.0  # seconds: generous, on a loaded two-core machine
HEAD = head(headers={"Content-Type": "application/json", "Content-Length": "1000"})


def _elapsed_until_timeout(kind: str, script: object, timeout: float) -> float:
    with ScriptedServer(script) as server:  # type: ignore[arg-type]
        started = time.monotonic()
        with pytest.raises(sp.APITimeoutError) as info:
            call(kind, server.base_url, lambda c: c.account.information(), timeout=timeout)
        elapsed = time.monotonic() - started
    assert "timed out" in str(info.value)
    return elapsed


@pytest.mark.parametrize("interval", [1.0, 0.2], ids=["slower-than-timeout", "faster-than-timeout"])
def test_headers_trickled_a_byte_at_a_time_end_within_the_timeout(kind: str, interval: float) -> None:
    def script(conn: Connection) -> None:
        conn.trickle(HEAD, interval)

    # 0.2 s a byte never trips a single read's timeout: only the whole-attempt deadline does
    assert _elapsed_until_timeout(kind, script, timeout=1.0) < 1.0 + MARGIN


@pytest.mark.parametrize("interval", [1.0, 0.2], ids=["slower-than-timeout", "faster-than-timeout"])
def test_a_body_trickled_a_byte_at_a_time_ends_within_the_timeout(kind: str, interval: float) -> None:
    def script(conn: Connection) -> None:
        conn.send(HEAD)
        conn.trickle(b"{" + b" " * 998 + b"}", interval)

    assert _elapsed_until_timeout(kind, script, timeout=1.0) < 1.0 + MARGIN


@pytest.mark.parametrize("native", [True, False], ids=["asyncio.timeout", "anyio.fail_after"])
def test_an_async_call_that_timed_out_gives_its_connection_back(monkeypatch: pytest.MonkeyPatch, native: bool) -> None:
    """The deadline cancels the read mid-body; the pool's only connection must come back,
    or the next call would wait for a slot until its own timeout. Both timeout scopes."""
    import asyncio
    import json

    import httpx

    from sports_posts import _base_client as _client
    from tests.client.bodies import INFO

    if native and not _client._NATIVE_TIMEOUT:
        pytest.skip("asyncio.timeout is Python 3.11+; older ones take the anyio path, tested beside")
    monkeypatch.setattr(_client, "_NATIVE_TIMEOUT", native)
    body = json.dumps(INFO).encode()
    answered = head(headers={"Content-Type": "application/json", "Content-Length": str(len(body))}) + body
    calls: list[int] = []

    def script(conn: Connection) -> None:
        calls.append(1)
        if conn.number == 0:  # the first connection made, whichever script runs first
            conn.send(HEAD)
            conn.trickle(b"{" + b" " * 998 + b"}", 1.0)
        else:
            conn.send(answered)

    async def main(base_url: str) -> Any:
        pool = httpx.AsyncClient(limits=httpx.Limits(max_connections=1))
        async with sp.AsyncSportsPosts(api_key="sk_test_" + "k" * 40, base_url=base_url, max_retries=0, timeout=0.5,
                                       http_client=pool) as client:
            with pytest.raises(sp.APITimeoutError):
                await client.account.information()
            # A bound far above a loaded machine's delays: only a connection never given
            # back makes this call wait for a pool slot until it times out.
            return await client.with_options(timeout=30).account.information()

    with ScriptedServer(script) as server:
        info = asyncio.run(main(server.base_url))
    assert info.company.name == "Acme" and len(calls) == 2
