"""Helpers the webhook modules share that load with the package: stdlib and the exception tree only."""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import ParameterError

__all__ = ["secret_keys"]


def secret_keys(secret: object) -> list[bytes]:
    """The secrets as HMAC keys; a bad secret is our customer's configuration error."""
    if isinstance(secret, (str, bytes, bytearray)):
        candidates: list[object] = [secret]
    elif isinstance(secret, Sequence):
        candidates = list(secret)
    else:
        raise ParameterError(
            "secret must be a str, bytes or a sequence of them", parameter="secret"
        )
    keys: list[bytes] = []
    for candidate in candidates:
        if isinstance(candidate, str):
            key = candidate.encode("utf-8", "surrogatepass")
        elif isinstance(candidate, (bytes, bytearray)):
            key = bytes(candidate)
        else:
            raise ParameterError(
                "secret must be a str, bytes or a sequence of them", parameter="secret"
            )
        if not key:
            raise ParameterError("a signing secret must not be empty", parameter="secret")
        keys.append(key)
    if not keys:
        raise ParameterError("at least one signing secret is needed", parameter="secret")
    return keys
