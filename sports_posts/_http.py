"""The HTTP stack: every type the SDK takes from its HTTP library, named once.

The SDK runs on httpx or on its maintained fork httpx2 (the same API under the module name
``httpx2``). The rest of the package names neither library: it imports the types below for
annotations (httpx's, which httpx2 mirrors), and takes the classes a client really uses
from that client's :class:`Stack`.

Which stack: the one of an injected ``http_client``; otherwise the one named by
``SPORTS_POSTS_HTTP_STACK`` (``httpx`` or ``httpx2``); otherwise httpx2 when it is
installed, else httpx.
"""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass
from typing import Any, cast

from httpx import (
    URL,
    AsyncClient,
    Client,
    HTTPError,
    InvalidURL,
    Request,
    Response,
    Timeout,
    TimeoutException,
)

from ._errors import ParameterError, SportsPostsError

__all__ = [
    "ENV_VAR",
    "STACKS",
    "URL",
    "AsyncClient",
    "Client",
    "HTTPError",
    "InvalidURL",
    "Request",
    "Response",
    "Stack",
    "Timeout",
    "TimeoutException",
    "default_stack",
    "is_timeout",
    "load_stack",
    "stack_of",
]

STACKS = ("httpx", "httpx2")
"""The HTTP libraries the SDK runs on, by module name."""
ENV_VAR = "SPORTS_POSTS_HTTP_STACK"


@dataclass(frozen=True)
class Stack:
    """One HTTP library's classes, as the SDK uses them."""

    name: str
    version: str
    Client: type[Client]
    AsyncClient: type[AsyncClient]
    Request: type[Request]
    Timeout: type[Timeout]
    HTTPError: type[HTTPError]
    TimeoutException: type[TimeoutException]

    def __repr__(self) -> str:
        return f"Stack({self.name} {self.version})"


@functools.cache
def load_stack(name: str) -> Stack:
    """The stack of the library ``name`` (``"httpx"`` or ``"httpx2"``)."""
    if name not in STACKS:
        raise ParameterError(f"{ENV_VAR} must be one of {', '.join(STACKS)}, got {name!r}", parameter=ENV_VAR)
    try:
        module: Any = importlib.import_module(name)
    except ImportError:
        extra = " (pip install 'sports-posts[httpx2]')" if name == "httpx2" else ""
        raise SportsPostsError(f"the HTTP library {name} is not installed{extra}") from None
    return Stack(
        name=name,
        version=str(module.__version__),
        Client=cast("type[Client]", module.Client),
        AsyncClient=cast("type[AsyncClient]", module.AsyncClient),
        Request=cast("type[Request]", module.Request),
        Timeout=cast("type[Timeout]", module.Timeout),
        HTTPError=cast("type[HTTPError]", module.HTTPError),
        TimeoutException=cast("type[TimeoutException]", module.TimeoutException),
    )


def default_stack() -> Stack:
    """The stack of a client made without ``http_client``: the environment's choice, else
    httpx2 when it is installed (the maintained fork), else httpx."""
    chosen = os.environ.get(ENV_VAR, "").strip().lower()
    if chosen:
        return load_stack(chosen)
    try:
        return load_stack("httpx2")
    except SportsPostsError:
        return load_stack("httpx")


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
