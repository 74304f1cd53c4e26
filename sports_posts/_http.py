"""The HTTP stack: every type the SDK takes from its HTTP library, named once.

The rest of the package imports clients, requests, responses, timeouts and transport
exceptions from here and never names the library itself, so the library the SDK runs
on is decided in this one module.
"""

from __future__ import annotations

import contextlib
import contextvars
import ssl
from collections.abc import Iterable, Iterator
from typing import Any, Callable, Optional

import httpcore
import httpx
from httpx import (
    URL,
    AsyncClient,
    Client,
    Headers,
    HTTPError,
    InvalidURL,
    ReadTimeout,
    Request,
    Response,
    ResponseNotRead,
    Timeout,
    TimeoutException,
)

__all__ = [
    "LIBRARY_USER_AGENT",
    "URL",
    "AsyncClient",
    "Client",
    "HTTPError",
    "Headers",
    "InvalidURL",
    "ReadTimeout",
    "Request",
    "Response",
    "ResponseNotRead",
    "Timeout",
    "TimeoutException",
    "deadline",
    "deadline_client",
    "stack_version",
]

LIBRARY_USER_AGENT = f"python-httpx/{httpx.__version__}"
"""The User-Agent every httpx client carries unless its owner set another one."""


def stack_version() -> str:
    """``name/version`` of the HTTP library, for the User-Agent."""
    return f"httpx/{httpx.__version__}"


# A deadline for a whole synchronous request. httpcore gives each socket read its own
# timeout, so a server trickling its headers a byte at a time under the read timeout
# would hold a sync request for ever; the streams of the SDK's own pool shrink every
# connect, read and write to the time left before the deadline of the current request.
# (The async client needs none of this: one cancel scope covers the whole request.)

_DEADLINE: contextvars.ContextVar[Optional[tuple[float, Callable[[], float]]]] = contextvars.ContextVar(
    "sports_posts_deadline", default=None
)


@contextlib.contextmanager
def deadline(at: Optional[float], clock: Callable[[], float]) -> Iterator[None]:
    """Within this block, the SDK's sync streams finish every step before ``at``."""
    token = _DEADLINE.set(None if at is None else (at, clock))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _left(timeout: Optional[float], error: type[Exception]) -> Optional[float]:
    current = _DEADLINE.get()
    if current is None:
        return timeout
    at, clock = current
    left = at - clock()
    if left <= 0:
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every step ends by the current request's deadline."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: Optional[float] = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: Optional[float] = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: Optional[str] = None, timeout: Optional[float] = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(
            self._stream.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout))
        )

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's backend with ``_DeadlineStream`` streams."""

    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: Optional[float] = None,
        local_address: Optional[str] = None,
        socket_options: Optional[Iterable[Any]] = None,
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(
            host, port, _left(timeout, httpcore.ConnectTimeout), local_address, socket_options
        )
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: Optional[float] = None, socket_options: Optional[Iterable[Any]] = None
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout), socket_options)
        return _DeadlineStream(stream)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def deadline_client() -> Client:
    """The SDK's own sync pool, whose streams keep ``deadline``. httpx does not take
    a network backend, so the one of its transport's pool is wrapped in place; an httpx
    without that attribute gets a plain pool (each read still has its own timeout)."""
    transport = httpx.HTTPTransport()
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(backend, httpcore.NetworkBackend):
        pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]
    return Client(transport=transport, follow_redirects=False)
