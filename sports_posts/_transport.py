"""Everything about a call that does no I/O: configuration, request building, response
parsing, error mapping and the retry decision, joined in ``call_flow``, a generator
that the sync and async clients in ``_client.py`` drive by sending and sleeping.
"""

from __future__ import annotations

import contextlib
import email.utils
import gc
import ipaddress
import logging
import math
import os
import random
import re
import ssl
import threading
import time
import zlib
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Generic,
    Literal,
    Optional,
    Protocol,
    TypeVar,
    Union,
)
from urllib.parse import urlsplit

from pydantic_core import ValidationError
from typing_extensions import TypedDict

from . import _checks
from ._errors import (
    APIConnectionError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    ParameterError,
    ResponseTooLargeError,
    SportsPostsError,
    status_error_from_response,
)
from ._http import (
    URL,
    Headers,
    InvalidURL,
    QueryParams,
    Request,
    Response,
    Stack,
    Timeout,
    default_stack,
    is_timeout,
    library_request,
)
from ._steps import Done, advance
from ._version import __version__

if TYPE_CHECKING:
    from tenacity import RetryCallState, Retrying

    from ._budget import CallBudget

__all__ = [
    "APICall",
    "AsyncRequester",
    "BodyReader",
    "CallCounter",
    "CallOptions",
    "ClientConfig",
    "Done",
    "Outcome",
    "RawResponse",
    "RequestOptions",
    "Send",
    "Step",
    "SyncRequester",
    "advance",
    "build_request",
    "call_flow",
    "exchange_flow",
    "parse_http_date",
    "retry_policy",
    "split_request_options",
]

T = TypeVar("T")
R = TypeVar("R")
log = logging.getLogger("sports_posts")

