"""The HTTP stack: every type the SDK takes from its HTTP library, named once.

The rest of the package imports clients, requests, responses, timeouts and transport
exceptions from here and never names the library itself, so the library the SDK runs
on is decided in this one module.
"""

from __future__ import annotations

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
    "stack_version",
]

LIBRARY_USER_AGENT = f"python-httpx/{httpx.__version__}"
"""The User-Agent every httpx client carries unless its owner set another one."""


def stack_version() -> str:
    """``name/version`` of the HTTP library, for the User-Agent."""
    return f"httpx/{httpx.__version__}"
