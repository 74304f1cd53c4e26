"""Sign and verify webhook bodies: GitHub's ``X-Hub-Signature-256`` scheme under spec 6.6's header.

Every malformed input raises ``SignatureVerificationError``, never ``TypeError``,
``ValueError`` or ``binascii.Error``: a forged or garbled header must become a 401, not a 500.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Optional, Protocol, Union

from .._errors import ParameterError, SignatureVerificationError
from .._vocabulary import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    WebhookHeaders,
    header_names_or_default,
)
from ._common import secret_keys

__all__ = [
    "DELIVERY_HEADER",
    "EVENT_HEADER",
    "SIGNATURE_HEADER",
    "Headers",
    "Payload",
    "Secret",
    "WebhookHeaders",
    "get_header",
    "get_headers",
    "sign_payload",
    "verify_signature",
]

Payload = Union[bytes, bytearray, memoryview, str]
"""The raw request body; a ``str`` is encoded UTF-8 (the service sends UTF-8 JSON)."""
Secret = Union[str, bytes, Sequence[Union[str, bytes]]]
"""One signing secret, or several during a rotation (any one may match)."""
Headers = Union[
    Mapping[str, str], Mapping[bytes, bytes], Iterable[tuple[str, str]], Iterable[tuple[bytes, bytes]]
]
"""Any mapping of header names to values, or ASGI-style pairs; names match case-insensitively."""

# ASCII only: ``[0-9a-fA-F]`` never matches the Unicode digits that int() or str.isdigit() accept.
_SIGNATURE = re.compile(r"sha256=([0-9a-fA-F]{64})")


class _Keyed(Protocol):
    """What a keyed HMAC offers: a copy to feed one body into."""

    def copy(self) -> _Keyed: ...
    def update(self, msg: bytes) -> None: ...
    def digest(self) -> bytes: ...


@functools.lru_cache(maxsize=32)
def _hmac_for(secret: Union[str, bytes]) -> _Keyed:
    """The standard library's HMAC-SHA256 keyed with ``secret``, made once per secret.

    Each request ``.copy()``-es it, which skips the key setup a fresh ``hmac.new`` repeats.
    Where ``hmac.HMAC`` wraps OpenSSL's HMAC object (Python 3.12 on), that object is kept:
    its copy, update and digest are then one C call each, not a Python method around one.
    Only secrets the application passed itself are kept, at most 32 of them.
    """
    key = secret.encode("utf-8", "surrogatepass") if isinstance(secret, str) else secret
    mac = hmac.new(key, digestmod=hashlib.sha256)
    inner: Optional[_Keyed] = getattr(mac, "_hmac", None)
    if inner is not None and all(callable(getattr(inner, name, None)) for name in ("copy", "update", "digest")):
        return inner
    return mac


def _hmac_sha256(secret: Union[str, bytes], body: bytes) -> bytes:
    """``hmac.digest(secret, body, "sha256")``, from a copy of the keyed HMAC of ``secret``."""
    mac = _hmac_for(secret).copy()
    mac.update(body)
    return mac.digest()


def _payload_bytes(payload: object) -> bytes:
    if isinstance(payload, bytes):
        return payload
    if isinstance(payload, (bytearray, memoryview)):
        return bytes(payload)
    if isinstance(payload, str):
        try:
            return payload.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate cannot be part of a UTF-8 body the service signed.
            raise SignatureVerificationError(
                "payload is not valid UTF-8 text; pass the raw body bytes"
            ) from None
    raise SignatureVerificationError(
        f"payload must be the raw request body (bytes), not {type(payload).__name__}; "
        "a framework that parsed the JSON first breaks the signature"
    )


def _signature_digest(signature: object, header: str = SIGNATURE_HEADER) -> bytes:
    """The 32 bytes of a ``sha256=<64 hex>`` value of ``header``, or SignatureVerificationError."""
    if type(signature) is str and len(signature) == 71 and signature.startswith("sha256="):
        # The common, well-formed case without the regex. bytes.fromhex takes only ASCII hex
        # digits (and whitespace, which would leave fewer than 32 bytes): same strictness.
        try:
            digest = bytes.fromhex(signature[7:])
        except ValueError:
            digest = b""
        if len(digest) == 32:
            return digest
    if signature is None:
        raise SignatureVerificationError(f"missing {header} header")
    if isinstance(signature, (bytes, bytearray)):
        try:
            signature = bytes(signature).decode("ascii")
        except UnicodeDecodeError:
            raise SignatureVerificationError(f"malformed {header} header: not ASCII") from None
    if not isinstance(signature, str):
        raise SignatureVerificationError(
            f"malformed {header} header: expected str, got {type(signature).__name__}"
        )
    if not signature:
        raise SignatureVerificationError(f"empty {header} header")
    # HTTP strips optional whitespace around a field value; a framework may not have.
    match = _SIGNATURE.fullmatch(signature.strip(" \t"))
    if match is None:
        raise SignatureVerificationError(
            f"malformed {header} header: expected 'sha256=' followed by 64 hex digits"
        )
    return bytes.fromhex(match.group(1))


def verify_signature(
    payload: Payload,
    signature: Optional[Union[str, bytes]],
    secret: Secret,
    *,
    header_names: Optional[WebhookHeaders] = None,
) -> None:
    """Check ``signature`` (the ``X-Service-Signature`` value) against the raw ``payload``.

    ``secret`` may be a sequence during a key rotation; any one matching is enough. The
    comparison is constant time over the 32 decoded bytes, so upper-case hex also matches.
    ``header_names`` only changes which header the errors name (a renamed one, say).
    Raises [`SignatureVerificationError`][sports_posts.SignatureVerificationError] when the header is missing, malformed or
    does not match, and [`ParameterError`][sports_posts.ParameterError] when ``secret`` itself is unusable.
    """
    if header_names is not None:  # a bad value is refused even when the signature matches
        header_names_or_default(header_names)
    if (
        type(payload) is bytes
        and type(secret) is str
        and secret
        and type(signature) is str
        and len(signature) == 71
        and signature.startswith("sha256=")
    ):
        # The usual call (one secret, the raw body, a well-formed header) in one branch: the
        # HMAC of a small body is cheap, so every extra call and check here would show.
        try:
            expected = bytes.fromhex(signature[7:])  # ASCII hex only; whitespace leaves < 32 bytes
        except ValueError:
            expected = b""
        if len(expected) == 32:
            if not hmac.compare_digest(_hmac_sha256(secret, payload), expected):
                raise _mismatch(header_names_or_default(header_names))
            return
    names = header_names_or_default(header_names)
    keys = secret_keys(secret)
    body = _payload_bytes(payload)
    expected = _signature_digest(signature, names.signature)
    matched = False
    for key in keys:
        # Every key is tried, so the timing does not say which one of a rotation matched.
        matched |= hmac.compare_digest(_hmac_sha256(key, body), expected)
    if not matched:
        raise _mismatch(names)


def _mismatch(names: WebhookHeaders) -> SignatureVerificationError:
    """What a wrong signature most often means, naming the header that was checked."""
    return SignatureVerificationError(
        f"{names.signature} header does not match the payload: a different signing secret, "
        "or a body that is not the raw bytes received"
    )


def sign_payload(payload: Payload, secret: Union[str, bytes]) -> str:
    """The ``X-Service-Signature`` value the service would send for ``payload``: ``sha256=<hex>``.

    For customers' own tests; takes one secret, the one the service signs with.
    """
    keys = secret_keys(secret)
    if len(keys) != 1 or not isinstance(secret, (str, bytes, bytearray)):
        raise ParameterError("sign_payload takes exactly one secret", parameter="secret")
    try:
        body = _payload_bytes(payload)
    except SignatureVerificationError as exc:
        raise ParameterError(str(exc), parameter="payload") from None
    return "sha256=" + _hmac_sha256(keys[0], body).hex()


def get_header(headers: object, name: str) -> Optional[str]:
    """The value of header ``name`` (case-insensitive) from a mapping or ``(name, value)`` pairs.

    Bytes are decoded Latin-1, as HTTP/1.1 and ASGI define them. A header that appears
    more than once with different values yields ``None`` plus nothing to guess from:
    callers treat it as missing. Never raises on odd input.
    """
    return _find(headers, *_wanted((name,)))[0]


def get_headers(headers: object, names: Sequence[str]) -> list[Optional[str]]:
    """``get_header`` for several ``names`` in one pass over ``headers``.

    Only the values of the wanted names are decoded: a request carries a dozen headers,
    and decoding each one cost more than verifying the signature.
    """
    return _find(headers, *_wanted(tuple(names)))


@functools.lru_cache(maxsize=64)  # the few names callers ask for, lowered and encoded once
def _wanted(names: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[bytes, ...]]:
    wanted = tuple(name.lower() for name in names)
    return wanted, tuple(name.encode("latin-1") for name in wanted)


def signature_and_delivery(headers: object, header_names: WebhookHeaders) -> list[Optional[str]]:
    """The signature and delivery id of a delivery, under ``header_names``' names."""
    return _find(headers, header_names._lookup, header_names._lookup_bytes)


