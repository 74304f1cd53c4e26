"""max_response_bytes: a huge body or a gzip bomb ends in ResponseTooLargeError with
memory near the bound, never the inflated size; error bodies are cut, not refused."""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zlib
from collections.abc import Iterator
from typing import Any, Callable

import pytest

import sports_posts as sp
from sports_posts._config import DEFAULT_MAX_RESPONSE_BYTES
from sports_posts._decoders import MAX_ERROR_BODY_BYTES
from tests.client.bodies import INFO

from .conftest import call
from .server import Connection, ScriptedServer, gzip_of_zeros, head

MiB = 1024 * 1024


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """1 MiB of gzip that inflates to 1 GiB of zeros."""
    data = gzip_of_zeros(1024 * MiB)
    assert len(data) < 1.1 * MiB
    return data


def test_the_bomb_builder_makes_valid_gzip() -> None:
    assert gzip.decompress(gzip_of_zeros(4 * MiB)) == bytes(4 * MiB)


def _peak(fn: Callable[[], Any]) -> tuple[BaseException, int]:
    """The error ``fn`` raised and the peak of memory traced while it ran, the second time:
    the first call loads what the SDK imports on first use, which a test run on several
    workers may not have loaded yet and which is no part of the body's cost."""
    try:
        fn()
    except sp.SportsPostsError:
        pass
    tracemalloc.start()
    try:
        fn()
    except sp.SportsPostsError as exc:
        error: BaseException = exc
    else:  # pragma: no cover - the assertion below reports it
        raise AssertionError("no error was raised")
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return error, peak


