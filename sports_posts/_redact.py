"""Secrets out of everything the SDK keeps: the API key is replaced wherever a request,
an answer's headers or body, or an error's text would hold it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Optional

from ._http import Request, Response

__all__ = ["REDACTED", "Keeper", "kept_request", "kept_response", "redact", "redact_body", "redacted_headers"]

REDACTED = "<redacted>"


def redacted_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers fit for a log record: the Authorization value is never written out."""
    return {k: (REDACTED if k.lower() == "authorization" else v) for k, v in headers.items()}


def redact(text: str, secret: str) -> str:
    """``text`` with ``secret`` replaced, wherever it is."""
    return text.replace(secret, REDACTED) if secret and secret in text else text


def kept_request(request: Request, secret: str = "") -> Request:
    """The request as errors and raw responses keep it: Authorization redacted, and the key
    wherever else it is (a cookie a caller's client kept from an echo), in an httpx
    request whichever stack sent it, so what an error holds has one type."""
    headers = redacted_headers(request.headers)
    url = str(request.url)
    if secret:
        headers = {k: redact(v, secret) for k, v in headers.items()}
        url = redact(url, secret)  # a redirect's target may carry it
    return Request(request.method, url, headers=headers)


class Keeper:
    """The answer as the SDK keeps it, made on first demand and then held: only errors
    and the raw view need it, so a call that succeeds never copies its answer."""

    __slots__ = ("_args", "_kept")

    def __init__(self, response: Response, body: bytes, request: Request, secret: str) -> None:
        self._args: Optional[tuple[Response, bytes, Request, str]] = (response, body, request, secret)
        self._kept: Optional[Response] = None

    def __call__(self) -> Response:
        if self._kept is None:
            assert self._args is not None
            response, body, request, secret = self._args
            self._kept = kept_response(response, body, kept_request(request, secret), secret)
            self._args = None  # the unredacted request goes as soon as the copy exists
        return self._kept


SHORT_KEY = 64
"""Keys up to this many bytes are looked for with ``bytes.rfind``, longer ones with ``in``."""


def redact_body(body: bytes, secret: str) -> bytes:
    """``body`` with the key replaced wherever a hostile or misconfigured server echoed it,
    before anything parses it: no model, error or log can then hold the key.

    Every answer pays this scan, so it takes CPython's fastest search for it: ``rfind``
    (a skip search, faster on a page than the two-way search ``in`` picks for long
    bodies). Its worst case, a body built against the key, costs up to about half the
    key's length in comparisons per byte, so it is kept to keys of at most ``SHORT_KEY``
    bytes; longer keys take the linear two-way search, which is as fast for them."""
    raw_secret = secret.encode("ascii")
    if not raw_secret:
        return body
    echoed = body.rfind(raw_secret) >= 0 if len(raw_secret) <= SHORT_KEY else raw_secret in body
    return body.replace(raw_secret, REDACTED.encode("ascii")) if echoed else body


def kept_response(response: Response, body: bytes, request: Request, secret: str) -> Response:
    """The answer as the SDK keeps it: the decoded ``body``, already redacted by
    ``redact_body`` before it was parsed, and the headers with the key replaced wherever a
    hostile or misconfigured server echoed it (names and values)."""
    headers = [
        # names come lower-cased: the key is looked for lower-cased in them too
        (redact(redact(k, secret), secret.lower()), redact(v, secret))
        for k, v in response.headers.multi_items()
        # the body is decoded already: these two would describe bytes no longer held
        if k.lower() not in ("content-encoding", "content-length")
    ]
    extensions = {k: v for k, v in response.extensions.items() if k in ("http_version", "reason_phrase")}
    reason = extensions.get("reason_phrase")
    if isinstance(reason, bytes) and secret:  # the status line's text: str(exc) and logs quote it
        extensions["reason_phrase"] = reason.replace(secret.encode("ascii"), REDACTED.encode("ascii"))
    return Response(response.status_code, headers=headers, content=body, request=request, extensions=extensions)
