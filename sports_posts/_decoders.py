"""Reading an answer's body within its bounds: decoded (gzip or deflate, a bounded step
at a time), cut at ``max_response_bytes`` (error bodies shorter still), and within the
attempt's deadline. The driver feeds the bytes; every decision about them is made here."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Callable, Optional

from ._config import ACCEPT_ENCODING
from ._errors import APIResponseValidationError, APITimeoutError, ResponseTooLargeError
from ._http import Request, Response
from ._redact import kept_request

__all__ = ["MAX_ERROR_BODY_BYTES", "BodyReader"]

MAX_ERROR_BODY_BYTES = 64 * 1024
"""An error answer's body is kept up to this (or ``max_response_bytes`` if smaller) and
cut there: its status says what happened, a megabyte of proxy HTML adds nothing."""


class _Inflater:
    """gzip or deflate inflated a bounded step at a time (``max_length``), so a bomb never
    expands in memory past the room left under the cap (plus one step)."""

    STEP = 256 * 1024

    def __init__(self, encoding: str) -> None:
        wbits = 16 + zlib.MAX_WBITS if encoding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._z = zlib.decompressobj(wbits)
        self._first = encoding == "deflate"

    def inflate(self, data: bytes, room: int) -> Iterator[bytes]:
        """Yield the inflated bytes of ``data`` in steps of at most ``room + 1`` bytes."""
        step = min(room + 1, self.STEP)
        if self._first and data:
            self._first = False
            try:
                out = self._z.decompress(data, step)
            except zlib.error:  # "deflate" sent as a raw stream, without the zlib header
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                out = self._z.decompress(data, step)
        else:
            out = self._z.decompress(data, step)
        yield out
        # A full step may leave output owed even when all input was taken: ask again.
        while self._z.unconsumed_tail or len(out) == step:
            out = self._z.decompress(self._z.unconsumed_tail, step)
            if not out:
                return
            yield out


def _inflater_for(content_encoding: str) -> Optional[_Inflater]:
    """The decoder of a ``Content-Encoding`` (``None`` for identity), or the typed error of
    one the SDK did not ask for."""
    encodings = [e.strip() for e in content_encoding.lower().split(",")]
    encodings = [e for e in encodings if e and e != "identity"]
    if len(encodings) > 1 or (encodings and encodings[0] not in ("gzip", "x-gzip", "deflate")):
        raise APIResponseValidationError(
            f"the answer is encoded as {', '.join(encodings)!r}; the SDK asks for {ACCEPT_ENCODING} only"
        )
    return _Inflater(encodings[0]) if encodings else None


class BodyReader:
    """The bounds of one attempt's read, checked as each chunk arrives: the decoded size
    against ``max_response_bytes`` and the clock against the attempt's deadline.

    The driver calls ``begin`` with the response head and ``feed`` with each raw
    chunk until it answers ``False``; every decision about the bytes is made here.
    """

    def __init__(
        self, limit: int, deadline: Optional[float], clock: Callable[[], float], request: Request,
        *, overlap: int = 0,
    ) -> None:
        self.limit = limit
        self._overlap = overlap
        """Bytes read past an error body's cut, so that a key straddling it is seen whole
        by the scan (``trim`` then cuts the redacted body)."""
        self._keep: Optional[int] = None
        self.deadline = deadline
        self._clock = clock
        self.request = request
        self._chunks: list[bytes] = []
        self._size = 0
        self._cap = limit
        self._inflater: Optional[_Inflater] = None
        self._status = 0

    def seconds_left(self) -> Optional[float]:
        """Time left for this attempt (``None``: unbounded), for an async timeout scope."""
        return None if self.deadline is None else max(0.0, self.deadline - self._clock())

    def timed_out(self) -> APITimeoutError:
        where = f"{self.request.method} {self.request.url.copy_with(query=None)}"
        return APITimeoutError(
            f"{where} timed out: the whole request (connect, headers and body) must finish "
            "within `timeout`", request=kept_request(self.request),
        )

    def begin(self, response: Response) -> bool:
        """Take the head: choose the decoder and the bound (error bodies are cut short).
        ``False`` when the transport had read the body already (``httpx.MockTransport``
        answers that way): it is taken as it is, decoded, and nothing is left to stream."""
        self._check_clock()
        self._status = response.status_code
        if not response.is_success:
            self._keep = min(self.limit, MAX_ERROR_BODY_BYTES)
            self._cap = self._keep + self._overlap
        if response.is_stream_consumed:
            self.feed(response.content)
            return False
        headers = response.headers
        encoding = headers.get("content-encoding")
        if encoding:  # rare: the SDK's pool and most servers send JSON this small as it is
            self._inflater = _inflater_for(encoding)
        if self._inflater is None:
            length = headers.get("content-length", "")
            if length.isdigit() and int(length) > self._cap and response.is_success:
                self._over()
        return True

    def feed(self, chunk: bytes) -> bool:
        """Take a raw chunk; ``False`` once enough is read (an error body at its cap)."""
        self._check_clock()
        try:
            parts = [chunk] if self._inflater is None else self._inflater.inflate(chunk, self._cap - self._size)
            for part in parts:
                if not self._take(part):
                    return False
        except zlib.error as exc:
            raise APIResponseValidationError(f"the answer's compressed body is corrupt: {exc}") from None
        return True

    def _take(self, part: bytes) -> bool:
        room = self._cap - self._size
        if len(part) > room:
            if self._status and not 200 <= self._status < 300:
                self._chunks.append(part[:room])
                self._size = self._cap
                return False
            self._over()
        if part:
            self._chunks.append(part)
            self._size += len(part)
        return True

    def _check_clock(self) -> None:
        if self.deadline is not None and self._clock() >= self.deadline:
            raise self.timed_out()

    def _over(self) -> None:
        where = f"{self.request.method} {self.request.url.copy_with(query=None)}"
        raise ResponseTooLargeError(
            f"{where}: the answer's body passed max_response_bytes={self.limit} bytes, so reading "
            "stopped there. If an answer this large is expected, raise the bound: "
            "SportsPosts(max_response_bytes=...) or client.with_options(max_response_bytes=...)",
            limit=self.limit,
        )

    def body(self) -> bytes:
        """Every decoded byte read (the inflater was drained after each chunk)."""
        return b"".join(self._chunks)

    def trim(self, body: bytes) -> bytes:
        """An error's ``body``, once redacted, cut to its bound: the bytes read past it were
        only there for the scan to see a key that straddles the cut."""
        if self._keep is None or len(body) <= self._keep:
            return body
        self._cut = True
        return body[: self._keep]
