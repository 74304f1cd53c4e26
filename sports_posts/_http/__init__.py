"""The HTTP stack: every type the SDK takes from its HTTP library, named once.

The SDK runs on httpx or on its maintained fork httpx2 (the same API under the module name
``httpx2``). The rest of the package names neither library: it imports the types below for
annotations (httpx's, which httpx2 mirrors), and takes the classes a client really uses
from that client's ``Stack``.

Which stack: the one of an injected ``http_client``; otherwise the one named by
``SPORTS_POSTS_HTTP_STACK`` (``httpx`` or ``httpx2``); otherwise httpx. What is installed
never changes it: respx (which patches httpx only) keeps mocking a default client.
"""

from __future__ import annotations

import functools
import http.cookiejar
import importlib
import inspect
import os
import re
import ssl
import threading
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Generic, Optional, TypeVar, Union, cast

import httpx
from httpx import (
    URL,
    AsyncClient,
    Client,
    Headers,
    HTTPError,
    InvalidURL,
    QueryParams,
    ReadTimeout,
    Request,
    Response,
    Timeout,
    TimeoutException,
)

from .._errors import HTTPClientScopeError, ParameterError, SportsPostsError
from .._scoped import PerLoop, generation
from .deadline import DeadlineTransport, deadline, deadline_transport, environment_proxies

__all__ = [
    "ENV_VAR",
    "FORK_FIX",
    "LOOP_FIX",
    "GivenClient",
    "LoopPool",
    "closing",
    "pool_maker",
    "LIBRARY_USER_AGENT",
    "STACKS",
    "Stack",
    "default_stack",
    "is_timeout",
    "load_stack",
    "own_pool",
    "shared_ssl_context",
    "stack_of",
    "URL",
    "AsyncClient",
    "Client",
    "HTTPError",
    "Headers",
    "InvalidURL",
    "QueryParams",
    "ReadTimeout",
    "Request",
    "Response",
    "Stack",
    "Timeout",
    "TimeoutException",
    "PLAIN_QUERY",
    "deadline",
    "NoCookies",
    "deadline_client",
    "library_request",
    "stack_version",
]

LIBRARY_USER_AGENT = f"python-httpx/{httpx.__version__}"
"""The User-Agent every httpx client carries unless its owner set another one."""


def stack_version() -> str:
    """``name/version`` of httpx, for the User-Agent."""
    return f"httpx/{httpx.__version__}"


STACKS = ("httpx", "httpx2")
"""The HTTP libraries the SDK runs on, by module name."""
ENV_VAR = "SPORTS_POSTS_HTTP_STACK"


@dataclass(frozen=True)
class Stack:
    """One HTTP library's classes, as the SDK uses them (``core``: its httpcore)."""

    name: str
    version: str
    module: ModuleType
    core: ModuleType
    Client: type[Client]
    AsyncClient: type[AsyncClient]
    HTTPError: type[HTTPError]
    TimeoutException: type[TimeoutException]

    @property
    def user_agent(self) -> str:
        """``name/version``, for the SDK's User-Agent."""
        return f"{self.name}/{self.version}"

    @property
    def library_user_agent(self) -> str:
        """The User-Agent the library's clients carry unless their owner set another."""
        return f"python-{self.name}/{self.version}"

    def __repr__(self) -> str:
        return f"Stack({self.name} {self.version})"


@functools.cache
def load_stack(name: str) -> Stack:
    """The stack of the library ``name`` (``"httpx"`` or ``"httpx2"``)."""

    if name not in STACKS:
        raise ParameterError(f"{ENV_VAR} must be one of {', '.join(STACKS)}, got {name!r}", parameter=ENV_VAR)
    try:
        module: Any = importlib.import_module(name)
        core = importlib.import_module("httpcore" if name == "httpx" else "httpcore2")
    except ImportError:
        extra = " (pip install 'sports-posts[httpx2]')" if name == "httpx2" else ""
        raise SportsPostsError(f"the HTTP library {name} is not installed{extra}") from None
    return Stack(
        name=name,
        version=str(module.__version__),
        module=module,
        core=core,
        Client=cast("type[Client]", module.Client),
        AsyncClient=cast("type[AsyncClient]", module.AsyncClient),
        HTTPError=cast("type[HTTPError]", module.HTTPError),
        TimeoutException=cast("type[TimeoutException]", module.TimeoutException),
    )