def _find(headers: object, wanted: tuple[str, ...], wanted_bytes: tuple[bytes, ...]) -> list[Optional[str]]:
    """``get_headers`` for names already lower-cased, as str and as Latin-1 bytes."""
    fast = _lowercase_pairs(headers)
    if fast is not None:  # ASGI's own shape: answered by dict lookups
        return [v.decode("latin-1") if type(v) is bytes else _text(v) for v in map(fast.get, wanted_bytes)]
    found: list[list[str]] = [[] for _ in wanted]
    try:
        items: Iterable[object]
        if isinstance(headers, Mapping):
            items = headers.items()
        elif headers is None or isinstance(headers, (str, bytes)):
            return [None] * len(wanted)
        else:
            items = headers  # type: ignore[assignment]
        for item in items:
            if not isinstance(item, tuple) or len(item) != 2:
                continue
            key, value = item
            if isinstance(key, str):
                key = key.lower()
                if key not in wanted:
                    continue
                index = wanted.index(key)
            elif isinstance(key, (bytes, bytearray)):
                key = bytes(key).lower()
                if key not in wanted_bytes:
                    continue
                index = wanted_bytes.index(key)
            else:
                continue
            value_text = _text(value)
            if value_text is not None:
                found[index].append(value_text)
    except Exception:  # a customer's exotic mapping must not turn bad input into a 500
        return [None] * len(wanted)
    return [values[0] if values and all(v == values[0] for v in values) else None for values in found]


def _lowercase_pairs(headers: object) -> Optional[dict[bytes, object]]:
    """``headers`` as a dict when it is a list of ``(bytes, value)`` pairs whose names are
    all lowercase and each appears once (what ASGI servers pass), else ``None``. Built and
    checked in C: a request carries a dozen headers."""
    if type(headers) is not list:
        return None
    try:
        pairs: dict[bytes, object] = dict(headers)
        if len(pairs) != len(headers) or not b"".join(pairs).islower():
            return None
    except (TypeError, ValueError):
        return None
    return pairs


def _text(value: object) -> Optional[str]:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("latin-1")
    return None
