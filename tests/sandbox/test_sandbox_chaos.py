"""Chaos settings: injected 429/5xx, proxy pages, malformed and truncated bodies, dropped connections."""

from __future__ import annotations

import email.utils
import json
import socket

import httpx
import pytest

from sports_posts.sandbox import ChaosSettings, Sandbox

from .conftest import client_for


@pytest.fixture
def chaotic(fresh: Sandbox) -> Sandbox:
    return fresh


def raw_get(sb: Sandbox, path: str = "/v1/posts") -> bytes:
    """Send one request on a raw socket and read until the server closes or answers."""
    with socket.create_connection(("127.0.0.1", sb.port), timeout=5) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {sb.api_key}\r\n"
                  "Connection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk


def test_drop_closes_the_connection_without_any_answer(chaotic: Sandbox) -> None:
    chaotic.set_chaos(ChaosSettings(drop_rate=1.0))
    assert raw_get(chaotic) == b""
    with client_for(chaotic) as c, pytest.raises(httpx.RemoteProtocolError):
        c.get("/posts")
    chaotic.set_chaos(None)
    assert raw_get(chaotic).startswith(b"HTTP/1.1 200")


def test_429_carries_retry_after_and_the_error_body(chaotic: Sandbox) -> None:
    chaotic.set_chaos(ChaosSettings(rate_429=1.0, retry_after=3))
    with client_for(chaotic) as c:
        r = c.get("/posts")
    assert r.status_code == 429 and r.headers["Retry-After"] == "3"
    assert r.json()["error_code"] == "RATE_LIMITED"


def test_500_is_json_internal_error(chaotic: Sandbox) -> None:
    chaotic.set_chaos(ChaosSettings(rate_500=1.0))
    with client_for(chaotic) as c:
        r = c.get("/account/x-ids")
    assert r.status_code == 500 and r.json() == {"ok": False, "error_code": "INTERNAL_ERROR",
                                                 "error_message": r.json()["error_message"]}


@pytest.mark.parametrize(("field", "status"), [("rate_502", 502), ("rate_504", 504)])
def test_gateway_errors_look_like_a_proxy(chaotic: Sandbox, field: str, status: int) -> None:
    chaotic.set_chaos(ChaosSettings(**{field: 1.0}))  # type: ignore[arg-type]
    with client_for(chaotic) as c:
        r = c.get("/posts")
    assert r.status_code == status and r.headers["content-type"].startswith("text/html")
    assert "<html>" in r.text and "nginx" in r.text
    with pytest.raises(json.JSONDecodeError):
        json.loads(r.text)


def test_503_has_retry_after(chaotic: Sandbox) -> None:
    chaotic.set_chaos(ChaosSettings(rate_503=1.0))
    with client_for(chaotic) as c:
        r = c.get("/posts")
    assert r.status_code == 503 and r.headers["Retry-After"] == "1" and r.json()["ok"] is False


def test_malformed_html_and_truncated_bodies_are_200s(chaotic: Sandbox) -> None:
    with client_for(chaotic) as c:
        chaotic.set_chaos(ChaosSettings(malformed_rate=1.0))
        malformed = c.get("/posts")
        assert malformed.status_code == 200 and "pagination" not in malformed.json()
        chaotic.set_chaos(ChaosSettings(html_rate=1.0))
        html = c.get("/posts")
        assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
        chaotic.set_chaos(ChaosSettings(truncated_rate=1.0))
        truncated = c.get("/posts")
        assert truncated.status_code == 200 and truncated.text.startswith('{"pagination"')
        with pytest.raises(json.JSONDecodeError):
            truncated.json()


def test_chaos_failures_do_not_count_usage(chaotic: Sandbox) -> None:
    chaotic.set_chaos(ChaosSettings(rate_500=1.0))
    with client_for(chaotic) as c:
        for _ in range(3):
            c.get("/posts")
    assert chaotic.calls() == 0


def test_per_key_chaos_leaves_other_keys_alone(chaotic: Sandbox) -> None:
    flaky = chaotic.add_key(chaos=ChaosSettings(rate_502=1.0))
    with client_for(chaotic, flaky) as bad, client_for(chaotic) as good:
        assert bad.get("/posts").status_code == 502
        assert good.get("/posts").status_code == 200
    chaotic.set_chaos(None, key=flaky)
    with client_for(chaotic, flaky) as bad:
        assert bad.get("/posts").status_code == 200


def test_openapi_and_admin_routes_are_exempt(chaotic: Sandbox) -> None:
    chaotic.set_chaos(ChaosSettings(rate_500=1.0))
    assert httpx.get(chaotic.base_url + "/openapi.json").status_code == 200
    assert httpx.get(chaotic.url + "/_sandbox/state").status_code == 200


def test_rates_mix_deterministically_for_a_seed() -> None:
    runs = []
    for _ in range(2):
        settings = ChaosSettings(rate_500=0.3, rate_429=0.2)
        with Sandbox(seed=21, clock="manual", posts=100, chaos=settings) as sb, client_for(sb) as c:
            runs.append([c.get("/account/information").status_code for _ in range(40)])
    assert runs[0] == runs[1]
    assert {200, 429, 500} == set(runs[0])


def test_slow_answers_trip_a_client_timeout(chaotic: Sandbox) -> None:
    chaotic.set_chaos(ChaosSettings(slow_rate=1.0, slow_seconds=3.0))
    with client_for(chaotic) as c, pytest.raises(httpx.ReadTimeout):
        c.get("/posts", timeout=0.05)


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError):
        ChaosSettings(rate_500=1.5)
    with pytest.raises(ValueError):
        ChaosSettings(rate_500=0.6, rate_502=0.6)
    assert not ChaosSettings().enabled and ChaosSettings(slow_rate=0.1).enabled


def test_every_answer_is_dated_once_by_the_sandbox_clock(chaotic: Sandbox) -> None:
    """The service's ``Date`` is its own time: on a manual clock, the sandbox's, not this
    machine's (the poller estimates clock skew from it); chaos answers are dated too."""
    chaotic.advance(3600.5)
    expected = email.utils.format_datetime(chaotic.now(), usegmt=True)
    with client_for(chaotic) as c:
        for path in ("/posts", "/account/information", "/no-such-route"):
            assert c.get(path).headers.get_list("date") == [expected]
        chaotic.set_chaos(ChaosSettings(rate_429=1.0))
        limited = c.get("/posts")
        assert limited.status_code == 429 and limited.headers.get_list("date") == [expected]
        chaotic.set_chaos(None)
        chaotic.advance(1)  # the value is formatted once per second: a new second, a new Date
        later = email.utils.format_datetime(chaotic.now(), usegmt=True)
        assert later != expected and c.get("/posts").headers.get_list("date") == [later]
    chaotic.set_chaos(None)


def test_chaos_given_to_an_existing_key_takes_effect(chaotic: Sandbox) -> None:
    # The middleware skips the per-key lookup while no key has chaos of its own: a key that gains
    # chaos later must still get it, and lose it again.
    chaotic.set_chaos(None)
    later = chaotic.add_key()
    with client_for(chaotic, later) as c:
        assert c.get("/posts").status_code == 200
        chaotic.set_chaos(ChaosSettings(rate_503=1.0), key=later)
        assert c.get("/posts").status_code == 503
        chaotic.set_chaos(None, key=later)
        assert c.get("/posts").status_code == 200