def default_stack() -> Stack:
    """The stack of a client made without ``http_client``: the environment's choice, else
    httpx, whether or not httpx2 is installed (an installed package must not change what
    the SDK sends through, nor what a respx-based test mocks)."""

    chosen = os.environ.get(ENV_VAR, "").strip().lower()
    return load_stack(chosen or "httpx")


def stack_of(http_client: object) -> Stack:
    """The stack an injected client belongs to; a client of neither library is refused."""

    root = type(http_client).__module__.split(".")[0]
    if root not in STACKS:
        raise ParameterError(
            f"http_client must be an httpx or httpx2 client, got {type(http_client).__qualname__}",
            parameter="http_client",
        )
    return load_stack(root)


def is_timeout(value: object) -> bool:
    """Whether ``value`` is a ``Timeout`` of either stack (a caller may mix them)."""
    kind = type(value)
    return kind.__name__ == "Timeout" and kind.__module__.split(".")[0] in STACKS


class NoCookies(http.cookiejar.CookieJar):
    """The cookie jar of the SDK's own pools: it keeps nothing. The service sets no
    cookie, so one in an answer is an echo at best (a server that put the key in a
    ``Set-Cookie`` would otherwise have it sent back on every later request)."""

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        return None

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None


_Pool = TypeVar("_Pool", Client, AsyncClient)

_SSL_CONTEXTS: dict[tuple[str, bool, Optional[str], Optional[str]], ssl.SSLContext] = {}
_SSL_LOCK = threading.Lock()


def shared_ssl_context(stack: Stack, *, trust_env: bool) -> ssl.SSLContext:
    """The certificate store of the SDK's own pools: the one ``stack`` makes by default
    (its ``create_ssl_context``), made once per library and setting instead of once per
    client, since loading a CA bundle is most of what making a client costs.

    When the environment is trusted, ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` are read as
    the library reads them, on every client: naming another bundle makes another context.
    The SDK's pools all ask for HTTP/1.1 (the one setting httpcore writes on a context), and
    an ``ssl.SSLContext`` is safe to share between connections and threads.
    """
    environ = os.environ
    key = (
        stack.name,
        trust_env,
        environ.get("SSL_CERT_FILE") if trust_env else None,
        environ.get("SSL_CERT_DIR") if trust_env else None,
    )
    context = _SSL_CONTEXTS.get(key)
    if context is None:
        with _SSL_LOCK:  # two threads making the first clients load the bundle once
            context = _SSL_CONTEXTS.get(key)
            if context is None:
                context = _SSL_CONTEXTS[key] = stack.module.create_ssl_context(trust_env=trust_env)
    return context


def own_pool(kind: type[_Pool], stack: Stack, *, trust_env: bool, verify: Optional[ssl.SSLContext] = None,
             **options: Any) -> _Pool:
    """A pool of the SDK's own (``kind``: the stack's ``Client`` or ``AsyncClient``): no
    redirects followed by the library, no cookies kept, the shared certificate store (or
    ``verify``: the one a client chose when it was made, for the pools it makes later in a
    forked child or another event loop); ``options``: the library's own, for a caller's
    ``default_http_client`` (``limits``, ``http2``, ``proxy``...)."""
    return kind(**{
        **_own_defaults(trust_env),
        "verify": shared_ssl_context(stack, trust_env=trust_env) if verify is None else verify,
        **options,
    })


def _own_defaults(trust_env: bool) -> dict[str, Any]:
    """What every pool of the SDK's own is made with: no redirects followed by the
    library, no cookies kept, the environment trusted or not."""
    return {"follow_redirects": False, "trust_env": trust_env, "cookies": NoCookies()}


