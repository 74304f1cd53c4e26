"""A client's settings, checked: every constructor argument, ``with_options`` and the
options of one call (``RequestOptions``) pass through here before anything is sent.

Part of the package's internal API: ``_client`` shares ``UNSET`` (an argument not given) with it.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Union
from urllib.parse import urlsplit

from typing_extensions import TypedDict

from . import _utils
from ._errors import ParameterError, SportsPostsError
from ._http import URL, Headers, InvalidURL, Stack, Timeout, default_stack, is_timeout
from ._version import __version__

if TYPE_CHECKING:
    from ._budget import CallBudget

__all__ = [
    "CallOptions",
    "ClientConfig",
    "RetryEvent",
    "RequestOptions",
    "UNSET",
    "split_request_options",
]

AuthScheme = Literal["bearer", "bare"]
DEFAULT_TIMEOUT = Timeout(30.0, connect=10.0)
DEFAULT_TOTAL_TIMEOUT = 120.0
"""Seconds one call may take with every attempt and every wait between them."""
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""The largest decoded body read: a page of 100 posts is about 150 KiB."""
INSECURE_HTTP_ENV = "SPORTS_POSTS_ALLOW_INSECURE_HTTP"
ACCEPT_ENCODING = "gzip, deflate"
"""Only encodings whose inflation ``BodyReader`` can bound are asked for."""
MAX_RETRIES_LIMIT = 20

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
    return _utils.seconds(name, value, label=label)


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


def check_on_retry(value: object) -> Optional[Callable[[RetryEvent], None]]:
    """``None`` or a callable taking one ``RetryEvent``."""
    if value is not None and not callable(value):
        raise ParameterError(f"on_retry must be a callable or None, got {type(value).__name__}", parameter="on_retry")
    return value  # its signature is the caller's to get right


def check_sleep(value: object) -> Optional[Callable[[float], object]]:
    """``None`` (the real sleep) or a callable taking the seconds to wait."""
    if value is not None and not callable(value):
        raise ParameterError(f"sleep must be a callable or None, got {type(value).__name__}", parameter="sleep")
    return value


@dataclass(frozen=True)
class RetryEvent:
    """What ``on_retry`` is told before the SDK waits to send a call again: the ``attempt``
    that failed (1 for the first), its ``error`` (a typed ``SportsPostsError``), the answer's
    ``status_code`` (``None`` when there was no answer: a timeout, a refused connection),
    the ``wait`` in seconds before the next attempt, and the call's ``request_id``."""

    attempt: int
    error: SportsPostsError
    status_code: Optional[int]
    wait: float
    request_id: str


def check_max_retries(value: object) -> int:
    return _utils.non_negative_int("max_retries", value, maximum=MAX_RETRIES_LIMIT)


MAX_RESPONSE_BYTES_LIMIT = 1 << 30
"""The largest ``max_response_bytes``: a gibibyte of JSON is no answer of this service."""


def check_max_response_bytes(value: object) -> int:
    return _utils.positive_int("max_response_bytes", value, maximum=MAX_RESPONSE_BYTES_LIMIT)


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


UNSET: Any = _Unset()

_CHECKS: dict[str, Callable[[object], Any]] = {
    "on_retry": check_on_retry,
    "sleep": check_sleep,
    "timeout": to_timeout,
    "max_retries": check_max_retries,
    "total_timeout": check_total_timeout,
    "max_response_bytes": check_max_response_bytes,
}
"""What ``ClientConfig.with_options`` runs on each bound it is given, in this order."""


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
    on_retry: Optional[Callable[[RetryEvent], None]] = field(default=None, compare=False)
    """Called before each retry's wait with what failed and how long the wait is."""
    sleep: Optional[Callable[[float], object]] = field(default=None, repr=False, compare=False)
    """What waits between retries (a sync or async callable, per client); ``None``: the real sleep."""
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
        on_retry: object = None,
        sleep: object = None,
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
            on_retry=check_on_retry(on_retry),
            sleep=check_sleep(sleep),
        )

    def with_options(
        self,
        *,
        timeout: object = UNSET,
        max_retries: object = UNSET,
        total_timeout: object = UNSET,
        max_response_bytes: object = UNSET,
        on_retry: object = UNSET,
        sleep: object = UNSET,
    ) -> ClientConfig:
        """A copy with other bounds (same key, URL and headers); ``UNSET`` keeps one."""
        given = {"on_retry": on_retry, "sleep": sleep, "timeout": timeout, "max_retries": max_retries,
                 "total_timeout": total_timeout, "max_response_bytes": max_response_bytes}
        return replace(self, **{name: check(given[name]) for name, check in _CHECKS.items() if given[name] is not UNSET})

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
# The options of one call


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
    def check(cls, options: Mapping[str, object]) -> CallOptions:
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
    if arguments.keys().isdisjoint(REQUEST_OPTION_NAMES):
        return NO_OPTIONS, dict(arguments)
    rest = {k: v for k, v in arguments.items() if k not in REQUEST_OPTION_NAMES}
    return CallOptions.check({k: v for k, v in arguments.items() if k in REQUEST_OPTION_NAMES}), rest
