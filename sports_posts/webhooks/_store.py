"""What the fleet stores share: their typed error, and where-is-it descriptions free of passwords.

A driver's exception never leaves a store: it becomes a ``StoreError`` whose message
names the engine and the failure but never the password of a connection URL.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, Optional
from urllib.parse import urlsplit

from .. import _checks
from .._errors import ParameterError
from .._stores import scrub
from .errors import StoreUnavailableError

__all__ = ["StoreError", "check_body", "check_key", "check_retries", "describe_url", "missing_extra", "translated_errors"]


class StoreError(StoreUnavailableError):
    """A shared store (PostgreSQL, Redis) failed or is unreachable; the operation did not happen.

    ``.engine`` is ``"postgres"`` or ``"redis"``; ``.code`` the engine's error code when it
    gave one (a PostgreSQL SQLSTATE such as ``40P01``). The receiver answers 503 on it, so
    the service retries the delivery.
    """

    def __init__(self, message: str, *, engine: str, code: Optional[str] = None) -> None:
        super().__init__(message)
        self.engine = engine
        self.code = code


def check_key(key: object) -> str:
    """A key both engines store as given: a non-empty string of UTF-8 text without NUL."""
    if not isinstance(key, str) or not key or "\x00" in key:
        raise ParameterError("a store key must be a non-empty string without NUL", parameter="key")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise ParameterError("a store key must be valid UTF-8 text", parameter="key") from None
    return key


def check_body(body: object) -> bytes:
    """The raw body as bytes (``bytes``, ``bytearray`` or ``memoryview``)."""
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise ParameterError("an inbox body must be bytes", parameter="body")
    return bytes(body)


def check_retries(max_attempts: object, backoff: Sequence[object]) -> tuple[int, tuple[float, ...]]:
    """An inbox's retry policy: a positive attempt count and non-negative waits in seconds."""
    attempts = _checks.positive_int("max_attempts", max_attempts, maximum=MAX_ATTEMPTS_LIMIT)
    if isinstance(backoff, (str, bytes)) or not isinstance(backoff, Sequence) or not backoff:
        raise ParameterError("backoff must be a non-empty sequence of seconds", parameter="backoff")
    return attempts, tuple(_checks.seconds("backoff", b, allow_zero=True) for b in backoff)


MAX_ATTEMPTS_LIMIT = 1000
"""The most attempts an inbox makes of one event (its backoff's last wait repeats)."""


def describe_url(url: str) -> str:
    """``host:port/db`` of a connection URL: never its user's password."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "localhost", parts.port
    except ValueError:
        return "<unparsable url>"
    where = f"{host}:{port}" if port else host
    path = parts.path.strip("/")
    return f"{where}/{path}" if path else where


def missing_extra(owner: str, extra: str) -> StoreError:
    """The error for a class used without its extra installed."""
    return StoreError(
        f"{owner} needs the {extra} extra: pip install 'sports-posts[{extra}]'", engine=extra
    )


@contextlib.contextmanager
def translated_errors(
    owner: str, engine: str, driver_errors: tuple[type[BaseException], ...], url: Optional[str]
) -> Iterator[None]:
    """Turn the driver's own errors into ``StoreError``, password scrubbed, cause dropped
    (a driver's exception may hold the connection string)."""
    try:
        yield
    except driver_errors as exc:
        code: Any = getattr(exc, "sqlstate", None)
        message = scrub(f"{owner}: {type(exc).__name__}: {exc}".strip(), url)
        raise StoreError(message, engine=engine, code=code) from None