def deadline_client(stack: Stack, *, trust_env: bool = True, verify: Any = None, **options: Any) -> Client:
    """The SDK's own sync pool, whose streams keep ``deadline``.

    The library's ``Client`` with a transport of the SDK's (``_DeadlineTransport``) for
    direct requests and one per proxy, mounted as the library mounts its own: the
    ``proxy=`` given, else (when ``trust_env``) the environment's (``environment_proxies``),
    then any ``mounts=`` given on top (those transports are used as they were made). The
    transport options (``verify``, ``cert``, ``http1``, ``http2``, ``limits``) go to the
    SDK's transports; the rest to the ``Client``. A ``transport=`` given replaces the SDK's:
    the pool is then the library's own (each read keeps its own timeout).
    """
    if "transport" in options:
        return own_pool(stack.Client, stack, trust_env=trust_env, verify=verify, **options)
    lib: Any = stack.module
    cert = options.pop("cert", None)
    http1, http2 = bool(options.pop("http1", True)), bool(options.pop("http2", False))
    limits = options.pop("limits", None) or _client_default(stack, "limits")
    proxy = options.pop("proxy", None)
    mounts = options.pop("mounts", None) or {}
    if isinstance(verify, ssl.SSLContext) and cert is None:
        context = verify
    elif verify is None and cert is None and not http2:
        context = shared_ssl_context(stack, trust_env=trust_env)
    else:  # HTTP/2 sets its protocols on the context: one of its own, not the shared store
        context = lib.create_ssl_context(verify=True if verify is None else verify, cert=cert, trust_env=trust_env)

    def transport(through: Optional[Any] = None) -> DeadlineTransport:
        return deadline_transport(stack.module, stack.core, context, limits, through, http1=http1, http2=http2)

    proxies: dict[str, Optional[Any]] = {"all://": proxy} if proxy is not None else (
        environment_proxies(stack.module) if trust_env else {}
    )
    routes: dict[str, Any] = {pattern: None if url is None else transport(url) for pattern, url in proxies.items()}
    return stack.Client(**{**_own_defaults(trust_env), "transport": transport(), "mounts": {**routes, **mounts},
                           **options})


def _client_default(stack: Stack, name: str) -> Any:
    """The default the library's ``Client`` documents for the option ``name``."""
    return inspect.signature(stack.Client).parameters[name].default


def default_http_client(**options: Any) -> Client:
    """An HTTP client with the SDK's defaults (no cookies kept, no redirects followed by the
    library, the shared certificate store, every read within the call's deadline) and your
    ``httpx.Client`` options on top (``limits=``, ``http2=True``, ``proxy=``, ``mounts=``,
    ``verify=``, ...): pass it as ``http_client=`` to tune the transport and keep the rest,
    as openai's ``DefaultHttpxClient``. On the httpx2 stack (``SPORTS_POSTS_HTTP_STACK``) an
    ``httpx2.Client``."""
    stack = default_stack()
    return deadline_client(stack, trust_env=bool(options.pop("trust_env", True)), **options)


def default_async_http_client(**options: Any) -> AsyncClient:
    """``default_http_client`` for ``AsyncSportsPosts``: an ``httpx.AsyncClient``."""
    stack = default_stack()
    client: AsyncClient = own_pool(stack.AsyncClient, stack, trust_env=bool(options.pop("trust_env", True)), **options)
    return client


# ---------------------------------------------------------------------------------------
# Whose pool: the SDK's own are made again per process and per event loop (_scoped); a
# client the caller gave is used where it can serve, and refused with the fix elsewhere

FORK_FIX = (
    "make the client and its http_client in each process after the fork (gunicorn: in the "
    "worker, e.g. post_fork or on first use; Celery: on worker_process_init), or leave "
    "http_client out: the SDK's own pool is made again in each process"
)
LOOP_FIX = (
    "make the AsyncSportsPosts and its http_client on the loop that uses them (inside "
    "asyncio.run, or per async_to_sync call), or leave http_client out: the SDK's own pool "
    "is made once per event loop"
)


