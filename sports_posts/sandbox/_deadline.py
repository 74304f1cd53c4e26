"""One HTTP/1.1 POST whose whole answer (status line, headers, body) must arrive by a deadline.

The webhook sender's timeout (spec 6.5: 10 seconds) is for the answer, not for each read: an
HTTP client's read timeout restarts at every byte, so a receiver trickling a 2xx byte by byte
would count as answering in time. Every read here waits at most until the one deadline.
"""

from __future__ import annotations

import socket
import ssl
import time
from typing import Callable, Optional
from urllib.parse import quote, urlsplit

__all__ = ["AnswerError", "DeadlineExceeded", "post_within"]

_URL_SAFE = "/?#[]@!$&'()*+,;=%:~"
"""What stays as written in the request target; everything else is percent-encoded."""
_MAX_HEAD = 64 * 1024
"""Status line and headers larger than this are a broken answer, not a slow one."""


class AnswerError(Exception):
    """The receiver's answer is not HTTP/1.x (or the connection broke before it was complete)."""


class DeadlineExceeded(AnswerError):
    """The whole answer did not arrive before the deadline."""


class _Reader:
    """Reads from a socket, never waiting past ``deadline`` (on the ``monotonic`` clock)."""

    def __init__(self, sock: socket.socket, deadline: float, monotonic: Callable[[], float]) -> None:
        self.sock = sock
        self.deadline = deadline
        self.monotonic = monotonic

    def left(self) -> float:
        left = self.deadline - self.monotonic()
        if left <= 0:
            raise DeadlineExceeded("the answer was not complete by the deadline")
        return left

    def recv(self) -> bytes:
        self.sock.settimeout(self.left())
        try:
            return self.sock.recv(65536)
        except socket.timeout:
            raise DeadlineExceeded("the answer was not complete by the deadline") from None


def _head(reader: _Reader, buf: bytes) -> tuple[int, dict[str, str], bytes]:
    """The status and headers of the final (non-1xx) answer, and the bytes after them."""
    while True:
        end = buf.find(b"\r\n\r\n")
        while end < 0:
            if len(buf) > _MAX_HEAD:
                raise AnswerError("the answer's headers are too large")
            chunk = reader.recv()
            if not chunk:
                raise AnswerError("the connection closed before the answer's headers were complete")
            buf += chunk
            end = buf.find(b"\r\n\r\n")
        lines = buf[:end].decode("latin-1").split("\r\n")
        buf = buf[end + 4:]
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit() or len(parts[1]) != 3:
            raise AnswerError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if not 100 <= status < 200:
            return status, headers, buf


def _body_complete(reader: _Reader, status: int, headers: dict[str, str], buf: bytes) -> None:
    """Read (and drop) the body until it is complete, by Content-Length, chunks or the close."""
    if status in (204, 304):
        return
    if "chunked" in headers.get("transfer-encoding", "").lower():
        _chunks(reader, buf)
        return
    length = headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise AnswerError(f"an invalid Content-Length: {length[:40]!r}")
        need = int(length) - len(buf)
        while need > 0:
            chunk = reader.recv()
            if not chunk:
                raise AnswerError("the connection closed before the answer's body was complete")
            need -= len(chunk)
        return
    while reader.recv():  # no length: the body ends when the receiver closes (we asked it to)
        pass


def _chunks(reader: _Reader, buf: bytes) -> None:
    """Read a chunked body to its last chunk and trailers, keeping only what is not parsed yet."""
    need = 0  # bytes of chunk data (plus its CRLF) still to skip
    in_trailers = False
    while True:
        if need:
            take = min(need, len(buf))
            need -= take
            buf = buf[take:]
        while not need:
            end = buf.find(b"\r\n")
            if end < 0:
                if len(buf) > _MAX_HEAD:
                    raise AnswerError("a chunk header or trailer is too large")
                break
            line, buf = buf[:end], buf[end + 2:]
            if in_trailers:
                if not line:
                    return
                continue
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise AnswerError(f"an invalid chunk size: {line[:40]!r}") from None
            if size == 0:
                in_trailers = True
            else:
                need = size + 2
                take = min(need, len(buf))
                need -= take
                buf = buf[take:]
        chunk = reader.recv()
        if not chunk:
            raise AnswerError("the connection closed before the chunked body was complete")
        buf += chunk


def post_within(
    url: str,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    *,
    monotonic: Callable[[], float] = time.monotonic,
    ssl_context: Optional[ssl.SSLContext] = None,
) -> int:
    """POST ``body`` to ``url`` and return the answer's status once the whole answer is in.

    Raises ``DeadlineExceeded`` when connecting, sending and reading the complete answer take
    longer than ``timeout`` seconds together; ``AnswerError`` for a broken answer; ``OSError``
    (``ssl.SSLError`` included) when the connection fails.
    """
    parts = urlsplit(url)
    host = parts.hostname
    if parts.scheme not in ("http", "https") or not host:
        raise AnswerError(f"not an http(s) URL: {url[:80]!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    deadline = monotonic() + timeout

    def left(what: str) -> float:
        seconds = deadline - monotonic()
        if seconds <= 0:
            raise DeadlineExceeded(f"{what} by the deadline")
        return seconds

    try:
        sock = socket.create_connection((host, port), timeout=left("no connection"))
    except socket.timeout:
        raise DeadlineExceeded("no connection by the deadline") from None
    try:
        if parts.scheme == "https":
            context = ssl_context or ssl.create_default_context()
            sock.settimeout(left("no TLS handshake"))
            sock = context.wrap_socket(sock, server_hostname=host)
        # As an HTTP client would: non-ASCII, spaces and control characters percent-encoded (a
        # CR or LF in the URL must not start a header of its own), the host in IDNA.
        target = quote((parts.path or "/") + (f"?{parts.query}" if parts.query else ""), safe=_URL_SAFE)
        netloc = parts.netloc.rpartition("@")[2]
        if not netloc.isascii():
            netloc = netloc.replace(host, host.encode("idna").decode("ascii"))
        head = [f"POST {target} HTTP/1.1", f"Host: {netloc}", f"Content-Length: {len(body)}",
                "Connection: close"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        sock.settimeout(left("the request was not sent"))
        try:
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        except socket.timeout:
            raise DeadlineExceeded("the request was not sent by the deadline") from None
        reader = _Reader(sock, deadline, monotonic)
        status, answer_headers, rest = _head(reader, b"")
        _body_complete(reader, status, answer_headers, rest)
        # The last read may have waited right up to the deadline and brought the end after it.
        left("the answer was not complete")
        return status
    finally:
        sock.close()