AuthScheme = Literal["bearer", "bare"]
DEFAULT_TIMEOUT = Timeout(30.0, connect=10.0)
DEFAULT_TOTAL_TIMEOUT = 120.0
"""Seconds one call may take with every attempt and every wait between them."""
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""The largest decoded body read: a page of 100 posts is about 150 KiB."""
MAX_ERROR_BODY_BYTES = 64 * 1024
"""An error answer's body is kept up to this (or ``max_response_bytes`` if smaller) and
cut there: its status says what happened, a megabyte of proxy HTML adds nothing."""
MAX_RETRIES_LIMIT = 20
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 60.0
"""A ``Retry-After`` longer than this is not slept: a monthly quota will not recover in
seconds, so the 429 is raised at once with ``.retry_after`` for the caller to decide."""
BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 8.0
REDACTED = "<redacted>"
INSECURE_HTTP_ENV = "SPORTS_POSTS_ALLOW_INSECURE_HTTP"
ACCEPT_ENCODING = "gzip, deflate"
"""Only encodings whose inflation ``BodyReader`` can bound are asked for."""

_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # an HTTP header name (RFC 9110 token)
_SDK_HEADERS = ("authorization", "accept", "accept-encoding")


# ---------------------------------------------------------------------------------------
# Checks of every setting, shared by the constructors, ``with_options`` and per-call options


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


def check_api_key(value: object, *, from_env: bool = False) -> str:
    """A key that fits in an HTTP header; the message never shows the key itself."""
    where = "SPORTS_POSTS_API_KEY" if from_env else "api_key"
    if value is None or (isinstance(value, str) and not value.strip()):
        raise SportsPostsError(
            "No API key: pass api_key=... or set SPORTS_POSTS_API_KEY "
            "(keys are created in the customer dashboard)."
        )
    if not isinstance(value, str):
        raise ParameterError(f"api_key must be a string, got {type(value).__name__}", parameter="api_key")
    key = value.strip()
    if not key.isascii() or _has_control(key) or any(c.isspace() for c in key):
        raise ParameterError(
            f"{where} contains a character an HTTP header cannot carry (a non-ASCII letter, "
            "a space, a line break or another control character); copy the key again from "
            "the dashboard",
            parameter="api_key",
        )
    return key


def _is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_local(base_url: str) -> bool:
    """Whether ``base_url`` is on this machine (a sandbox): no proxy ever stands before it."""
    return _is_loopback(urlsplit(base_url).hostname or "")


def check_base_url(value: object, *, allow_insecure_http: bool) -> str:
    """An http(s) URL with a host and a path only; plain http only to this machine unless
    the caller opts in, because the key would travel in clear text."""
    if not isinstance(value, str):
        raise ParameterError(f"base_url must be a string, got {type(value).__name__}", parameter="base_url")
    if value != value.strip():
        raise ParameterError("base_url has spaces around it", parameter="base_url")
    if _has_control(value) or " " in value:
        raise ParameterError("base_url contains spaces or control characters", parameter="base_url")
    try:
        parts = urlsplit(value)
    except ValueError:
        raise ParameterError("base_url is not a URL", parameter="base_url") from None
    if "@" in parts.netloc:  # never echoed: it may hold a password
        raise ParameterError(
            "base_url must not carry a user name or password; the API key authenticates",
            parameter="base_url",
        )
    if parts.query or parts.fragment or "?" in value or "#" in value:
        raise ParameterError(
            f"base_url must not have a query string or a fragment, got {value!r}", parameter="base_url"
        )
    try:
        parsed = URL(value)
    except (InvalidURL, TypeError, ValueError):
        raise ParameterError(f"base_url is not a URL: {value!r}", parameter="base_url") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ParameterError(f"base_url must be an http(s) URL ending in /v1, got {value!r}", parameter="base_url")
    if parsed.scheme == "http" and not _is_loopback(parsed.host) and not allow_insecure_http:
        raise ParameterError(
            f"base_url {value!r} is plain http to another machine: the API key would travel in "
            "clear text. Use https, or pass allow_insecure_http=True (or set "
            f"{INSECURE_HTTP_ENV}=1) if the network is trusted",
            parameter="base_url",
        )
    if not parsed.path.rstrip("/").endswith("/v1"):  # spec 9: the version is the base path's end
        raise ParameterError(
            f"base_url must end in the version segment /v1, as https://api.example.com/v1 does "
            f"(any path before it is fine, for a gateway: https://gw.example/sports/v1), got {value!r}",
            parameter="base_url",
        )
    return value.rstrip("/")


def _seconds(value: object, name: str, label: Optional[str] = None) -> float:
    """Positive, finite and at most a day (a longer timeout is a unit mistake, and would
    overflow the deadlines it is added to)."""
    return _checks.seconds(name, value, label=label)


def to_timeout(timeout: object, name: str = "timeout") -> Timeout:
    """A finite timeout: ``None`` would wait forever, so it is refused with a hint."""
    if is_timeout(timeout):  # either stack's Timeout
        for phase, value in timeout.as_dict().items():  # type: ignore[attr-defined]
            if value is not None:
                _seconds(value, name, f"{name}.{phase}")
        return timeout  # type: ignore[return-value]
    if timeout is None:
        raise ParameterError(
            f"{name}=None would wait forever; pass seconds (e.g. 30.0), or "
            "Timeout(None) if you really mean no timeout",
            parameter=name,
        )
    seconds = _seconds(timeout, name)
    return Timeout(seconds, connect=min(seconds, 10.0))


def check_total_timeout(value: object) -> Optional[float]:
    """Seconds for a whole call, retries and waits included; ``None`` leaves only the
    per-attempt timeout and the retry count as bounds."""
    return None if value is None else _seconds(value, "total_timeout")


def check_max_retries(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RETRIES_LIMIT:
        raise ParameterError(
            f"max_retries must be an integer from 0 to {MAX_RETRIES_LIMIT}, got {value!r}", parameter="max_retries"
        )
    return value


MAX_RESPONSE_BYTES_LIMIT = 1 << 30
"""The largest ``max_response_bytes``: a gibibyte of JSON is no answer of this service."""


def check_max_response_bytes(value: object) -> int:
    return _checks.positive_int("max_response_bytes", value, maximum=MAX_RESPONSE_BYTES_LIMIT)


def check_auth_scheme(value: object) -> AuthScheme:
    if value == "bearer":
        return "bearer"
    if value == "bare":
        return "bare"
    raise ParameterError(f"auth_scheme must be 'bearer' or 'bare', got {value!r}", parameter="auth_scheme")


def check_flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise ParameterError(f"{name} must be True or False, got {value!r}", parameter=name)
    return value


def _items(value: object, name: str, what: str) -> list[tuple[Any, Any]]:
    """The pairs of an optional mapping argument (``None``: none)."""
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise ParameterError(f"{name} must be a mapping of {what}", parameter=name)
    return list(value.items())


def check_headers(value: object, name: str) -> dict[str, str]:
    """Header names that are tokens and ASCII values without line breaks; never an
    ``Authorization`` (it would replace the key) or the encodings the SDK must decode."""
    headers: dict[str, str] = {}
    for key, item in _items(value, name, "header names to values"):
        if not isinstance(key, str) or not _TOKEN.match(key):
            raise ParameterError(f"{name} has an invalid header name {key!r}", parameter=name)
        if key.lower() in _SDK_HEADERS:
            raise ParameterError(
                f"{name} must not set {key}: the SDK sets it (the API key goes in api_key=)",
                parameter=name,
            )
        if not isinstance(item, str) or not item.isascii() or any(
            (ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in item
        ):
            raise ParameterError(
                f"{name}[{key!r}] must be a string of printable ASCII without line breaks", parameter=name
            )
        headers[key] = item
    return headers


def check_query(value: object, name: str) -> dict[str, str]:
    """Extra query parameters: strings or numbers, without control characters."""
    query: dict[str, str] = {}
    for key, item in _items(value, name, "parameter names to values"):
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise ParameterError(f"{name}[{key!r}] must be a string or a number", parameter=name)
        text = item if isinstance(item, str) else str(item)
        if not isinstance(key, str) or not key or _has_control(key) or _has_control(text):
            raise ParameterError(f"{name} has a name or value with control characters", parameter=name)
        if isinstance(item, float) and not math.isfinite(item):
            raise ParameterError(f"{name}[{key!r}] must be a finite number", parameter=name)
        query[key] = text
    return query


class _Unset:
    """The default of an option that ``with_options`` leaves as it is."""

    def __repr__(self) -> str:
        return "<unchanged>"


_UNSET: Any = _Unset()


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class ClientConfig:
    """A client's resolved settings; the API key is kept out of ``repr``."""

    api_key: str = field(repr=False)
    base_url: str
    auth_scheme: AuthScheme = "bearer"
    timeout: Timeout = field(default_factory=lambda: DEFAULT_TIMEOUT)
    max_retries: int = 2
    default_headers: Mapping[str, str] = field(default_factory=dict)
    total_timeout: Optional[float] = DEFAULT_TOTAL_TIMEOUT
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    stack: Stack = field(default_factory=default_stack, repr=False, compare=False)
    """The HTTP library the client runs on (its requests and exceptions are that library's)."""
    budget: Optional[CallBudget] = None
    """Drawn from right before each request is sent (``None``: no budget)."""
    _headers: dict[bool, Headers] = field(default_factory=dict, init=False, repr=False, compare=False)
    """The headers of every request, built once for each User-Agent choice (see ``headers``)."""
    _merged: dict[None, tuple[tuple[tuple[bytes, bytes], ...], Headers]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """The last client headers seen and ours merged over them (see ``merged_headers``)."""

    @classmethod
    def resolve(
        cls,
        *,
        api_key: object,
        base_url: object,
        auth_scheme: object,
        timeout: object,
        max_retries: object,
        default_headers: object,
        total_timeout: object = DEFAULT_TOTAL_TIMEOUT,
        max_response_bytes: object = DEFAULT_MAX_RESPONSE_BYTES,
        allow_insecure_http: object = False,
        stack: Optional[Stack] = None,
    ) -> ClientConfig:
        """Apply the environment defaults of API.md and check every setting."""
        key = check_api_key(
            api_key if api_key is not None else os.environ.get("SPORTS_POSTS_API_KEY"),
            from_env=api_key is None,
        )
        url = base_url if base_url is not None else os.environ.get("SPORTS_POSTS_BASE_URL")
        if url is None or url == "":
            raise SportsPostsError(
                "No base URL: pass base_url=... or set SPORTS_POSTS_BASE_URL "
                "(it ends in /v1; `sports-posts sandbox` serves one locally)."
            )
        insecure = check_flag(allow_insecure_http, "allow_insecure_http") or _env_flag(INSECURE_HTTP_ENV)
        return cls(
            api_key=key,
            base_url=check_base_url(url, allow_insecure_http=insecure),
            auth_scheme=check_auth_scheme(auth_scheme),
            timeout=to_timeout(timeout),
            max_retries=check_max_retries(max_retries),
            default_headers=check_headers(default_headers, "default_headers"),
            total_timeout=check_total_timeout(total_timeout),
            max_response_bytes=check_max_response_bytes(max_response_bytes),
            stack=stack if stack is not None else default_stack(),
        )

    def with_options(
        self,
        *,
        timeout: object = _UNSET,
        max_retries: object = _UNSET,
        total_timeout: object = _UNSET,
        max_response_bytes: object = _UNSET,
    ) -> ClientConfig:
        """A copy with other bounds (same key, URL and headers); ``_UNSET`` keeps one."""
        changes: dict[str, Any] = {}
        if timeout is not _UNSET:
            changes["timeout"] = to_timeout(timeout)
        if max_retries is not _UNSET:
            changes["max_retries"] = check_max_retries(max_retries)
        if total_timeout is not _UNSET:
            changes["total_timeout"] = check_total_timeout(total_timeout)
        if max_response_bytes is not _UNSET:
            changes["max_response_bytes"] = check_max_response_bytes(max_response_bytes)
        return replace(self, **changes)

    def headers(self, client_headers: Optional[Headers] = None) -> Headers:
        """Headers of every request: the caller's defaults, then ours (ours win). The
        SDK's User-Agent gives way to one the caller set here or on their httpx client.

        A copy the caller may add to, of headers built once per User-Agent choice in the
        stack's own class (its client then merges them without converting each one)."""
        library_agent = self.stack.library_user_agent
        own_agent = client_headers is not None and client_headers.get("user-agent", library_agent) != library_agent
        built = self._headers.get(own_agent)
        if built is None:
            token = f"Bearer {self.api_key}" if self.auth_scheme == "bearer" else self.api_key
            built = self.stack.module.Headers(self.default_headers)
            if "user-agent" not in built and not own_agent:
                built["User-Agent"] = f"sports-posts-python/{__version__} {self.stack.user_agent}"
            built["Accept"] = "application/json"
            built["Accept-Encoding"] = ACCEPT_ENCODING
            built["Authorization"] = token
            self._headers[own_agent] = built
        return built.copy()

    def merged_headers(self, client_headers: Headers) -> Headers:
        """What the client's own ``build_request`` sends: its headers, ours over them.

        Built again only when the client's headers change (a caller may set one between
        calls), so a call does not merge and re-case the same headers each time. Not a
        copy: ``Request`` copies the headers it is given."""
        key = tuple(client_headers.raw)
        last = self._merged.get(None)
        if last is None or last[0] != key:
            merged = self.stack.module.Headers(client_headers)
            merged.update(self.headers(client_headers))
            last = self._merged[None] = (key, merged)
        return last[1]


# ---------------------------------------------------------------------------------------
# A call as data, with the options of that one call


class RequestOptions(TypedDict, total=False):
    """Options of one call, taken by every method: ``extra_headers`` and ``extra_query``
    are added to that request (never replacing the key), ``timeout`` replaces the client's."""

    extra_headers: Optional[Mapping[str, str]]
    extra_query: Optional[Mapping[str, Union[str, int, float]]]
    timeout: Union[float, Timeout, None]


@dataclass(frozen=True)
class CallOptions:
    """Checked ``RequestOptions`` as a call carries them."""

    headers: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    timeout: Optional[Timeout] = None

    @classmethod
    def check(cls, options: Mapping[str, Any]) -> CallOptions:
        timeout = options.get("timeout")
        return cls(
            headers=check_headers(options.get("extra_headers"), "extra_headers"),
            query=check_query(options.get("extra_query"), "extra_query"),
            timeout=None if timeout is None else to_timeout(timeout),
        )


NO_OPTIONS = CallOptions()
REQUEST_OPTION_NAMES = frozenset(RequestOptions.__annotations__)


def split_request_options(arguments: Mapping[str, Any]) -> tuple[CallOptions, dict[str, Any]]:
    """The per-call options among a method's keyword arguments, checked, and the rest
    (the endpoint's own parameters, left for its encoder to check)."""
    rest = {k: v for k, v in arguments.items() if k not in REQUEST_OPTION_NAMES}
    if len(rest) == len(arguments):
        return NO_OPTIONS, rest
    return CallOptions.check({k: v for k, v in arguments.items() if k in REQUEST_OPTION_NAMES}), rest


@dataclass(frozen=True)
class APICall(Generic[T]):
    """One endpoint call as data: where it goes and how its 2xx body becomes a model."""

    method: str
    path: str
    params: Mapping[str, str]
    parse: Callable[[bytes], T]
    options: CallOptions = NO_OPTIONS
    free: bool = False
    """Not counted against the quota (GET /account/information): no draw from a budget."""

    def with_params(self, /, **changes: str) -> APICall[T]:
        return replace(self, params={**self.params, **changes})


class RequestBuilder(Protocol):
    """What the flow needs of an httpx client: its headers, and a request built with its
    defaults (headers, params, cookies) merged in. Building sends nothing."""

    @property
    def headers(self) -> Headers: ...

    @property
    def params(self) -> QueryParams: ...

    @property
    def cookies(self) -> Any: ...

    def build_request(
        self, method: str, url: str, *, params: Any = ..., headers: Any = ..., extensions: Any = ...
    ) -> Request: ...


def build_request(
    config: ClientConfig,
    call: APICall[Any],
    client: Optional[RequestBuilder] = None,
    *,
    remaining: Optional[float] = None,
) -> Request:
    """The HTTP request of a call: the client's defaults, the call's extra headers and
    query, then auth; each phase's timeout shrunk to the ``remaining`` seconds."""
    params = {**call.params, **call.options.query}
    timeouts = (call.options.timeout or config.timeout).as_dict()
    if remaining is not None:
        timeouts = {k: remaining if v is None else min(v, remaining) for k, v in timeouts.items()}
    url = config.base_url + call.path
    extensions = {"timeout": timeouts}
    extra = call.options.headers
    try:
        if client is None:
            headers = config.headers()
            _set(headers, extra)
            request = Request(call.method, _with_query(url, params), headers=headers, extensions=extensions)
        elif not client.params and _builds_as_its_library(client, config.stack):
            # What the library's build_request makes of it, with the query encoded as the
            # library encodes ``params`` (set on a kept parse of the address: no URL parse
            # per call) and the client's headers merged with ours once, not on every call.
            query = _query(params, config.stack.module.QueryParams)
            headers = config.merged_headers(client.headers)
            if extra:
                headers = headers.copy()
                _set(headers, extra)
            request = library_request(config.stack, call.method, url, query, headers, extensions)
        else:  # cookies, params or a build_request of its own: the client merges them
            headers = config.headers(client.headers)
            _set(headers, extra)
            request = client.build_request(call.method, url, params=params, headers=headers, extensions=extensions)
    except (InvalidURL, config.stack.module.InvalidURL):  # a query past the library's own limit
        raise url_too_long(params) from None
    return within_url_limit(request)


def _set(headers: Headers, extra: Mapping[str, str]) -> None:
    """The call's ``extra_headers`` over the others (each name replaced, not repeated)."""
    for name, value in extra.items():
        headers[name] = value


def _builds_as_its_library(client: RequestBuilder, stack: Stack) -> bool:
    """Whether ``client.build_request`` would only merge its headers and the URL (no
    cookies to add, not overridden by a subclass): then the SDK builds the same request."""
    return type(client).build_request is stack.Client.build_request and not client.cookies


_PLAIN = re.compile(r"[A-Za-z0-9_.~-]*", re.ASCII)
"""What form encoding leaves as it is (letters, digits and ``_.~-``)."""


def _query(params: Mapping[str, str], query_params: Callable[[Any], Any] = QueryParams) -> str:
    """``params`` as a query, in the encoding of the library's ``params=`` (names and
    values that need no escaping, the common case, are joined as they are)."""
    if not params:
        return ""
    if _PLAIN.fullmatch("".join(params)) and _PLAIN.fullmatch("".join(params.values())):
        return "&".join([f"{name}={value}" for name, value in params.items()])
    return str(query_params(params))


def _with_query(url: str, params: Mapping[str, str], query_params: Callable[[Any], Any] = QueryParams) -> str:
    """``url`` with ``params`` as its query (``_query``)."""
    query = _query(params, query_params)
    return f"{url}?{query}" if query else url


MAX_URL_LENGTH = 8192
"""The longest request URL the SDK sends, in bytes: 8 KiB is the limit many servers and
proxies enforce (nginx's default buffer, for one); past it the answer is a 414 or a reset,
after the call may already have been counted."""


def within_url_limit(request: Request) -> Request:
    """``request`` itself, or a ``ParameterError`` when its URL is longer than
    ``MAX_URL_LENGTH``: the whole URL counts (base URL, path and encoded query), and
    the error names the longest parameter, the likely culprit."""
    length = len(str(request.url).encode())
    if length <= MAX_URL_LENGTH:
        return request
    raise url_too_long(request.url.params, length)


def url_too_long(params: Mapping[str, str], length: Optional[int] = None) -> ParameterError:
    """The error of a URL over the limit (``length`` unknown when the HTTP library refused
    to build it), naming the longest parameter."""
    longest = max(params.keys(), key=lambda k: len(params.get(k, "")), default=None)
    size = f"{length:,} bytes" if length is not None else "longer than the HTTP library accepts"
    return ParameterError(
        f"the request URL would be {size}, over the SDK's {MAX_URL_LENGTH:,}-byte limit"
        + (f"; the longest parameter is {longest}" if longest else "")
        + ": split the call (fewer ids per request, say)",
        parameter=longest,
    )


def attempt_seconds(timeout: Timeout) -> Optional[float]:
    """How long one attempt may take in all: the longest of its phase timeouts."""
    values = [v for v in timeout.as_dict().values() if v is not None]
    return max(values) if values else None


# ---------------------------------------------------------------------------------------
# Secrets out of everything kept


def redacted_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers fit for a log record: the Authorization value is never written out."""
    return {k: (REDACTED if k.lower() == "authorization" else v) for k, v in headers.items()}


def _redact(text: str, secret: str) -> str:
    return text.replace(secret, REDACTED) if secret and secret in text else text


def kept_request(request: Request, secret: str = "") -> Request:
    """The request as errors and raw responses keep it: Authorization redacted, and the key
    wherever else it is (a cookie a caller's client kept from an echo), in an httpx
    request whichever stack sent it, so what an error holds has one type."""
    headers = redacted_headers(request.headers)
    url = str(request.url)
    if secret:
        headers = {k: _redact(v, secret) for k, v in headers.items()}
        url = _redact(url, secret)  # a redirect's target may carry it
    return Request(request.method, url, headers=headers)


class _Keeper:
    """The answer as the SDK keeps it, made on first demand and then held: only errors
    and the raw view need it, so a call that succeeds never copies its answer."""

    __slots__ = ("_args", "_kept")

    def __init__(self, response: Response, body: bytes, request: Request, secret: str) -> None:
        self._args: Optional[tuple[Response, bytes, Request, str]] = (response, body, request, secret)
        self._kept: Optional[Response] = None

    def __call__(self) -> Response:
        if self._kept is None:
            assert self._args is not None
            response, body, request, secret = self._args
            self._kept = kept_response(response, body, kept_request(request, secret), secret)
            self._args = None  # the unredacted request goes as soon as the copy exists
        return self._kept


SHORT_KEY = 64
"""Keys up to this many bytes are looked for with ``bytes.rfind``, longer ones with ``in``."""


def redact_body(body: bytes, secret: str) -> bytes:
    """``body`` with the key replaced wherever a hostile or misconfigured server echoed it,
    before anything parses it: no model, error or log can then hold the key.

    Every answer pays this scan, so it takes CPython's fastest search for it: ``rfind``
    (a skip search, faster on a page than the two-way search ``in`` picks for long
    bodies). Its worst case, a body built against the key, costs up to about half the
    key's length in comparisons per byte, so it is kept to keys of at most ``SHORT_KEY``
    bytes; longer keys take the linear two-way search, which is as fast for them."""
    raw_secret = secret.encode("ascii")
    if not raw_secret:
        return body
    echoed = body.rfind(raw_secret) >= 0 if len(raw_secret) <= SHORT_KEY else raw_secret in body
    return body.replace(raw_secret, REDACTED.encode("ascii")) if echoed else body


def kept_response(response: Response, body: bytes, request: Request, secret: str) -> Response:
    """The answer as the SDK keeps it: the decoded ``body``, already redacted by
    ``redact_body`` before it was parsed, and the headers with the key replaced wherever a
    hostile or misconfigured server echoed it (names and values)."""
    headers = [
        # names come lower-cased: the key is looked for lower-cased in them too
        (_redact(_redact(k, secret), secret.lower()), _redact(v, secret))
        for k, v in response.headers.multi_items()
        # the body is decoded already: these two would describe bytes no longer held
        if k.lower() not in ("content-encoding", "content-length")
    ]
    extensions = {k: v for k, v in response.extensions.items() if k in ("http_version", "reason_phrase")}
    reason = extensions.get("reason_phrase")
    if isinstance(reason, bytes) and secret:  # the status line's text: str(exc) and logs quote it
        extensions["reason_phrase"] = reason.replace(secret.encode("ascii"), REDACTED.encode("ascii"))
    return Response(response.status_code, headers=headers, content=body, request=request, extensions=extensions)


# ---------------------------------------------------------------------------------------
# Reading a body within its bounds


class _Inflater:
    """gzip or deflate inflated a bounded step at a time (``max_length``), so a bomb never
    expands in memory past the room left under the cap (plus one step)."""

    STEP = 256 * 1024

    def __init__(self, encoding: str) -> None:
        wbits = 16 + zlib.MAX_WBITS if encoding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._z = zlib.decompressobj(wbits)
        self._first = encoding == "deflate"

    def inflate(self, data: bytes, room: int) -> Iterator[bytes]:
        """Yield the inflated bytes of ``data`` in steps of at most ``room + 1`` bytes."""
        step = min(room + 1, self.STEP)
        if self._first and data:
            self._first = False
            try:
                out = self._z.decompress(data, step)
            except zlib.error:  # "deflate" sent as a raw stream, without the zlib header
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                out = self._z.decompress(data, step)
        else:
            out = self._z.decompress(data, step)
        yield out
        # A full step may leave output owed even when all input was taken: ask again.
        while self._z.unconsumed_tail or len(out) == step:
            out = self._z.decompress(self._z.unconsumed_tail, step)
            if not out:
                return
            yield out


def _inflater_for(content_encoding: str) -> Optional[_Inflater]:
    """The decoder of a ``Content-Encoding`` (``None`` for identity), or the typed error of
    one the SDK did not ask for."""
    encodings = [e.strip() for e in content_encoding.lower().split(",")]
    encodings = [e for e in encodings if e and e != "identity"]
    if len(encodings) > 1 or (encodings and encodings[0] not in ("gzip", "x-gzip", "deflate")):
        raise APIResponseValidationError(
            f"the answer is encoded as {', '.join(encodings)!r}; the SDK asks for {ACCEPT_ENCODING} only"
        )
    return _Inflater(encodings[0]) if encodings else None


class BodyReader:
    """The bounds of one attempt's read, checked as each chunk arrives: the decoded size
    against ``max_response_bytes`` and the clock against the attempt's deadline.

    The driver calls ``begin`` with the response head and ``feed`` with each raw
    chunk until it answers ``False``; every decision about the bytes is made here.
    """

    def __init__(
        self, limit: int, deadline: Optional[float], clock: Callable[[], float], request: Request,
        *, overlap: int = 0,
    ) -> None:
        self.limit = limit
        self._overlap = overlap
        """Bytes read past an error body's cut, so that a key straddling it is seen whole
        by the scan (``trim`` then cuts the redacted body)."""
        self._keep: Optional[int] = None
        self.deadline = deadline
        self._clock = clock
        self.request = request
        self._chunks: list[bytes] = []
        self._size = 0
        self._cap = limit
        self._inflater: Optional[_Inflater] = None
        self._status = 0

    def seconds_left(self) -> Optional[float]:
        """Time left for this attempt (``None``: unbounded), for an async timeout scope."""
        return None if self.deadline is None else max(0.0, self.deadline - self._clock())

    def timed_out(self) -> APITimeoutError:
        where = f"{self.request.method} {self.request.url.copy_with(query=None)}"
        return APITimeoutError(
            f"{where} timed out: the whole request (connect, headers and body) must finish "
            "within `timeout`", request=kept_request(self.request),
        )

    def begin(self, response: Response) -> bool:
        """Take the head: choose the decoder and the bound (error bodies are cut short).
        ``False`` when the transport had read the body already (``httpx.MockTransport``
        answers that way): it is taken as it is, decoded, and nothing is left to stream."""
        self._check_clock()
        self._status = response.status_code
        if not response.is_success:
            self._keep = min(self.limit, MAX_ERROR_BODY_BYTES)
            self._cap = self._keep + self._overlap
        if response.is_stream_consumed:
            self.feed(response.content)
            return False
        headers = response.headers
        encoding = headers.get("content-encoding")
        if encoding:  # rare: the SDK's pool and most servers send JSON this small as it is
            self._inflater = _inflater_for(encoding)
        if self._inflater is None:
            length = headers.get("content-length", "")
            if length.isdigit() and int(length) > self._cap and response.is_success:
                self._over()
        return True

    def feed(self, chunk: bytes) -> bool:
        """Take a raw chunk; ``False`` once enough is read (an error body at its cap)."""
        self._check_clock()
        try:
            parts = [chunk] if self._inflater is None else self._inflater.inflate(chunk, self._cap - self._size)
            for part in parts:
                if not self._take(part):
                    return False
        except zlib.error as exc:
            raise APIResponseValidationError(f"the answer's compressed body is corrupt: {exc}") from None
        return True

    def _take(self, part: bytes) -> bool:
        room = self._cap - self._size
        if len(part) > room:
            if self._status and not 200 <= self._status < 300:
                self._chunks.append(part[:room])
                self._size = self._cap
                return False
            self._over()
        if part:
            self._chunks.append(part)
            self._size += len(part)
        return True

    def _check_clock(self) -> None:
        if self.deadline is not None and self._clock() >= self.deadline:
            raise self.timed_out()

    def _over(self) -> None:
        where = f"{self.request.method} {self.request.url.copy_with(query=None)}"
        raise ResponseTooLargeError(
            f"{where}: the answer's body passed max_response_bytes={self.limit} bytes, so reading "
            "stopped there. If an answer this large is expected, raise the bound: "
            "SportsPosts(max_response_bytes=...) or client.with_options(max_response_bytes=...)",
            limit=self.limit,
        )

    def body(self) -> bytes:
        """Every decoded byte read (the inflater was drained after each chunk)."""
        return b"".join(self._chunks)

    def trim(self, body: bytes) -> bytes:
        """An error's ``body``, once redacted, cut to its bound: the bytes read past it were
        only there for the scan to see a key that straddles the cut."""
        if self._keep is None or len(body) <= self._keep:
            return body
        self._cut = True
        return body[: self._keep]


# ---------------------------------------------------------------------------------------
# From an answer to a model or a typed error


def parse_answer(call: APICall[T], status: int, body: bytes, keep: Callable[[], Response]) -> T:
    """The model of a 2xx answer's ``body``, or the typed error of any other answer.

    ``keep`` makes the answer as errors hold it, only when one is raised: a call that
    succeeds never copies its answer. ``body`` must already be redacted (``redact_body``).
    """
    if not 200 <= status < 300:
        response = keep()
        raise status_error_from_response(
            response, retry_after=parse_retry_after(response.headers.get("retry-after"))
        )
    try:
        with _collection_paused():
            return call.parse(body)
    except ValidationError as exc:
        raise response_validation_error(exc, keep()) from None
    except (ValueError, TypeError) as exc:  # a parser of ours refusing the shape
        response = keep()
        raise APIResponseValidationError(
            f"{call.method} {call.path}: unexpected body: {exc}", response=response, body=_text(response)
        ) from None


@contextlib.contextmanager
def _collection_paused() -> Iterator[None]:
    """Pause automatic garbage collection while a body becomes models.

    A page of posts creates thousands of tracked objects, all reachable: the collections
    they trigger scan them and free nothing, again and again during one parse. One
    collection after the parse does that work once. If another thread
    disabled the collector meanwhile, it stays as this thread found it at the start.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def response_validation_error(exc: ValidationError, response: Response) -> APIResponseValidationError:
    """Name the first offending field of a 2xx body that does not match the spec."""
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0] if errors else {"type": "", "loc": (), "msg": str(exc), "input": None}
    where = ".".join(str(part) for part in first.get("loc", ()))
    if first.get("type") == "json_invalid":
        message = f"the {response.status_code} answer's body is not valid JSON: {first.get('msg')}"
        where_field: Optional[str] = None
    else:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        message = f"unexpected value in the answer's body at {where or '<root>'}: {first.get('msg')}{more}"
        where_field = where or None
    return APIResponseValidationError(message, response=response, body=_text(response), field=where_field)


def _text(response: Response) -> str:
    return response.content.decode("utf-8", "replace")


def parse_http_date(value: object) -> Optional[datetime]:
    """An HTTP date header (IMF-fixdate, or the obsolete forms the parser knows) as an aware
    UTC datetime; ``None`` for anything else, never an exception."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):  # 3.9 raises TypeError on junk
        return None
    if when.tzinfo is None:  # "-0000": UTC by RFC 5322 3.3
        when = when.replace(tzinfo=timezone.utc)
    try:
        return when.astimezone(timezone.utc)
    except (ValueError, OverflowError):  # year 1 or 9999 pushed out of range by its offset
        return None


def parse_retry_after(value: Optional[str], *, now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` in seconds, from either of its forms (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        when = parse_http_date(value)
        if when is None:
            return None
        current = datetime.fromtimestamp(time.time() if now is None else now, timezone.utc)
        seconds = (when - current).total_seconds()
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        return None
    return max(0.0, seconds)


def is_retryable(exc: BaseException) -> bool:
    """Connection errors, timeouts, 429 and 5xx gateway errors; nothing that spends quota
    for certain failure, and no 429 whose ``Retry-After`` exceeds ``MAX_RETRY_AFTER``."""
    if isinstance(exc, APIConnectionError):
        return exc._retryable
    if isinstance(exc, APIStatusError) and exc.status_code in RETRY_STATUSES:
        return exc.retry_after is None or exc.retry_after <= MAX_RETRY_AFTER
    return False


def backoff(attempt: int) -> float:
    """Exponential backoff with jitter after failed attempt ``attempt`` (1-based), capped:
    0.5 s, 1 s, 2 s, ... up to 8 s, each plus up to half the base at random."""
    base: float = min(BACKOFF_MAX, BACKOFF_INITIAL * 2.0 ** max(0, attempt - 1))
    return min(BACKOFF_MAX, base + random.uniform(0, BACKOFF_INITIAL))


def retry_wait(state: RetryCallState) -> float:
    """The server's ``Retry-After`` when it gave one, else capped exponential backoff."""
    exc = state.outcome.exception() if state.outcome is not None else None
    if isinstance(exc, APIStatusError) and exc.retry_after is not None:
        return min(exc.retry_after, MAX_RETRY_AFTER)
    return backoff(state.attempt_number)


def retry_policy(max_retries: int) -> Retrying:
    """The one retry policy: tenacity decides whether a failed attempt is retried and how
    long to wait first; ``call_flow`` only asks it, so both clients share it. Tenacity is
    imported here, at a call's first failure: a program whose calls succeed never loads it."""
    from tenacity import Retrying, retry_if_exception, stop_after_attempt

    return Retrying(
        stop=stop_after_attempt(max_retries + 1),
        wait=retry_wait,
        retry=retry_if_exception(is_retryable),
        reraise=True,
    )


class CallCounter:
    """Requests sent by a client and every client derived from it by ``with_options``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self, n: int = 1) -> None:
        with self._lock:
            self.value += n


@dataclass(frozen=True)
class Send:
    """Send ``request`` and read its answer through ``reader`` (which holds the bounds)."""

    request: Request
    reader: BodyReader


Step = Union[Send, float]
"""What a call flow asks its driver for: send this request, or sleep this many seconds."""
Outcome = Union[Response, Exception, None]
"""What the driver answers: the response (its body read through the reader and closed),
the transport error of its HTTP library or the bound crossed instead, or nothing (after a
sleep)."""


def transport_error(exc: Exception, request: Request, stack: Stack, secret: str = "") -> APIConnectionError:
    """A transport failure as the SDK's typed error (the message names no secret; whatever
    the library quotes of the server's answer is redacted). A failure no retry can mend
    (``permanent_failure``) says so and is not retried."""
    where = f"{request.method} {request.url.copy_with(query=None)}"
    if isinstance(exc, stack.TimeoutException):
        return APITimeoutError(f"{where} timed out ({type(exc).__name__})", request=kept_request(request, secret))
    why = permanent_failure(exc, stack)
    detail = _redact(f"{type(exc).__name__}: {exc}", secret)
    error = APIConnectionError(
        f"{where} failed: {detail}" + (f" (not retried: {why})" if why else ""),
        request=kept_request(request, secret),
    )
    if why:
        error._retryable = False
    return error


class Redirects(Protocol):
    """What a client says about redirects: whether it follows them, and how many."""

    @property
    def follow_redirects(self) -> bool: ...

    @property
    def max_redirects(self) -> int: ...


def redirect_hop(response: Response, history: list[Response], client: Redirects, config: ClientConfig) -> Optional[Request]:
    """The next request of a redirect the client would follow, or ``None`` (not a
    redirect, or a client that follows none: the SDK's own pools).

    The shells send with ``follow_redirects=False`` and follow hop by hop, so that each
    target is seen before it is sent: one carrying the key is refused (an
    ``APIConnectionError``, not retried), and a loop ends in the library's
    ``TooManyRedirects`` after ``max_redirects`` hops, as the library's own loop would.
    ``response`` goes into ``history``; the caller closes it."""
    hop = response.next_request
    if hop is None or not client.follow_redirects:
        return None
    history.append(response)
    if len(history) > client.max_redirects:
        raise config.stack.module.TooManyRedirects("Exceeded maximum allowed redirects.", request=hop)
    if config.api_key and config.api_key in str(hop.url):
        where = f"{hop.method} {_redact(str(hop.url.copy_with(query=None)), config.api_key)}"
        error = APIConnectionError(
            f"a redirect to {where} was refused: its address carries the API key (not retried)",
            request=kept_request(hop, config.api_key),
        )
        error._retryable = False
        raise error
    return hop


_TRANSIENT_TLS = (ssl.SSLEOFError, ssl.SSLZeroReturnError, ssl.SSLWantReadError, ssl.SSLWantWriteError,
                  ssl.SSLSyscallError)
"""TLS errors of a connection cut mid-handshake: a new connection may well succeed."""


def permanent_failure(exc: BaseException, stack: Stack) -> Optional[str]:
    """Why a transport error cannot recover on a retry, or ``None`` when it may: a redirect
    loop, a URL or request the library cannot send, or a TLS failure (a certificate or a
    protocol the two ends do not share), which the next attempt would meet again."""
    module: Any = stack.module
    if isinstance(exc, module.TooManyRedirects):
        return "the redirects never end (a loop, or more than the client's max_redirects)"
    if isinstance(exc, (module.UnsupportedProtocol, module.InvalidURL, module.LocalProtocolError)):
        return "the HTTP library cannot send this request (an unsupported or invalid URL)"
    cause: Optional[BaseException] = exc
    for _ in range(8):  # the library's error, its httpcore error, the ssl error
        if cause is None:
            break
        if isinstance(cause, ssl.SSLError) and not isinstance(cause, _TRANSIENT_TLS):
            return "TLS failed (a certificate refused, or no protocol both ends speak)"
        cause = cause.__cause__ or cause.__context__
    return None


def _earliest(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return b if a is None else a if b is None else min(a, b)


def _retry_state(max_retries: int) -> tuple[Retrying, RetryCallState]:
    """The retry policy and the state of one call, begun."""
    from tenacity import RetryCallState

    retrying = retry_policy(max_retries)
    retrying.begin()
    return retrying, RetryCallState(retrying, fn=None, args=(), kwargs={})


def _wait_of(decision: object) -> float:
    """The seconds of tenacity's decision to sleep (any other decision is a bug)."""
    from tenacity import DoSleep

    if not isinstance(decision, DoSleep):  # pragma: no cover - tenacity's contract
        raise RuntimeError(f"unexpected retry decision {decision!r}")
    return float(decision)


def exchange_flow(
    config: ClientConfig,
    call: APICall[T],
    counter: CallCounter,
    client: Optional[RequestBuilder] = None,
    clock: Callable[[], float] = time.monotonic,
) -> Generator[Step, Outcome, tuple[T, Callable[[], Response]]]:
    """One call from its first attempt to its answer, without I/O.

    It yields each request to send (the driver answers with the response, read through
    the step's reader, or the error it got instead) and each wait before a retry (the
    driver sleeps, then answers ``None``), and returns the parsed model with a maker of the
    answer as kept (key redacted; built only if asked), or raises the typed error. Each
    attempt must finish within the timeout, and the whole call within ``total_timeout``: a
    wait that would cross it is not slept. A call that succeeds at once never builds the retry machinery.
    """
    started = clock()
    overall = None if config.total_timeout is None else started + config.total_timeout
    budget = attempt_seconds(call.options.timeout or config.timeout)
    retrying: Optional[Retrying] = None
    state: Optional[RetryCallState] = None
    while True:
        now = clock()
        deadline = _earliest(None if budget is None else now + budget, overall)
        request = build_request(config, call, client, remaining=None if deadline is None else deadline - now)
        reader = BodyReader(config.max_response_bytes, deadline, clock, request, overlap=len(config.api_key))
        try:
            if deadline is not None and deadline <= now:
                raise reader.timed_out()
            counter.add()
            if log.isEnabledFor(logging.DEBUG):
                # the key redacted anywhere: a caller's cookie jar may hold an echo of it
                log.debug("%s", _redact(f"request {request.method} {request.url} "
                                        f"headers={redacted_headers(request.headers)}", config.api_key))
            outcome = yield Send(request, reader)
            if isinstance(outcome, SportsPostsError):
                raise outcome
            if isinstance(outcome, Exception):
                if isinstance(outcome, config.stack.module.TooManyRedirects):  # every hop reached the server
                    counter.add(int(getattr(client, "max_redirects", 0)))
                raise transport_error(outcome, request, config.stack, config.api_key) from None
            if outcome is None:  # pragma: no cover - a driver bug, not a server's
                raise RuntimeError("call_flow: the driver answered a request with nothing")
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "response %s %s -> %d in %.1f ms",
                    request.method, request.url.copy_with(query=None), outcome.status_code,
                    (clock() - now) * 1000,
                )
            if outcome.history:  # redirects a caller's client followed: requests sent too
                counter.add(len(outcome.history))
            body = reader.trim(redact_body(reader.body(), config.api_key))
            keep = _Keeper(outcome, body, request, config.api_key)
            return parse_answer(call, outcome.status_code, body, keep), keep
        except SportsPostsError as exc:
            last: SportsPostsError = exc
            if retrying is None or state is None:
                retrying, state = _retry_state(config.max_retries)
            state.set_exception((type(exc), exc, exc.__traceback__))
        decision = retrying.iter(state)  # raises the error when it is not to be retried
        wait = _wait_of(decision)
        if overall is not None and clock() + wait >= overall:
            log.info("not retrying: a wait of %.2fs would pass total_timeout (attempt %d failed: %s)",
                     wait, state.attempt_number, last)
            raise last
        log.info("retrying in %.2fs (attempt %d failed: %s)", wait, state.attempt_number, last)
        state.prepare_for_next_attempt()
        yield wait


def call_flow(
    config: ClientConfig,
    call: APICall[T],
    counter: CallCounter,
    client: Optional[RequestBuilder] = None,
    clock: Callable[[], float] = time.monotonic,
) -> Generator[Step, Outcome, T]:
    """``exchange_flow`` without the kept answer: the parsed model alone."""
    parsed, _ = yield from exchange_flow(config, call, counter, client, clock)
    return parsed


class RawResponse(Generic[T]):
    """An answer as received, from ``client.with_raw_response``: status, headers (the
    key redacted wherever it was echoed), the request as sent (Authorization redacted),
    and ``parse`` for what the plain method returns."""

    def __init__(self, response: Response, parsed: T) -> None:
        self.http_response = response
        self._parsed = parsed

    @property
    def status_code(self) -> int:
        return self.http_response.status_code

    @property
    def headers(self) -> Headers:
        """Every response header: rate-limit and usage headers included."""
        return self.http_response.headers

    @property
    def http_request(self) -> Request:
        return self.http_response.request

    @property
    def url(self) -> URL:
        return self.http_response.request.url

    @property
    def content(self) -> bytes:
        """The decoded body."""
        return self.http_response.content

    def parse(self) -> T:
        """What the method returns without ``with_raw_response`` (a page, a model)."""
        return self._parsed

    def __repr__(self) -> str:
        return f"<RawResponse [{self.status_code}] {self.http_request.method} {self.url.copy_with(query=None)}>"


class SyncRequester(Protocol):
    """What pages, resources and pollers need of a sync client: to make a call."""

    def _request(self, call: APICall[T]) -> T: ...

    def _result(self, call: APICall[T], into: Callable[[T], R]) -> R: ...

    def with_options(self, *, max_retries: int = ...) -> SyncRequester: ...


class AsyncRequester(Protocol):
    """The async twin: making a call is awaited."""

    _raw: bool

    async def _request(self, call: APICall[T]) -> T: ...

    async def _result(self, call: APICall[T], into: Callable[[T], R]) -> R: ...

    def with_options(self, *, max_retries: int = ...) -> AsyncRequester: ...