class GivenClient(Generic[_Pool]):
    """The caller's ``http_client``, which the SDK cannot make again: it serves the process
    that first sent through it (its keep-alive sockets are that process's) and, async, one
    event loop at a time (its connections are bound to the loop that opened them). Shared
    by every ``with_options`` copy."""

    __slots__ = ("_generation", "_loops", "http")

    def __init__(self, http: _Pool) -> None:
        self.http: _Pool = http
        self._generation: Optional[int] = None
        self._loops: Optional[PerLoop[object]] = None

    def in_process(self, what: str) -> _Pool:
        """The client, unless this is a child forked after the client sent requests."""
        now = generation()
        if self._generation is None:
            self._generation = now
        elif self._generation != now:
            raise HTTPClientScopeError(
                f"this {what} sends through the http_client you gave it, which sent requests "
                f"in the parent process before this process was forked: its pooled sockets are "
                f"the parent's, and answers would reach the wrong process. Nothing was sent; "
                f"{FORK_FIX}"
            )
        return self.http

    def ended_loop(self, exc: RuntimeError, what: str) -> Optional[HTTPClientScopeError]:
        """The error to raise for ``exc`` (a failed send) when it is asyncio refusing a
        connection of an ended (or another) loop; ``None`` for any other ``RuntimeError``."""
        text = str(exc)
        if not any(words in text for words in ENDED_LOOP):
            return None
        return HTTPClientScopeError(
            f"the http_client you gave this {what} holds a connection of an event loop that has "
            f"ended ({exc}); the request may have been sent on it, and its answer was not read. "
            f"{LOOP_FIX[0].upper()}{LOOP_FIX[1:]}"
        )

    def on_loop(self, what: str) -> _Pool:
        """The client, unless another event loop still open has used it."""
        http = self.in_process(what)
        if self._loops is None:
            self._loops = PerLoop(object)
        self._loops.get()  # this loop used it (an ended loop's mark is dropped by others())
        if self._loops.others():
            raise HTTPClientScopeError(
                f"this {what} sends through the http_client you gave it, which is in use on "
                f"another event loop that is still open: an httpx AsyncClient's connections "
                f"belong to the loop that opened them. Nothing was sent; {LOOP_FIX}"
            )
        return http


ENDED_LOOP = ("Event loop is closed", "attached to a different loop", "bound to a different event loop")
"""What asyncio says when a connection made on one loop is used from another."""


class LoopPool:
    """The SDK's async pool on one event loop, and the async generator that closes it when
    that loop ends: ``asyncio.run``, asgiref's ``async_to_sync``, pytest-asyncio and
    ``trio.run`` finalize the async generators still open before they close the loop
    (``shutdown_asyncgens``), so no connection outlives its loop unclosed."""

    __slots__ = ("closer", "http")

    def __init__(self, http: AsyncClient) -> None:
        self.http = http
        self.closer: Optional[AsyncGenerator[None, None]] = None

    async def started(self) -> AsyncClient:
        """The pool, its closer started on the running loop (call from that loop)."""
        if self.closer is None:
            self.closer = closer = closing(self.http)
            await closer.__anext__()  # runs to its yield: one of this loop's async generators now
        return self.http

    async def aclose(self) -> None:
        """Close the pool now, on its loop (and its closer, which would close it at the end)."""
        if self.closer is not None:
            await self.closer.aclose()
        await self.http.aclose()  # the closer's work already, or a pool no call started


async def closing(http: AsyncClient) -> AsyncGenerator[None, None]:
    """Held open while a loop lives; closing it (its loop ending, or ``aclose``) closes
    ``http`` on that loop."""
    try:
        yield
    finally:
        await http.aclose()


def pool_maker(stack: Stack, kind: str, *, trust_env: bool) -> Callable[[], Any]:
    """What makes one of the SDK's pools (``kind``: ``"Client"`` or ``"AsyncClient"``) in
    whichever process or event loop needs one, with the certificate store chosen now, when
    the client is made (as proxies, ``trust_env`` is read by each pool as it is made)."""
    verify = shared_ssl_context(stack, trust_env=trust_env)
    if kind == "Client":
        return functools.partial(deadline_client, stack, trust_env=trust_env, verify=verify)
    return functools.partial(own_pool, stack.AsyncClient, stack, trust_env=trust_env, verify=verify)


# ---------------------------------------------------------------------------------------
# A GET request as the library builds it, without parsing the same address on every call

