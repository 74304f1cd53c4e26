"""Behind a proxy: both clients go through the one the environment names (HTTPS_PROXY,
as httpx reads it, NO_PROXY included), the sync client's per-request deadline still holds
there, and a sandbox on this machine is always reached directly."""

from __future__ import annotations

import pytest

import sports_posts as sp

from .conftest import call
from .server import Connection, ScriptedServer, head


def _refuse(conn: Connection) -> None:
    conn.send(head("403 Forbidden", {"Content-Length": "0"}))


@pytest.fixture
def clean_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
                 "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_both_clients_go_through_the_environments_proxy(kind: str, clean_proxy_env: pytest.MonkeyPatch) -> None:
    with ScriptedServer(_refuse) as proxy:
        clean_proxy_env.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")
        with pytest.raises(sp.APIConnectionError) as caught:
            call(kind, "https://api.example.test/v1", lambda c: c.account.information())
    assert [h.split(b"\r\n")[0] for h in proxy.heads] == [b"CONNECT api.example.test:443 HTTP/1.1"]
    assert "sk_live" not in str(caught.value)  # the tunnel never carried the key, nor does the error


def test_the_sync_deadline_holds_through_a_trickling_proxy(clean_proxy_env: pytest.MonkeyPatch) -> None:
    def trickle(conn: Connection) -> None:
        conn.trickle(b"HTTP/1.1 200 Connection established\r\n\r\n", 0.05)

    # Each byte comes well within the read timeout, so only the request's deadline can end
    # this with a timeout; without it the tunnel opens after 2 s and then fails otherwise.
    with ScriptedServer(trickle) as proxy:
        clean_proxy_env.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")
        with pytest.raises(sp.APITimeoutError):
            call("sync", "https://api.example.test/v1", lambda c: c.account.information(), timeout=0.5)


def test_a_sandbox_on_this_machine_is_reached_directly_whatever_the_proxy(
    kind: str, clean_proxy_env: pytest.MonkeyPatch
) -> None:
    # A corporate HTTP_PROXY without NO_PROXY must not break the local demo.
    def answer(conn: Connection) -> None:
        body = b'{"pagination": {"page": 1, "limit": 20, "has_next": false, "has_prev": false}, "items": []}'
        conn.send(head(headers={"Content-Type": "application/json", "Content-Length": str(len(body))}) + body)

    with ScriptedServer(_refuse) as proxy, ScriptedServer(answer) as service:
        for name in ("HTTP_PROXY", "ALL_PROXY"):
            clean_proxy_env.setenv(name, f"http://127.0.0.1:{proxy.port}")
        page = call(kind, service.base_url, lambda c: c.posts.list())
    assert page.items == [] and proxy.heads == [] and len(service.heads) == 1


def _page(conn: Connection) -> None:
    body = b'{"pagination": {"page": 1, "limit": 20, "has_next": false, "has_prev": false}, "items": []}'
    conn.send(head(headers={"Content-Type": "application/json", "Content-Length": str(len(body))}) + body)


@pytest.mark.parametrize("no_proxy", ["", "127.0.0.1", "localhost,127.0.0.1:9,127.0.0.1"])
def test_default_http_client_routes_by_the_environment_as_the_library_does(
    no_proxy: str, clean_proxy_env: pytest.MonkeyPatch
) -> None:
    """``default_http_client()`` trusts the environment: its proxy carries a plain-HTTP
    request (forwarded, the whole URL in the request line), unless NO_PROXY names the host."""
    with ScriptedServer(_page) as proxy, ScriptedServer(_page) as service:
        clean_proxy_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        clean_proxy_env.setenv("NO_PROXY", no_proxy)
        with sp.default_http_client() as http:
            call("sync", service.base_url, lambda c: c.posts.list(), http_client=http)
    through = [h.split(b"\r\n")[0] for h in proxy.heads]
    if no_proxy:
        assert through == [] and len(service.heads) == 1
    else:
        assert through == [f"GET {service.base_url}/posts HTTP/1.1".encode()] and service.heads == []


def test_a_proxy_given_to_default_http_client_keeps_the_sync_deadline(clean_proxy_env: pytest.MonkeyPatch) -> None:
    def trickle(conn: Connection) -> None:
        conn.trickle(b"HTTP/1.1 200 Connection established\r\n\r\n", 0.05)

    with ScriptedServer(trickle) as proxy, sp.default_http_client(proxy=f"http://127.0.0.1:{proxy.port}") as http, \
            pytest.raises(sp.APITimeoutError):
        call("sync", "https://api.example.test/v1", lambda c: c.account.information(), timeout=0.5, http_client=http)
    assert [h.split(b"\r\n")[0] for h in proxy.heads] == [b"CONNECT api.example.test:443 HTTP/1.1"]


def test_the_environments_proxies_read_as_mounts(clean_proxy_env: pytest.MonkeyPatch) -> None:
    import httpx

    from sports_posts._http.deadline import environment_proxies

    clean_proxy_env.setenv("HTTPS_PROXY", "proxy.corp:3128")
    clean_proxy_env.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    clean_proxy_env.setenv("NO_PROXY", "example.com, .internal,*.corp,10.0.0.1,::1,localhost,192.168.0.0/16,,")
    assert environment_proxies(httpx) == {
        "https://": "http://proxy.corp:3128",
        "all://": "socks5://127.0.0.1:1080",
        "all://*example.com": None,  # it and its subdomains
        "all://*.internal": None,  # subdomains only
        "all://*.corp": None,
        "all://10.0.0.1": None,
        "all://[::1]": None,
        "all://localhost": None,
        # a subnet is no host pattern: left out, as curl and Go leave it
    }
    clean_proxy_env.setenv("NO_PROXY", "a.test,*")
    assert environment_proxies(httpx) == {}
