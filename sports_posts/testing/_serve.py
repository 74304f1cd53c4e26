"""An ASGI app served by uvicorn on a free 127.0.0.1 port, in a thread, for a ``with`` block.

Webhook deliveries are real HTTP POSTs: to send one to a customer's receiver app (the
pytest plugin) or to the demo's receiver, the app has to listen somewhere.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from typing_extensions import Literal

from .._errors import SportsPostsError

__all__ = ["serve_asgi"]


@contextlib.contextmanager
def serve_asgi(
    app: Any, *, lifespan: Literal["auto", "on", "off"] = "auto", startup_timeout: float = 10.0
) -> Iterator[str]:
    """Serve ``app`` for the block; yields its root URL, ``http://127.0.0.1:<port>``.

    ``lifespan="auto"`` runs a FastAPI/Starlette app's startup and shutdown as a real server
    would; ``"off"`` skips them.
    """
    try:
        import uvicorn
    except ImportError:
        raise SportsPostsError("serving an ASGI app needs uvicorn: pip install 'sports-posts[sandbox]'") from None
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, lifespan=lifespan, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=f"asgi-{port}", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + startup_timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise SportsPostsError(f"the ASGI app {app!r} did not start serving on port {port}")
            time.sleep(0.005)  # a bounded wait for the server thread's readiness
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()
