"""An ASGI app (served by uvicorn) or a WSGI app (by the standard library's WSGI server) on a
free 127.0.0.1 port, in a thread, for a ``with`` block.

Webhook deliveries are real HTTP POSTs: to send one to a customer's receiver app (the
pytest plugin) or to the demo's receiver, the app has to listen somewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import socket
import threading
import time
from collections.abc import Awaitable, Iterable, Iterator, MutableMapping
from typing import Any, Callable, Union, cast
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from typing_extensions import Literal

from .._errors import SportsPostsError

__all__ = ["ASGIApp", "WSGIApp", "is_wsgi", "serve_app", "serve_asgi", "serve_wsgi"]

# The ASGI and WSGI specifications' own shapes. Their scope, messages and environ are open
# dicts that each framework types its own way (Starlette: MutableMapping[str, Any]; asgiref:
# TypedDicts; typeshed's WSGIEnvironment: dict[str, Any]), and typeshed's start_response is
# a protocol that returns a writer: `Any` there is what lets every framework's app match.
ASGIApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[MutableMapping[str, Any]]],
        Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ],
    Awaitable[None],
]
"""An ASGI 3 app, ``await app(scope, receive, send)``: FastAPI, Starlette, Django's ASGI handler."""
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
"""A WSGI app, ``app(environ, start_response)``: Flask, Django's ``get_wsgi_application()``."""


@contextlib.contextmanager
def serve_asgi(
    app: ASGIApp, *, lifespan: Literal["auto", "on", "off"] = "auto", startup_timeout: float = 10.0
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


def is_wsgi(app: Any) -> bool:
    """Whether ``app`` is a WSGI app (Flask, Django's ``get_wsgi_application()``, any
    ``app(environ, start_response)``) rather than an ASGI one.

    An ASGI 3 app is a coroutine function of ``(scope, receive, send)``, or an object whose
    ``__call__`` is one (Starlette, FastAPI, Django's ASGI handler); a WSGI app is a plain
    callable of two positional parameters."""
    if not callable(app) or inspect.isclass(app):
        return False
    call = app if inspect.isfunction(app) or inspect.ismethod(app) else type(app).__call__.__get__(app)
    if asyncio.iscoroutinefunction(call) or asyncio.iscoroutinefunction(app):
        return False
    try:
        parameters = list(inspect.signature(call).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: leave it to uvicorn
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    takes_two = len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters)
    return takes_two and len(required) <= 2  # (environ, start_response); ASGI 2 takes (scope)


class _ThreadingWSGIServer(WSGIServer):
    """The standard library's WSGI server, one thread per request (a slow handler does not
    hold up the sandbox's retries), its threads not kept alive at exit."""

    daemon_threads = True

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(target=self._serve_one, args=(request, client_address), daemon=True)
        thread.start()

    def _serve_one(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)


class _QuietHandler(WSGIRequestHandler):
    """No access line on stderr per request (the test's output stays the test's)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve_wsgi(app: WSGIApp) -> Iterator[str]:
    """Serve the WSGI ``app`` (Flask, Django, ...) for the block; yields its root URL,
    ``http://127.0.0.1:<port>``."""
    server = _ThreadingWSGIServer(("127.0.0.1", 0), _QuietHandler)
    server.set_app(app)
    port = int(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name=f"wsgi-{port}", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"  # listening since the constructor bound the socket
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def serve_app(app: Union[ASGIApp, WSGIApp]) -> contextlib.AbstractContextManager[str]:
    """``serve_wsgi`` for a WSGI app, ``serve_asgi`` for any other."""
    if is_wsgi(app):
        return serve_wsgi(cast("WSGIApp", app))
    return serve_asgi(cast("ASGIApp", app))
