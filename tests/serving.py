"""A standard-library server (``http.server``, ``wsgiref``) answering on a thread for a test."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def serving(server: socketserver.TCPServer) -> Iterator[int]:
    """``server`` serving on a daemon thread while the block runs; its port. It is shut down
    and closed on the way out."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
