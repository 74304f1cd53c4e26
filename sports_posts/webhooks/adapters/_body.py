"""What every adapter shares: the body limit, reading up to it, and the two refusals.

A breaking-news payload is a few KB; reading stops one byte past ``max_body`` whatever the
``Content-Length`` claims (absent, or smaller than the body), so a huge POST cannot make a
receiver allocate it, and a declared length over the limit is refused before any read.
"""

from __future__ import annotations

from typing import Callable, Optional

from ..._utils import positive_int

MAX_BODY = 1 << 20
"""The largest body read by default (1 MiB)."""
MAX_BODY_LIMIT = 1 << 26
"""The largest ``max_body`` an adapter takes (64 MiB): a payload is a few KB, and a bound
past this is no bound."""


def check_max_body(value: object) -> int:
    """``max_body`` as given to an adapter: a byte count from 1 to ``MAX_BODY_LIMIT``
    (``None``, a string or infinity would turn every delivery into a 500 or lift the bound)."""
    return positive_int("max_body", value, maximum=MAX_BODY_LIMIT)
CHUNK = 64 * 1024

NOT_ALLOWED = b'{"ok":false,"status":"method_not_allowed"}'
TOO_LARGE = b'{"ok":false,"status":"too_large"}'
JSON = "application/json"


def declared_length(value: object) -> Optional[int]:
    """The ``Content-Length`` as an int, or ``None`` when absent or not a length."""
    if isinstance(value, str):
        value = value.strip().encode("latin-1", "replace")
    if not isinstance(value, bytes) or not value.isdigit():  # bytes.isdigit: ASCII digits only
        return None
    return int(value)


def declared_too_large(value: object, max_body: int) -> bool:
    """Whether the declared length alone is over the limit (answer 413 without reading)."""
    length = declared_length(value)
    return length is not None and length > max_body


def read_limited(read: Callable[[int], bytes], max_body: int) -> Optional[bytes]:
    """Read ``read(n)`` to its end, in chunks; ``None`` as soon as more than ``max_body``
    bytes came (the rest is never read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = read(min(CHUNK, max_body + 1 - size))
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > max_body:
            return None
        chunks.append(chunk)
