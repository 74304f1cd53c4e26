"""uvicorn as the sandbox runs it: one configuration, shared with the sandbox's benchmark baseline.

A request line or header block that h11 cannot parse never reaches the application, so
uvicorn answers it itself, in plain text; the protocol below answers it with the spec's
JSON error body instead, like every other 400 of the service.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .errors import error_body

__all__ = ["JsonErrorH11Protocol", "start_server", "uvicorn_config"]


class JsonErrorH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, except that an unparsable request gets a JSON 400 (spec 2.5)."""

    def send_400_response(self, msg: str) -> None:
        body = json.dumps(error_body("INVALID_PARAMETER", f"Malformed HTTP request: {msg}")).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()


def uvicorn_config(app: Any) -> uvicorn.Config:
    """The uvicorn settings of a sandbox server: h11 with JSON 400s, no lifespan, quiet, quick to stop.

    No ``Date`` header from uvicorn: it would state the machine's time, and the sandbox's
    answers state the sandbox clock's (``app._dated``), as the service's state its own.
    """
    return uvicorn.Config(
        app, lifespan="off", log_level="warning", access_log=False, http=JsonErrorH11Protocol,
        ws="none", timeout_graceful_shutdown=1, date_header=False,
    )


def start_server(app: Any, host: str, port: int) -> tuple[uvicorn.Server, threading.Thread, int]:
    """uvicorn serving ``app`` on ``host:port`` (0: a free port) in a daemon thread, once it listens.

    Returns the server (set ``should_exit`` to stop it), its thread and the port.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit TCP_NODELAY: without it Nagle's algorithm and the client's
    # delayed ACK hold back each answer's last segment.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    bound = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn_config(app))
    started = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # surfaced below
            failure.append(exc)
        finally:
            started.set()
            sock.close()

    thread = threading.Thread(target=run, name=f"sandbox-{bound}", daemon=True)
    thread.start()
    while not started.wait(0.005):
        if server.started:
            break
    if failure or not server.started:
        raise RuntimeError("the sandbox server failed to start") from (failure[0] if failure else None)
    return server, thread, bound
