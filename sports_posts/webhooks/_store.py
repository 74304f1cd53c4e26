"""The checks of what the webhook stores are given, and ``StoreError`` where it was always imported.

The plumbing (connections, error translation, schema) is the store layer's, ``sports_posts._stores``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import _utils
from .._errors import ParameterError
from .._stores.errors import StoreError

__all__ = ["StoreError", "check_body", "check_key", "check_retries"]


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
    attempts = _utils.positive_int("max_attempts", max_attempts, maximum=MAX_ATTEMPTS_LIMIT)
    if isinstance(backoff, (str, bytes)) or not isinstance(backoff, Sequence) or not backoff:
        raise ParameterError("backoff must be a non-empty sequence of seconds", parameter="backoff")
    return attempts, tuple(_utils.seconds("backoff", b, allow_zero=True) for b in backoff)


MAX_ATTEMPTS_LIMIT = 1000
"""The most attempts an inbox makes of one event (its backoff's last wait repeats)."""