def _zeros(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    chunk = b"0" * size
    for _ in range(total // size):
        yield chunk


def test_a_50_mib_chunked_body_stops_at_the_bound_with_memory_near_it(kind: str) -> None:
    def script(conn: Connection) -> None:
        conn.send(head(headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"}))
        conn.send_chunked(_zeros(50 * MiB))

    with ScriptedServer(script) as server:
        error, peak = _peak(lambda: call(kind, server.base_url, lambda c: c.account.information()))
    assert isinstance(error, sp.ResponseTooLargeError) and isinstance(error, sp.APIResponseValidationError)
    assert error.limit == DEFAULT_MAX_RESPONSE_BYTES
    assert "max_response_bytes" in str(error) and "with_options" in str(error)
    assert peak < 2 * DEFAULT_MAX_RESPONSE_BYTES, f"peak {peak / MiB:.1f} MiB"


def test_a_declared_length_over_the_bound_is_refused_before_the_body_is_read(kind: str) -> None:
    def script(conn: Connection) -> None:
        conn.send(head(headers={"Content-Length": str(50 * MiB)}))
        for chunk in _zeros(50 * MiB):
            conn.send(chunk)

    with ScriptedServer(script) as server:
        error, peak = _peak(lambda: call(kind, server.base_url, lambda c: c.account.information()))
    assert isinstance(error, sp.ResponseTooLargeError)
    assert peak < MiB, "nothing of the body was read"


def test_a_gzip_bomb_is_inflated_only_up_to_the_bound(kind: str, bomb: bytes) -> None:
    # Built before the measurement: the server's copy is no part of what the client holds.
    answer = head(headers={"Content-Encoding": "gzip", "Content-Length": str(len(bomb))}) + bomb

    def script(conn: Connection) -> None:
        conn.send(answer)

    with ScriptedServer(script) as server:
        error, peak = _peak(lambda: call(kind, server.base_url, lambda c: c.account.information()))
        assert b"gzip" in server.heads[0].lower(), "the client asks for gzip"
    assert isinstance(error, sp.ResponseTooLargeError)
    assert peak < 2 * DEFAULT_MAX_RESPONSE_BYTES, f"peak {peak / MiB:.1f} MiB, not the inflated GiB"


def test_the_bound_is_set_per_client_and_per_copy(kind: str, bomb: bytes) -> None:
    # Built before the measurement: the server's copy is no part of what the client holds.
    answer = head(headers={"Content-Encoding": "gzip", "Content-Length": str(len(bomb))}) + bomb

    def script(conn: Connection) -> None:
        conn.send(answer)

    with ScriptedServer(script) as server:
        error, peak = _peak(
            lambda: call(kind, server.base_url, lambda c: c.with_options(max_response_bytes=MiB).account.information())
        )
    assert isinstance(error, sp.ResponseTooLargeError) and error.limit == MiB
    assert peak < 2 * MiB


def test_an_error_body_is_cut_at_its_bound_and_keeps_its_status_class(kind: str) -> None:
    def script(conn: Connection) -> None:
        conn.send(head("502 Bad Gateway", {"Content-Type": "text/html", "Transfer-Encoding": "chunked"}))
        conn.send_chunked(_zeros(50 * MiB))

    with ScriptedServer(script) as server, pytest.raises(sp.InternalServerError) as info:
        call(kind, server.base_url, lambda c: c.account.information())
    assert info.value.status_code == 502
    assert isinstance(info.value.body, str) and len(info.value.body) == MAX_ERROR_BODY_BYTES


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),  # the zlib wrapper, as RFC 9110 says
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # the raw stream some servers send
    ],
)
def test_compressed_answers_under_the_bound_are_decoded(
    kind: str, encoding: str, compress: Callable[[bytes], bytes]
) -> None:
    body = compress(json.dumps(INFO).encode())

    def script(conn: Connection) -> None:
        conn.send(head(headers={"Content-Encoding": encoding, "Content-Length": str(len(body))}) + body)

    with ScriptedServer(script) as server:
        info = call(kind, server.base_url, lambda c: c.account.information())
    assert info.usage.current_calls == 3


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        ({"Content-Encoding": "br"}, b"\x00\x01"),
        ({"Content-Encoding": "gzip"}, b"this is not gzip at all"),
    ],
)
def test_an_encoding_the_client_did_not_ask_for_or_a_corrupt_one_is_a_typed_error(
    kind: str, headers: dict[str, str], body: bytes
) -> None:
    def script(conn: Connection) -> None:
        conn.send(head(headers={**headers, "Content-Length": str(len(body))}) + body)

    with ScriptedServer(script) as server, pytest.raises(sp.APIResponseValidationError):
        call(kind, server.base_url, lambda c: c.account.information())


def test_a_body_cut_at_the_bound_gives_its_connection_back(kind: str) -> None:
    """Reading stops at the bound with an error; the connection still goes back, so a pool
    of one serves the next call (else it waits for a slot until its timeout)."""
    import asyncio

    import httpx

    body = json.dumps(INFO).encode()
    answered = head(headers={"Content-Type": "application/json", "Content-Length": str(len(body))}) + body
    seen: list[int] = []

    def script(conn: Connection) -> None:
        seen.append(1)
        if len(seen) == 1:
            conn.send(head(headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"}))
            conn.send_chunked(_zeros(8 * MiB))
        else:
            conn.send(answered)

    options: dict[str, Any] = {"api_key": "k" * 40, "max_retries": 0, "timeout": 5.0, "max_response_bytes": MiB}
    limits = httpx.Limits(max_connections=1)
    with ScriptedServer(script) as server:
        if kind == "sync":
            with sp.SportsPosts(base_url=server.base_url, http_client=httpx.Client(limits=limits), **options) as client:
                with pytest.raises(sp.ResponseTooLargeError):
                    client.account.information()
                info = client.account.information()
        else:

            async def main() -> Any:
                pool = httpx.AsyncClient(limits=limits)
                async with sp.AsyncSportsPosts(base_url=server.base_url, http_client=pool, **options) as client:
                    with pytest.raises(sp.ResponseTooLargeError):
                        await client.account.information()
                    return await client.account.information()

            info = asyncio.run(main())
    assert info.company.name == "Acme" and len(seen) == 2
