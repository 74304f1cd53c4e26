"""The one error family of every store, and URLs shown without their password.

A driver's exception never leaves a store: it becomes a ``StoreError`` naming the engine and
what failed, with the password of the connection URL scrubbed (from the netloc and from a
``?password=`` query, which libpq and redis-py both accept) and the driver's exception
dropped as a cause (it may hold the connection string).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import Any, Optional
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from .._errors import ParameterError, SportsPostsError

__all__ = [
    "CoordinationError",
    "StoreError",
    "StoreUnavailableError",
    "describe_url",
    "import_driver",
    "missing_extra",
    "redact_url",
    "scrub",
    "translated",
]


class StoreUnavailableError(SportsPostsError):
    """A dedupe store or inbox could not be reached or failed; nothing was decided."""


class StoreError(StoreUnavailableError):
    """A store (PostgreSQL, Redis, SQLite) failed or is unreachable; the operation did not happen.

    ``.engine`` is ``"postgres"``, ``"redis"`` or ``"sqlite"``; ``.code`` the engine's error
    code when it gave one (a PostgreSQL SQLSTATE such as ``40P01``). The receiver answers 503
    on it, so the service retries the delivery.
    """

    def __init__(self, message: str, *, engine: str = "", code: Optional[str] = None) -> None:
        super().__init__(message)
        self.engine = engine
        self.code = code


class CoordinationError(StoreError):
    """Redis or PostgreSQL failed a statement of a lease, a fenced checkpoint or a call budget.

    Nothing was decided: a lease is not held, a draw is not granted. The message names the
    store and the driver's error (never a password). A ``StoreError`` like every store's.
    """


_SECRET_PARAMS = ("password", "pass", "passwd")


def redact_url(url: str) -> str:
    """``url`` with its password (netloc and ``?password=``) replaced by ``***``."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<unparsable url>"
    netloc = parts.netloc
    if password is not None:
        userinfo, _, hostport = netloc.rpartition("@")
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{hostport}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(name.lower() in _SECRET_PARAMS for name, _ in pairs):
            query = urlencode(
                [(n, "***" if n.lower() in _SECRET_PARAMS else v) for n, v in pairs], safe="*"
            )
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _passwords(url: str) -> set[str]:
    secrets: set[str] = set()
    try:
        parts = urlsplit(url)
        if parts.password:
            secrets |= {parts.password, unquote(parts.password)}
        for name, value in parse_qsl(parts.query, keep_blank_values=True):
            if name.lower() in _SECRET_PARAMS and value:
                secrets.add(value)
        raw = parts.query
        for piece in raw.split("&"):
            name, _, value = piece.partition("=")
            if name.lower() in _SECRET_PARAMS and value:
                secrets.add(value)
    except ValueError:
        pass
    return secrets


def scrub(text: str, url: Optional[str]) -> str:
    """``text`` with the URL's passwords (raw and percent-decoded) masked, in case a driver
    echoes them."""
    if url:
        for secret in sorted(_passwords(url), key=len, reverse=True):
            text = text.replace(secret, "***")
    return text


def _hosts(netloc: str) -> list[tuple[str, Optional[int]]]:
    """The hosts of a netloc, libpq's multi-host form included (``h1:5432,h2:5433``):
    ``ValueError`` for a port that is not a number."""
    hostlist = netloc.rpartition("@")[2]
    hosts: list[tuple[str, Optional[int]]] = []
    for piece in hostlist.split(","):
        parts = urlsplit(f"//{piece}")
        hosts.append((parts.hostname or "localhost", parts.port))
    return hosts


def describe_url(url: str) -> str:
    """``host:port/db`` of a connection URL (``h1:p1,h2:p2/db`` for several hosts): never
    its user's password."""
    try:
        parts = urlsplit(url)
        hosts = _hosts(parts.netloc)
    except ValueError:
        return "<unparsable url>"
    where = ",".join(f"{host}:{port}" if port else host for host, port in hosts)
    path = parts.path.strip("/")
    return f"{where}/{path}" if path else where


_EXTRAS = {"redis": "redis", "psycopg": "postgres"}


def missing_extra(owner: str, extra: str) -> StoreError:
    """The one error for a store used without its extra installed."""
    return StoreError(
        f"{owner} needs the {extra} extra: pip install 'sports-posts[{extra}]'", engine=extra
    )


def import_driver(module: str, owner: str) -> Any:
    """``redis``, ``redis.asyncio`` or ``psycopg``, or the missing-extra error."""
    extra = _EXTRAS[module.split(".", 1)[0]]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise missing_extra(owner, extra) from None


def check_url(url: str, schemes: tuple[str, ...], owner: str, parameter: str) -> str:
    """``url`` if its scheme is one of ``schemes`` and its ports numbers (libpq's multi-host
    form too): a mistyped URL is a ``ParameterError`` at construction, not a driver error at
    every call."""
    try:
        parts = urlsplit(url)
        _hosts(parts.netloc)  # a port that is not a number raises ValueError
    except ValueError:
        raise ParameterError(
            f"{owner}: not a valid URL: {redact_url(url)!r}", parameter=parameter
        ) from None
    if parts.scheme.lower() not in schemes:
        raise ParameterError(
            f"{owner}: expected a {schemes[0]}:// URL, got {redact_url(url)!r}", parameter=parameter
        )
    return url


@contextlib.contextmanager
def translated(
    owner: str,
    engine: str,
    driver_errors: tuple[type[BaseException], ...],
    url: Optional[str],
    error: type[StoreError] = StoreError,
) -> Iterator[None]:
    """Turn the driver's own errors (and socket errors) into ``error``, password scrubbed,
    cause dropped."""
    caught: tuple[type[BaseException], ...] = (*driver_errors, OSError)
    try:
        yield
    except StoreError:
        raise
    except caught as exc:
        code: Any = getattr(exc, "sqlstate", None)
        message = scrub(f"{owner}: {engine} failed ({type(exc).__name__}: {exc})".strip(), url)
        raise error(message, engine=engine, code=code) from None
