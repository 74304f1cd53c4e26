"""A call as data (``APICall``) and the HTTP request built from it: the client's
defaults, the call's own headers and query, auth, and the URL length bound."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Callable, Generic, Optional, Protocol, TypeVar

from ._config import NO_OPTIONS, CallOptions, ClientConfig
from ._errors import ParameterError
from ._http import Headers, InvalidURL, QueryParams, Request, Stack, Timeout, library_request

__all__ = ["APICall", "RequestBuilder", "build_request"]

T = TypeVar("T")


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
