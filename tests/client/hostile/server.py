"""A raw loopback socket server that answers with scripted bytes: what respx cannot do
(a gzip bomb, a body that never ends, headers trickled a byte at a time, a server that
echoes the request's secrets back)."""

from __future__ import annotations

import socket
import struct
import threading
import zlib
from collections.abc import Iterator
from types import TracebackType
from typing import Callable, Optional

Script = Callable[["Connection"], None]


class Connection:
    """One accepted connection: the request head that came in, and ways to answer.

    ``number`` counts connections in the order they were accepted, from 0: a script that
    answers the first one otherwise must not count its own calls, since a loaded machine
    can run a later connection's script before an earlier one's."""

    def __init__(self, sock: socket.socket, head: bytes, stopped: threading.Event, number: int = 0) -> None:
        self.sock = sock
        self.head = head
        self.stopped = stopped
        self.number = number

    def header(self, name: str) -> str:
        """A request header's value ("" when absent)."""
        for line in self.head.decode("latin-1").split("\r\n")[1:]:
            key, _, value = line.partition(":")
            if key.strip().lower() == name.lower():
                return value.strip()
        return ""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def trickle(self, data: bytes, interval: float) -> None:
        """One byte every ``interval`` seconds (a real wait: this is the hostile server's
        behaviour under test, and it ends as soon as the server is stopped)."""
        for i in range(len(data)):
            if self.stopped.wait(interval):
                return
            self.sock.sendall(data[i : i + 1])

    def send_chunked(self, chunks: Iterator[bytes]) -> None:
        """A chunked body from ``chunks``, for as long as the client keeps reading."""
        for chunk in chunks:
            if self.stopped.is_set():
                return
            self.sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.sock.sendall(b"0\r\n\r\n")


def head(status: str = "200 OK", headers: Optional[dict[str, str]] = None) -> bytes:
    """A response head; it says ``Connection: close`` (unless ``headers`` name a Connection),
    since the server answers one request per connection: a client that kept the connection
    for a retry could send on it as the server closes it and read a reset instead."""
    headers = dict(headers or {})
    if not any(k.lower() == "connection" for k in headers):
        headers["Connection"] = "close"
    lines = [f"HTTP/1.1 {status}"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class ScriptedServer:
    """``with ScriptedServer(script) as server:`` serves ``server.base_url`` on a free
    127.0.0.1 port; each connection runs ``script`` after its request head is read."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.stopped = threading.Event()
        self.heads: list[bytes] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._listener.settimeout(0.05)
        self.port = int(self._listener.getsockname()[1])
        self._threads: list[threading.Thread] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> ScriptedServer:
        accept = threading.Thread(target=self._accept, daemon=True)
        accept.start()
        self._threads.append(accept)
        return self

    def __exit__(
        self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        self.stopped.set()
        for thread in list(self._threads):
            thread.join(timeout=5)
        self._listener.close()

    def _accept(self) -> None:
        accepted = 0
        while not self.stopped.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:  # the poll interval of the accept loop
                continue
            thread = threading.Thread(target=self._serve, args=(sock, accepted), daemon=True)
            accepted += 1
            thread.start()
            self._threads.append(thread)

    def _serve(self, sock: socket.socket, number: int) -> None:
        with sock:
            sock.settimeout(10)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    more = sock.recv(65536)
                    if not more:
                        return
                    data += more
                request_head = data.split(b"\r\n\r\n", 1)[0]
                self.heads.append(request_head)
                self.script(Connection(sock, request_head, self.stopped, number))
            except OSError:  # the client hung up: what a bounded client does
                return


def gzip_of_zeros(total: int, segment: int = 1 << 20) -> bytes:
    """A valid gzip stream of ``total`` zero bytes, built without compressing them all.

    After a sync flush the compressor's state repeats, so the bytes of one segment of
    zeros stand for every later one; the trailer's CRC-32 and size are computed."""
    assert total % segment == 0 and total >= 2 * segment
    zeros = bytes(segment)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_SYNC_FLUSH)
    repeat = compressor.compress(zeros) + compressor.flush(zlib.Z_SYNC_FLUSH)
    crc = 0
    for _ in range(total // segment):
        crc = zlib.crc32(zeros, crc)
    final_empty_block = b"\x03\x00"  # BFINAL=1, fixed Huffman, end of block
    trailer = struct.pack("<II", crc, total & 0xFFFFFFFF)
    return first + repeat * (total // segment - 1) + final_empty_block + trailer
