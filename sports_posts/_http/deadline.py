"""The deadline of a whole synchronous request, kept by the SDK's own sync pool.

httpcore gives each socket read its own timeout, so a server trickling its headers a byte
at a time under the read timeout would hold a sync request for ever. The SDK's sync pool
sends through ``DeadlineTransport``: the library's transport shape over httpcore's public
``ConnectionPool``, whose network backend shrinks every connect, read and write to the time
left before the deadline of the current request (``deadline``). Proxies are mounted as the
library mounts its own (``environment_proxies``). The async client needs none of this: one
cancel scope covers the whole request.
"""

from __future__ import annotations

import contextvars
import functools
import ipaddress
import ssl
import urllib.request
from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Optional, cast

import httpx
from httpx import Request, Response

if TYPE_CHECKING:
    from httpcore import NetworkBackend as _NetworkBackend
    from httpcore import NetworkStream as _NetworkStream
else:  # duck-typed at run time: httpcore loads with the first pool, as httpx itself does
    _NetworkBackend = _NetworkStream = object

__all__ = ["DeadlineTransport", "deadline", "deadline_transport", "environment_proxies"]

_DEADLINE: contextvars.ContextVar[Optional[tuple[float, Callable[[], float]]]] = contextvars.ContextVar(
    "sports_posts_deadline", default=None
)


class deadline:  # a function to its callers: ``with deadline(at, clock):``
    """Within this block, the SDK's sync streams finish every step before ``at``.

    A class, not ``contextlib.contextmanager``: it is entered on every call."""

    __slots__ = ("_at", "_token")

    def __init__(self, at: Optional[float], clock: Callable[[], float]) -> None:
        self._at = None if at is None else (at, clock)

    def __enter__(self) -> None:
        self._token = _DEADLINE.set(self._at)

    def __exit__(self, *exc_info: object) -> None:
        _DEADLINE.reset(self._token)


def _left(timeout: Optional[float], error: type[Exception]) -> Optional[float]:
    current = _DEADLINE.get()
    if current is None:
        return timeout
    at, clock = current
    left = at - clock()
    if left <= 0:
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(_NetworkStream):
    """A socket stream whose every step ends by the current request's deadline.

    ``core`` is the stack's httpcore (httpcore or httpcore2): its timeouts are raised, so
    the stack's own client maps them to its timeout errors."""

    def __init__(self, stream: _NetworkStream, core: ModuleType) -> None:
        self._stream = stream
        self._core = core

    def read(self, max_bytes: int, timeout: Optional[float] = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, self._core.ReadTimeout))

    def write(self, buffer: bytes, timeout: Optional[float] = None) -> None:
        self._stream.write(buffer, _left(timeout, self._core.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: Optional[str] = None, timeout: Optional[float] = None
    ) -> _NetworkStream:
        return _DeadlineStream(
            self._stream.start_tls(ssl_context, server_hostname, _left(timeout, self._core.ConnectTimeout)),
            self._core,
        )

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(_NetworkBackend):
    """httpcore's backend with ``_DeadlineStream`` streams."""

    def __init__(self, backend: _NetworkBackend, core: ModuleType) -> None:
        self._backend = backend
        self._core = core

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: Optional[float] = None,
        local_address: Optional[str] = None,
        socket_options: Optional[Iterable[Any]] = None,
    ) -> _NetworkStream:
        stream = self._backend.connect_tcp(
            host, port, _left(timeout, self._core.ConnectTimeout), local_address, socket_options
        )
        return _DeadlineStream(stream, self._core)

    def connect_unix_socket(
        self, path: str, timeout: Optional[float] = None, socket_options: Optional[Iterable[Any]] = None
    ) -> _NetworkStream:
        stream = self._backend.connect_unix_socket(path, _left(timeout, self._core.ConnectTimeout), socket_options)
        return _DeadlineStream(stream, self._core)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _CoreStream(httpx.SyncByteStream):
    """The body of an httpcore answer as the library's stream, its errors the library's."""

    def __init__(self, stream: Iterable[bytes], errors: _ErrorMap) -> None:
        self._stream = stream
        self._errors = errors

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._stream
        except Exception as exc:
            raise self._errors.mapped(exc) from exc

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


class _ErrorMap:
    """httpcore's errors to the library's, the most specific match, as the library maps
    them (its own transport does the same with the same public names)."""

    NAMES = ("TimeoutException", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout", "NetworkError",
             "ConnectError", "ReadError", "WriteError", "ProxyError", "UnsupportedProtocol", "ProtocolError",
             "LocalProtocolError", "RemoteProtocolError")

    def __init__(self, lib: ModuleType, core: ModuleType) -> None:
        self._pairs = [(getattr(core, name), getattr(lib, name)) for name in self.NAMES]

    def mapped(self, exc: Exception) -> Exception:
        found: Optional[type[Exception]] = None
        for core_error, error in self._pairs:
            if isinstance(exc, core_error) and (found is None or issubclass(error, found)):
                found = error
        return exc if found is None else found(str(exc))


