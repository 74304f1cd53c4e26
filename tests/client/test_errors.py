"""Every status and error_code to its class; error bodies of any shape keep their text."""

from __future__ import annotations

from typing import Any, Optional

import httpx
import pytest
import respx

import sports_posts as sp
from tests.runner import Runner

from .conftest import API_KEY


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (400, "INVALID_PARAMETER", sp.InvalidParameterError),
        (400, "SINCE_ID_NOT_FOUND", sp.SinceIdNotFoundError),
        (400, "SOMETHING_NEW", sp.BadRequestError),
        (401, "UNAUTHORIZED", sp.AuthenticationError),
        (402, None, sp.PaymentRequiredError),
        (402, "PAYMENT_REQUIRED", sp.PaymentRequiredError),
        (403, "FORBIDDEN", sp.PermissionDeniedError),
        (404, "NOT_FOUND", sp.NotFoundError),
        (410, None, sp.GoneError),
        (429, "RATE_LIMITED", sp.RateLimitError),
        (500, "INTERNAL_ERROR", sp.InternalServerError),
        (502, None, sp.InternalServerError),
        (503, None, sp.InternalServerError),
        (504, None, sp.InternalServerError),
        (418, "TEAPOT", sp.APIStatusError),
    ],
)
def test_status_and_error_code_choose_the_class(
    runner: Runner, api: respx.MockRouter, status: int, code: Optional[str], cls: type[sp.APIStatusError]
) -> None:
    body: dict[str, Any] = {"ok": False, "error_message": "it went wrong"}
    if code:
        body["error_code"] = code
    api.get("/posts").respond(status, json=body)
    with pytest.raises(cls) as info:
        runner.run(lambda c: c.posts.list(), max_retries=0)
    err = info.value
    assert type(err) is cls
    assert isinstance(err, sp.SportsPostsError)
    assert err.status_code == status
    assert err.error_code == code
    assert err.error_message == "it went wrong"
    assert err.body == body
    assert err.response.status_code == status
    assert "it went wrong" in str(err)
    assert API_KEY not in str(err) and API_KEY not in repr(err)


def test_html_error_body_keeps_its_text_and_class(runner: Runner, api: respx.MockRouter) -> None:
    html = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    api.get("/account/x-ids").respond(502, text=html, headers={"content-type": "text/html"})
    with pytest.raises(sp.InternalServerError) as info:
        runner.run(lambda c: c.account.x_ids(), max_retries=0)
    assert info.value.body == html
    assert info.value.error_code is None
    assert "502 Bad Gateway" in str(info.value)


@pytest.mark.parametrize("body", [b"[1, 2]", b'"just a string"', b'{"error": {"code": 5}}', b"", b"\xff\xfe garbage"])
def test_error_body_of_another_shape_still_gets_the_status_class(
    runner: Runner, api: respx.MockRouter, body: bytes
) -> None:
    api.get("/posts").respond(404, content=body)
    with pytest.raises(sp.NotFoundError) as info:
        runner.run(lambda c: c.posts.list(), max_retries=0)
    assert info.value.error_code is None and info.value.status_code == 404


def test_gone_from_a_deprecated_route(runner: Runner, api: respx.MockRouter) -> None:
    api.get("/posts").respond(410, json={"ok": False, "error_code": "GONE", "error_message": "use GET /posts"})
    with pytest.raises(sp.GoneError):
        runner.run(lambda c: c.posts.list(), max_retries=0)


def test_connection_error_is_typed(runner: Runner, api: respx.MockRouter) -> None:
    api.get("/posts").mock(side_effect=httpx.ConnectError("connection refused"))
    with pytest.raises(sp.APIConnectionError) as info:
        runner.run(lambda c: c.posts.list(), max_retries=0)
    assert not isinstance(info.value, sp.APITimeoutError)
    assert "connection refused" in str(info.value)
    assert API_KEY not in str(info.value)


def test_timeout_is_typed(runner: Runner, api: respx.MockRouter) -> None:
    api.get("/posts").mock(side_effect=httpx.ReadTimeout("read timed out"))
    with pytest.raises(sp.APITimeoutError):
        runner.run(lambda c: c.posts.list(), max_retries=0)


def test_hierarchy_matches_api_md() -> None:
    assert issubclass(sp.ParameterError, ValueError)
    assert issubclass(sp.APITimeoutError, sp.APIConnectionError)
    for cls in (sp.InvalidParameterError, sp.SinceIdNotFoundError):
        assert issubclass(cls, sp.BadRequestError)
    for cls in (sp.BadRequestError, sp.AuthenticationError, sp.PaymentRequiredError, sp.PermissionDeniedError,  # type: ignore[assignment]
                sp.NotFoundError, sp.GoneError, sp.RateLimitError, sp.InternalServerError):
        assert issubclass(cls, sp.APIStatusError)
    for cls in (sp.ParameterError, sp.APIConnectionError, sp.APIResponseValidationError, sp.APIStatusError,  # type: ignore[assignment]
                sp.SignatureVerificationError):
        assert issubclass(cls, sp.SportsPostsError)
