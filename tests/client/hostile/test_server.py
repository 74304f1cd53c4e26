"""The scripted server itself: a script can tell connections apart by the order they came in,
whichever of their threads runs first."""

from __future__ import annotations

import socket
import threading

from .server import Connection, ScriptedServer


class _FirstThreadLate(ScriptedServer):
    """The first connection's thread waits until a later connection's script has run: what a
    loaded machine may do to any thread."""

    def __init__(self) -> None:
        self.later_ran = threading.Event()
        self.order: list[int] = []
        super().__init__(self._record)

    def _record(self, conn: Connection) -> None:
        self.order.append(conn.number)
        if conn.number > 0:
            self.later_ran.set()
        conn.send(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")

    def _serve(self, sock: socket.socket, number: int) -> None:
        if number == 0:
            assert self.later_ran.wait(10), "the second connection's script never ran"
        super()._serve(sock, number)


def test_connections_are_numbered_in_accept_order_when_their_scripts_run_out_of_order() -> None:
    server = _FirstThreadLate()
    with server:
        first = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        first.sendall(b"GET /v1/first HTTP/1.1\r\nHost: x\r\n\r\n")
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as second:
            second.sendall(b"GET /v1/second HTTP/1.1\r\nHost: x\r\n\r\n")
            assert second.recv(64).startswith(b"HTTP/1.1 204")
        with first:
            assert first.recv(64).startswith(b"HTTP/1.1 204")
    assert server.order == [1, 0]  # the later connection's script ran first, and knew it was later
    assert [h.split(b" ")[1] for h in server.heads] == [b"/v1/second", b"/v1/first"]