class DeadlineTransport(httpx.BaseTransport):
    """A transport of the library's shape over an httpcore pool (direct, or through one
    proxy) whose network backend is ``_DeadlineBackend``: every connect, read and write of
    a sync call ends by that call's deadline. Built from httpcore's public pool, as the
    library's ``HTTPTransport`` builds its own, since that one takes no network backend."""

    def __init__(self, lib: ModuleType, core: ModuleType, pool: Any) -> None:
        self._core = core
        self._response = lib.Response
        self._pool = pool
        self._stream = _stream_class(lib)
        self._errors = _ErrorMap(lib, core)

    def handle_request(self, request: Request) -> Response:
        url = request.url
        core = self._core
        sent = core.Request(
            method=request.method,
            url=core.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions,
        )
        try:
            answer = self._pool.handle_request(sent)
        except Exception as exc:
            raise self._errors.mapped(exc) from exc
        return cast(Response, self._response(status_code=answer.status, headers=answer.headers,
                                             stream=self._stream(answer.stream, self._errors),
                                             extensions=answer.extensions))

    def close(self) -> None:
        self._pool.close()


@functools.cache
def _stream_class(lib: ModuleType) -> type[_CoreStream]:
    """``_CoreStream`` as a stream of the library ``lib`` (its client checks the type)."""
    if lib is httpx:
        return _CoreStream
    return cast("type[_CoreStream]", type("_CoreStream", (_CoreStream, cast(Any, lib).SyncByteStream), {}))


def deadline_transport(lib: ModuleType, core: ModuleType, context: ssl.SSLContext, limits: Any,
                       proxy: Any = None, **options: Any) -> DeadlineTransport:
    """A ``DeadlineTransport`` connecting directly, or through ``proxy`` (a URL or the
    library's ``Proxy``; http, https, socks5 or socks5h, as the library takes)."""
    through = None
    if proxy is not None:
        proxy = proxy if isinstance(proxy, cast(Any, lib).Proxy) else cast(Any, lib).Proxy(url=proxy)
        if proxy.url.scheme not in ("http", "https", "socks5", "socks5h"):
            raise ValueError(
                "Proxy protocol must be either 'http', 'https', 'socks5', or 'socks5h',"
                f" but got {proxy.url.scheme!r}."
            )
        through = core.Proxy(
            url=core.URL(scheme=proxy.url.raw_scheme, host=proxy.url.raw_host, port=proxy.url.port,
                         target=proxy.url.raw_path),
            auth=proxy.raw_auth, headers=proxy.headers.raw, ssl_context=proxy.ssl_context,
        )
    pool = core.ConnectionPool(
        ssl_context=context, proxy=through, max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
        network_backend=_DeadlineBackend(core.SyncBackend(), core), **options,
    )
    return DeadlineTransport(lib, core, pool)


def environment_proxies(lib: ModuleType) -> dict[str, Optional[str]]:
    """The proxies the environment names (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``,
    ``NO_PROXY``, read by the standard library's ``getproxies``, as the library reads them)
    as the library's mount patterns: a proxy URL, or ``None`` for a host reached directly.

    ``NO_PROXY`` is read as curl and the library document it: ``*`` for every host,
    ``example.com`` for it and its subdomains, ``.example.com`` or ``*.example.com`` for its
    subdomains only, an IP address or ``localhost`` for that host; an entry that is not a
    valid pattern (a subnet, a typo) is left out, as curl and Go leave it.
    """
    found = urllib.request.getproxies()
    mounts: dict[str, Optional[str]] = {}
    for scheme in ("http", "https", "all"):
        url = found.get(scheme)
        if url:
            mounts[f"{scheme}://"] = url if "://" in url else f"http://{url}"
    for host in (entry.strip() for entry in found.get("no", "").split(",")):
        if host == "*":
            return {}
        if not host:
            continue
        if "://" in host:
            pattern = host
        elif host.lower() == "localhost" or host.startswith(("[", "*.")) or _address(host) == 4:
            pattern = f"all://{host}"
        elif _address(host) == 6:
            pattern = f"all://[{host}]"
        else:  # example.com: it and its subdomains; .example.com: its subdomains
            pattern = f"all://*{host}"
        if "/" in pattern.partition("://")[2] or not _valid_pattern(lib, pattern):
            continue
        mounts[pattern] = None
    return mounts


def _address(host: str) -> int:
    """4 or 6 for an IP address of that version, else 0."""
    try:
        return ipaddress.ip_address(host).version
    except ValueError:
        return 0


def _valid_pattern(lib: Any, pattern: str) -> bool:
    """Whether the library takes ``pattern`` as a mount (its host parses as a URL's)."""
    try:
        lib.URL(pattern.replace("://*", "://x", 1))
    except (lib.InvalidURL, ValueError):
        return False
    return True
