"""Secrets out of everything the SDK keeps: the API key is replaced wherever a request,
an answer's headers or body, or an error's text would hold it; and out of the HTTP
libraries' own log records, which are written before the SDK sees an answer."""

from __future__ import annotations

import collections
import logging
import threading
import weakref
from collections.abc import Mapping
from typing import Any, Optional

from ._http import Request, Response

__all__ = [
    "HTTP_LOGGERS",
    "REDACTED",
    "Keeper",
    "kept_request",
    "kept_response",
    "redact",
    "redact_body",
    "redacted_headers",
    "watch_key",
]

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


# -- the HTTP libraries' log records -----------------------------------------------------------

_LIBRARIES = ("httpx", "httpx2", "httpcore", "httpcore2")
_CORE_PARTS = ("connection", "connection_pool", "http11", "http2", "proxy", "socks")
HTTP_LOGGERS: tuple[str, ...] = (
    "httpx", "httpx2",
    *(f"{core}{part}" for core in ("httpcore", "httpcore2") for part in ("", *(f".{p}" for p in _CORE_PARTS))),
)
"""The loggers of both HTTP stacks, each by name: a logger's filter sees only the records
made on that logger, not those of its children."""

_live: dict[str, int] = {}  # the key of each live client, with how many clients hold it
_secrets: tuple[str, ...] = ()  # what the filter looks for: each live key, and lower-cased
_released: collections.deque[str] = collections.deque()  # keys of clients collected since
_lock = threading.Lock()


class _KeyFilter(logging.Filter):
    """Replaces the keys of live clients in a record of the HTTP libraries' loggers (a key a
    server echoed in a reason phrase or a header); other records are never given to it."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = _secrets
        if not secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a record that does not format: the handler reports it as usual
            return True
        found = False
        for secret in secrets:
            if secret in message:
                message = message.replace(secret, REDACTED)
                found = True
        if found:
            record.msg, record.args = message, None
        return True


_FILTER = _KeyFilter()
_installed = False


def _install() -> None:
    """Put the filter on every logger of both stacks, those named above and any child of
    theirs that exists already."""
    global _installed
    names = set(HTTP_LOGGERS)
    names.update(name for name in list(logging.root.manager.loggerDict)
                 if name.split(".", 1)[0] in _LIBRARIES)
    for name in names:
        logging.getLogger(name).addFilter(_FILTER)  # once: addFilter ignores a filter it has
    _installed = True


def _settle() -> None:
    """Count the released keys out and rebuild what the filter looks for (lock held)."""
    global _secrets
    while _released:
        key = _released.popleft()
        left = _live.get(key, 0) - 1
        if left > 0:
            _live[key] = left
        else:
            _live.pop(key, None)
    keys = set(_live)
    _secrets = tuple(sorted(keys | {k.lower() for k in keys}, key=len, reverse=True))


def _forget(key: str) -> None:
    """A client holding ``key`` was collected. It may run inside the garbage collector while
    this very thread holds the lock (in ``watch_key``), so it never waits for it: the key is
    queued, and counted out now if the lock is free, else by its holder or the next client."""
    _released.append(key)
    if _lock.acquire(blocking=False):
        try:
            _settle()
        finally:
            _lock.release()


def watch_key(client: Any, key: str) -> None:
    """Redact ``key`` from the HTTP libraries' log records for as long as ``client`` lives."""
    if not key:
        return
    with _lock:
        if not _installed:
            _install()
        _live[key] = _live.get(key, 0) + 1
        _settle()
    weakref.finalize(client, _forget, key)
