"""A server that echoes the Authorization header back, in its body and its headers: the
key is redacted before anything is kept, so no error, attribute, kept answer or log
record holds it (the suite's secret watch checks every log record and error message)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

import sports_posts as sp
from tests.client.bodies import INFO

from .conftest import API_KEY, call
from .server import Connection, ScriptedServer, head


def echo(status: str, body: Any) -> Any:
    """A script answering ``status`` with the request's Authorization in a header, in a
    header's name, and wherever ``body`` says ``{auth}``."""

    def script(conn: Connection) -> None:
        auth = conn.header("authorization")
        data = json.dumps(body).replace("{auth}", auth).encode() if not isinstance(body, bytes) else body
        conn.send(
            head(status, {
                "Content-Type": "application/json",
                "Content-Length": str(len(data)),
                "X-Echo": auth,
                f"X-Key-{auth.split()[-1]}": "1",
            })
            + data
        )

    return script


def _everything(obj: Any, depth: int = 0) -> str:
    """Every string reachable from an error: str, repr, args, attributes, a kept answer's
    body and headers and its request's headers, and the chained errors."""
    if depth > 4 or obj is None:
        return ""
    parts = [str(obj), repr(obj)]
    if isinstance(obj, BaseException):
        parts += [repr(obj.args), _everything(obj.__cause__, depth + 1), _everything(obj.__context__, depth + 1)]
        parts += [_everything(v, depth + 1) for v in vars(obj).values()]
    if isinstance(obj, sp.RawResponse) or hasattr(obj, "http_response"):
        obj = obj.http_response
    if hasattr(obj, "headers") and hasattr(obj, "status_code"):
        parts += [obj.content.decode("latin-1"), repr(obj.headers.multi_items()), _everything(obj.request, depth + 1)]
    if hasattr(obj, "method") and hasattr(obj, "headers"):
        parts += [repr(obj.headers.multi_items())]
    return " ".join(parts)


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        ("500 Internal Server Error", {"ok": False, "error_code": "X", "error_message": "bad {auth}"}, sp.InternalServerError),
        ("401 Unauthorized", {"ok": False, "error_code": "UNAUTHORIZED", "error_message": "{auth}"}, sp.AuthenticationError),
        ("200 OK", {"items": "{auth}"}, sp.APIResponseValidationError),
    ],
)
def test_an_echoed_key_is_in_no_error_attribute_or_log(
    kind: str, status: str, body: Any, error: type[Exception], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sports_posts")
    with ScriptedServer(echo(status, body)) as server, pytest.raises(error) as info:
        call(kind, server.base_url, lambda c: c.account.information(), max_retries=1)
    text = _everything(info.value)
    assert API_KEY not in text
    assert "<redacted>" in text, "the echo was kept, redacted"
    assert any("retrying" in r.getMessage() for r in caplog.records) or status.startswith(("401", "200"))
    assert all(API_KEY not in r.getMessage() for r in caplog.records)


def test_an_echoed_key_is_redacted_in_a_parsed_answer_and_its_raw_headers(kind: str) -> None:
    body = {**INFO, "company": {**INFO["company"], "name": "{auth}"}}
    with ScriptedServer(echo("200 OK", body)) as server:
        raw = call(kind, server.base_url, lambda c: c.with_raw_response.account.information())
    assert raw.parse().company.name == "Bearer <redacted>"
    assert raw.headers["x-echo"] == "Bearer <redacted>"
    assert raw.http_request.headers["authorization"] == "<redacted>"
    assert API_KEY not in _everything(raw)


def test_a_connection_error_keeps_a_redacted_request_and_no_driver_exception(kind: str) -> None:
    def hang_up(conn: Connection) -> None:
        conn.sock.close()

    with ScriptedServer(hang_up) as server, pytest.raises(sp.APIConnectionError) as info:
        call(kind, server.base_url, lambda c: c.account.information())
    assert info.value.request is not None
    assert info.value.request.headers["authorization"] == "<redacted>"
    assert info.value.__cause__ is None, "httpx's error holds the real request: it is not chained"
    assert API_KEY not in _everything(info.value)
