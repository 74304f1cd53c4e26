"""The certificate store of the SDK's own pools: made once per HTTP library and setting
(loading a CA bundle is the costly part of making a client), still verifying
every certificate, and still following ``SSL_CERT_FILE`` as the library does."""

from __future__ import annotations

import asyncio
import http.server
import json
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sports_posts as sp
from sports_posts import _http
from tests.serving import serving
from tests.stacks import ENV_VAR, STACKS, module

from .bodies import INFO
from .conftest import API_KEY


def _context(client: Any) -> ssl.SSLContext:
    """The SSLContext a sync client's own pool connects with (or that of an async one's pool)."""
    pool: Any = client._pool() if isinstance(client, sp.SportsPosts) else client
    context = pool._transport._pool._ssl_context
    assert isinstance(context, ssl.SSLContext)
    return context


@pytest.fixture
def fresh_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """No context made yet, and the environment names no bundle."""
    monkeypatch.setattr(_http, "_SSL_CONTEXTS", {})
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with ``cert.pem`` (self-signed for 127.0.0.1, its own CA) and ``key.pem``."""
    where = tmp_path_factory.mktemp("tls")
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-keyout", str(where / "key.pem"), "-out", str(where / "cert.pem"),
         "-addext", "subjectAltName=IP:127.0.0.1", "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,digitalSignature,keyEncipherment"],
        capture_output=True, text=True, timeout=60,
    )
    assert made.returncode == 0, made.stderr
    return where


class _Info(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps(INFO).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def https_url(tls: Path) -> Iterator[str]:
    """The base URL of a loopback HTTPS service whose certificate only ``tls`` vouches for."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Info)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls / "cert.pem", tls / "key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with serving(server) as port:
        yield f"https://127.0.0.1:{port}/v1"


@pytest.mark.parametrize("stack", STACKS)
def test_every_own_pool_shares_one_verifying_store(
    stack: str, fresh_store: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, stack)
    sync = [sp.SportsPosts(api_key=API_KEY, base_url=f"https://{host}/v1") for host in ("api.test", "other.test")]
    aclient = sp.AsyncSportsPosts(api_key=API_KEY, base_url="https://api.test/v1")

    async def async_contexts() -> list[int]:  # the async client makes a pool per event loop
        try:
            return [id(_context(await aclient._pool()))]
        finally:
            await aclient.aclose()

    contexts = {id(_context(client)) for client in sync} | set(asyncio.run(async_contexts()))
    contexts |= set(asyncio.run(async_contexts()))  # a second loop's pool: the same store
    assert len(contexts) == 1
    context = _context(sync[0])
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    for client in sync:
        client.close()


@pytest.mark.parametrize("stack", STACKS)
def test_a_bundle_named_by_ssl_cert_file_gets_a_store_of_its_own(
    stack: str, fresh_store: None, tls: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, stack)
    default = _context(sp.SportsPosts(api_key=API_KEY, base_url="https://api.test/v1"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tls / "cert.pem"))
    named = _context(sp.SportsPosts(api_key=API_KEY, base_url="https://api.test/v1"))
    assert named is not default
    assert named.cert_store_stats()["x509_ca"] == 1  # the one certificate of that file
    # a sandbox on loopback is reached without the environment's settings, as before
    local = _context(sp.SportsPosts(api_key=API_KEY, base_url="http://127.0.0.1:9/v1"))
    assert local is not named
    monkeypatch.delenv("SSL_CERT_FILE")
    assert _context(sp.SportsPosts(api_key=API_KEY, base_url="https://api.test/v1")) is default


def test_clients_made_at_once_on_threads_load_the_bundle_once(
    fresh_store: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = module("httpx")
    made: list[ssl.SSLContext] = []
    real = lib.create_ssl_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        context: ssl.SSLContext = real(*args, **kwargs)
        made.append(context)
        return context

    monkeypatch.setattr(lib, "create_ssl_context", counted)
    monkeypatch.setenv(ENV_VAR, "httpx")
    start = threading.Barrier(8)
    contexts: list[ssl.SSLContext] = []

    def make() -> None:
        start.wait(timeout=30)
        contexts.append(_context(sp.SportsPosts(api_key=API_KEY, base_url="https://api.test/v1")))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(contexts) == 8 and len(made) == 1
    assert all(context is made[0] for context in contexts)


@pytest.mark.parametrize("stack", STACKS)
def test_the_shared_store_still_refuses_a_certificate_it_does_not_trust(
    stack: str, fresh_store: None, https_url: str, tls: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, stack)
    for _ in range(2):  # the store made by the first client, then the same store again
        with sp.SportsPosts(api_key=API_KEY, base_url=https_url, max_retries=0) as client, \
                pytest.raises(sp.APIConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
            client.account.information()
    # the service itself answers a client that trusts its certificate
    trusting = module(stack).Client(verify=ssl.create_default_context(cafile=str(tls / "cert.pem")))
    with sp.SportsPosts(api_key=API_KEY, base_url=https_url, http_client=trusting, max_retries=0) as client:
        assert client.account.information().company.name == "Acme"
    trusting.close()


@pytest.mark.anyio
@pytest.mark.parametrize("stack", STACKS)
async def test_the_async_client_verifies_with_the_same_store(
    stack: str, fresh_store: None, https_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, stack)
    async with sp.AsyncSportsPosts(api_key=API_KEY, base_url=https_url, max_retries=0) as client:
        with pytest.raises(sp.APIConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.account.information()
        assert _context(await client._pool()) is _context(sp.SportsPosts(api_key=API_KEY, base_url=https_url))
