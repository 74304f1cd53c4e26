"""Run a test on both HTTP stacks (httpx and its fork httpx2) through their MockTransport.

A handler written against httpx (``httpx.Request`` in, ``httpx.Response`` out) is adapted to
the other stack by copying the request and the response across, so each fake service is
written once.
"""

from __future__ import annotations

import functools
import importlib
import os
import ssl
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable

import httpx

# httpx2 is published for Python 3.10 and newer only; on 3.9 the SDK runs on httpx alone.
STACKS = ["httpx", "httpx2"] if sys.version_info >= (3, 10) else ["httpx"]
ENV_VAR = "SPORTS_POSTS_HTTP_STACK"

Handler = Callable[[httpx.Request], httpx.Response]


@functools.cache
def loopback_tls() -> ssl.SSLContext:
    """One certificate store for the suite's own library clients, made once: each client
    would otherwise load a CA bundle of its own, and the loopback servers they talk to
    speak plain HTTP."""
    return ssl.create_default_context()


def module(stack: str) -> Any:
    return importlib.import_module(stack)


def adapt(handler: Handler, stack: str) -> Callable[[Any], Any]:
    """``handler`` as a MockTransport handler of ``stack``."""
    if stack == "httpx":
        return handler
    lib = module(stack)

    def on_stack(request: Any) -> Any:
        theirs = httpx.Request(request.method, str(request.url), headers=list(request.headers.multi_items()),
                               content=request.read())
        answer = handler(theirs)
        return lib.Response(answer.status_code, headers=list(answer.headers.multi_items()), content=answer.read(),
                            request=request)

    return on_stack


def mock_client(handler: Handler, stack: str, *, asynchronous: bool = False) -> Any:
    """A client of ``stack`` whose every request is answered by ``handler``."""
    lib = module(stack)
    transport = lib.MockTransport(adapt(handler, stack))
    return lib.AsyncClient(transport=transport) if asynchronous else lib.Client(transport=transport)


@contextmanager
def default_stack(stack: str) -> Iterator[None]:
    """Clients made inside run on ``stack`` by default (the environment variable's choice)."""
    before = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = stack
    try:
        yield
    finally:
        if before is None:
            del os.environ[ENV_VAR]
        else:
            os.environ[ENV_VAR] = before