PLAIN_QUERY = re.compile(r"(?:[A-Za-z0-9_.~=&+-]|%[0-9A-F]{2})*", re.ASCII)
"""A query the library's URL parse leaves as it is: unreserved characters, ``=``, ``&``,
``+`` and percent escapes (what form-encoding ``params`` makes of any text)."""

_PARSED: dict[tuple[str, str], URL] = {}
"""(library, address without a query) -> its parsed URL: a client's few endpoints."""
_MAX_PARSED = 256


def library_request(
    stack: Stack, method: str, address: str, query: str, headers: Headers, extensions: dict[str, Any]
) -> Request:
    """``method address?query`` (``?query`` left out when empty): the request the library's
    own ``Request(method, ...)`` makes of it, same URL, headers and body.

    A GET (every endpoint of the service) skips what ``Request()`` does besides parsing
    the URL: its headers are the caller's plus ``Host``, its body empty; an address without
    a query is parsed once and kept. Any other method, a query that needs escaping
    (``PLAIN_QUERY``), or a library whose GET would differ (``_quick``) is built by
    ``Request()``."""
    module: Any = stack.module
    if method != "GET" or not PLAIN_QUERY.fullmatch(query) or not _quick(stack.name):
        return cast(Request, module.Request(method, _joined(address, query), headers=headers, extensions=extensions))
    return _get(module, address if query else _parsed(stack.name, module, address), query, headers, extensions)


def _joined(address: str, query: str) -> str:
    """``address?query``, or ``address`` alone for an empty query."""
    return f"{address}?{query}" if query else address


def _parsed(name: str, module: Any, address: str) -> URL:
    """``address`` as ``module``'s URL, parsed on first use and kept (``_PARSED``)."""
    url = _PARSED.get((name, address))
    if url is None:
        if len(_PARSED) >= _MAX_PARSED:
            _PARSED.clear()  # a caller cycling through many base URLs: start over
        url = _PARSED[(name, address)] = module.URL(address)
    return url


def _get(module: Any, base: Union[str, URL], query: str, headers: Headers, extensions: dict[str, Any]) -> Request:
    """The GET of ``base`` (an address, or its kept parse when ``query`` is empty) with
    ``query`` (no checks: see ``_quick``). The library's public ``URL`` parses the whole
    address when a query comes (no URL is patched in place)."""
    url: URL = module.URL(f"{base}?{query}") if query else cast(URL, base)
    # What Request() adds before the caller's headers: Host (a GET has no Content-Length).
    own_host = "host" in headers or not url.host
    raw = headers.raw if own_host else [(b"Host", url.netloc), *headers.raw]
    request = module.Request("GET", url, headers=module.Headers(raw), stream=module.ByteStream(b""),
                             extensions=extensions)
    request.read()  # as Request() does with an empty body: ``request.content`` is b""
    return cast(Request, request)


@functools.cache
def _quick(name: str) -> bool:
    """Whether a GET built by ``_get`` equals the library's own ``Request()`` on probes
    (checked once a library, so that a release whose requests carry more falls back to
    ``Request()``, never to a different request)."""
    module: Any = importlib.import_module(name)
    probes = [("https://api.example.test:8443/v1/posts", "leagues=NFL%2CNBA&limit=100&since_id=a.b~c-d_e&q=a+b%C3%A9"),
              ("http://127.0.0.1:8000/v1/ids", ""), ("https://xn--bcher-kva.example/base/v1/posts", "page=2")]
    try:
        for address, query in probes:
            headers = module.Headers({"Authorization": "Bearer k", "Accept": "application/json"})
            ours = _get(module, module.URL(address), query, headers, {"timeout": {}})
            theirs = module.Request("GET", _joined(address, query), headers=headers, extensions={"timeout": {}})
            same = (ours.url == theirs.url and str(ours.url) == str(theirs.url)
                    and ours.url.raw_path == theirs.url.raw_path and ours.url.params == theirs.url.params
                    and ours.headers.raw == theirs.headers.raw and ours.content == theirs.content
                    and type(ours.stream) is type(theirs.stream) and ours.extensions == theirs.extensions)
            if not same:
                return False
    except Exception:  # an attribute gone or renamed: the full parse it is
        return False
    return True
