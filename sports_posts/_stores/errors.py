"""The one error family of every store, and connection strings shown without their secrets.

A driver's exception never leaves a store: it becomes a ``StoreError`` naming the engine and
what failed, with every secret of the connection string scrubbed (a URL's password, a secret
query parameter such as ``?password=`` or ``?sslpassword=``, a libpq keyword DSN's
``password=``) and the driver's exception dropped as a cause (it may hold the connection
string). ``redact_url`` is the one redaction routine for every form a driver accepts.
"""

from __future__ import annotations

import contextlib
import importlib
import re
from collections.abc import Callable, Iterator
from typing import Any, Optional
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from .._errors import ParameterError, SportsPostsError

__all__ = [
    "SCHEMES",
    "CoordinationError",
    "CoordinationPoolerUnreachableError",
    "PoolerUnreachableError",
    "StoreError",
    "StoreUnavailableError",
    "describe_url",
    "has_control",
    "import_driver",
    "is_keyword_dsn",
    "is_secret",
    "missing_extra",
    "pooler_cannot_reach_server",
    "pooler_unreachable",
    "redact_url",
    "scrub",
    "store_kind",
    "store_repr",
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


# A connection parameter whose value is a secret: libpq's ``password`` and ``sslpassword``
# (the client key's passphrase), redis-py's ``password`` and ``sentinel_password``, and any
# ``*pass*``, ``*secret*``, ``*token*`` or ``*credential*`` a driver or a proxy may take.
class PoolerUnreachableError(StoreError):
    """A connection pooler in front of PostgreSQL (PgBouncer) answered, but cannot reach its
    server (``server login has been failing``): after a failover, point its ``[databases]``
    at the new primary and ``RELOAD`` it; PgBouncer does not fail over by itself. Nothing
    was decided."""


class CoordinationPoolerUnreachableError(PoolerUnreachableError, CoordinationError):
    """``PoolerUnreachableError`` of a lease, a fenced checkpoint or a call budget (also a
    ``CoordinationError``, as every failure of those)."""


_SECRET_WORDS = ("pass", "secret", "token", "credential")

# A control character (a second line of a file, a NUL, an escape) has no place in a
# connection string: ``urlsplit`` drops some of them silently, which turns two lines into one.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")

# libpq's keyword form, ``host=db port=5432 dbname=app user=app password=...``: its values
# are bare words or single-quoted strings with backslash escapes.
_KEYWORD = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=")
_PAIR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^'\\]|\\.)*'?|[^\s']*)")
_LIBPQ_KEYWORDS = frozenset({"host", "hostaddr", "port", "dbname", "user", "password", "service", "sslmode"})

MAX_URL_LENGTH = 8192
"""The longest connection string a store takes: a longer one is a file's whole content, not a URL."""


def is_secret(name: str) -> bool:
    """Whether the connection parameter ``name`` holds a secret (its value is never shown)."""
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (a newline, a NUL, an escape)."""
    return _CONTROL.search(text) is not None


def is_keyword_dsn(text: str) -> bool:
    """Whether ``text`` is libpq's keyword form (``host=... dbname=...``) rather than a URL or a path."""
    if "://" in text or _KEYWORD.match(text) is None:
        return False
    return any(name.lower() in _LIBPQ_KEYWORDS for name, _ in _PAIR.findall(text))


def _conninfo(text: str) -> Optional[dict[str, Any]]:
    """A keyword DSN's parameters as libpq reads them (psycopg's parser), or ``None`` when
    psycopg is not installed or the string is not one libpq accepts."""
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        return None
    try:
        return dict(conninfo_to_dict(text))
    except Exception:  # psycopg.ProgrammingError for a malformed string: never echoed
        return None


def _quoted(value: object) -> str:
    text = str(value)
    if text and not any(c.isspace() or c in "'\\" for c in text):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _redact_keywords(text: str) -> str:
    params = _conninfo(text)
    if params is None:
        return "<unparsable connection string>"
    return " ".join(f"{name}={'***' if is_secret(name) else _quoted(value)}" for name, value in params.items())


def redact_url(url: str) -> str:
    """``url`` with every secret (the netloc's password, each secret query parameter, a
    keyword DSN's secret values) replaced by ``***``; a string with a control character, or
    one that cannot be parsed, is not shown at all."""
    if has_control(url):
        return "<connection string with a control character>"
    if len(url) > MAX_URL_LENGTH:
        return f"<connection string of {len(url):,} characters>"
    if is_keyword_dsn(url):
        return _redact_keywords(url)
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
        if any(is_secret(name) for name, _ in pairs):
            query = urlencode([(n, "***" if is_secret(n) else v) for n, v in pairs], safe="*")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _passwords(url: str) -> set[str]:
    """Every secret value ``url`` holds, in each spelling a driver may echo it."""
    secrets: set[str] = set()
    if "://" not in url:  # a keyword DSN, parsed or not: every value of a secret keyword
        for name, value in _PAIR.findall(url):
            if is_secret(name) and value.strip("'"):
                secrets |= {value, value.strip("'")}
        for name, value in (_conninfo(url) or {}).items():
            if is_secret(name) and value:
                secrets.add(str(value))
        return secrets
    try:
        parts = urlsplit(url)
        if parts.password:
            secrets |= {parts.password, unquote(parts.password)}
        for name, value in parse_qsl(parts.query, keep_blank_values=True):
            if is_secret(name) and value:
                secrets.add(value)
        for piece in parts.query.split("&"):
            name, _, value = piece.partition("=")
            if is_secret(name) and value:
                secrets |= {value, unquote(value)}
    except ValueError:
        pass
    return secrets


def scrub(text: str, url: Optional[str]) -> str:
    """``text`` with the URL's secrets (raw and percent-decoded) masked, in case a driver
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
    """``host:port/db`` of a connection URL (``h1:p1,h2:p2/db`` for several hosts) or keyword
    DSN: never its user's password."""
    if has_control(url) or len(url) > MAX_URL_LENGTH:
        return redact_url(url)
    if is_keyword_dsn(url):
        params = _conninfo(url)
        if params is None:
            return "<unparsable connection string>"
        names, ports = str(params.get("host", "localhost")).split(","), str(params.get("port", "")).split(",")
        where = ",".join(f"{name}:{ports[min(i, len(ports) - 1)]}" if ports[0] else name for i, name in enumerate(names))
        return f"{where}/{params['dbname']}" if params.get("dbname") else where
    try:
        parts = urlsplit(url)
        hosts = _hosts(parts.netloc)
    except ValueError:
        return "<unparsable url>"
    where = ",".join(f"{host}:{port}" if port else host for host, port in hosts)
    path = parts.path.strip("/")
    return f"{where}/{path}" if path else where


SCHEMES: dict[str, tuple[str, ...]] = {
    "redis": ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster", "redis+sentinel", "rediss+sentinel"),
    "postgres": ("postgresql", "postgres"),
    "sqlite": ("sqlite", "file"),
}
"""Every store URL scheme, by engine: the one table the stores and the command line read."""


def store_repr(url: Optional[str], where: Callable[[], str], scheme: str) -> str:
    """A store's repr: its URL, password redacted (``'redis://:***@host:port/0'``), else
    ``where()`` (host, port and database of the client or pool it was given), as a URL of
    ``scheme`` unless it is a ``<placeholder>``; never a password."""
    if url is not None:
        return repr(redact_url(url))
    place = where()
    return repr(place if place.startswith("<") else f"{scheme}://{place}")


def store_kind(target: str) -> str:
    """``"redis"``, ``"postgres"`` or ``"sqlite"`` for a store URL (a libpq keyword DSN is
    PostgreSQL's, a plain path SQLite's), or ``""`` for a scheme no store takes."""
    if "://" not in target:
        return "postgres" if is_keyword_dsn(target) else "sqlite"
    scheme = target.split("://", 1)[0].lower()
    return next((kind for kind, schemes in SCHEMES.items() if scheme in schemes), "")


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
    form too), or, for PostgreSQL, libpq's keyword form (``host=db dbname=app ...``, as psycopg
    takes it): a mistyped URL is a ``ParameterError`` at construction, not a driver error at
    every call. The error never shows a secret, nor a string with a control character."""
    if has_control(url):
        raise ParameterError(
            f"{owner}: the connection string holds a control character (a second line, a NUL?); "
            "it is not shown", parameter=parameter)
    if len(url) > MAX_URL_LENGTH:
        raise ParameterError(
            f"{owner}: a connection string of {len(url):,} characters is not one (at most "
            f"{MAX_URL_LENGTH:,}); it is not shown", parameter=parameter)
    if "postgresql" in schemes and is_keyword_dsn(url):
        import_driver("psycopg", owner)
        if _conninfo(url) is None:
            raise ParameterError(
                f"{owner}: not a valid libpq connection string (keyword=value pairs); it is not shown",
                parameter=parameter)
        return url
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
        if engine == "postgres" and pooler_cannot_reach_server(str(exc)):
            raise pooler_unreachable(message, error, code) from None
        raise error(message, engine=engine, code=code) from None


# What PgBouncer answers when its server is gone (a failover it cannot follow by itself).
_POOLER_LOST = ("server login has been failing", "pgbouncer cannot connect to server")


def pooler_cannot_reach_server(text: str) -> bool:
    """Whether a driver's error is a pooler saying it cannot reach its PostgreSQL server."""
    lowered = text.lower()
    return any(sign in lowered for sign in _POOLER_LOST)


def pooler_unreachable(message: str, error: type[StoreError], code: Optional[str]) -> StoreError:
    """The typed error of a pooler that cannot reach its server, with the step to take."""
    cls = CoordinationPoolerUnreachableError if issubclass(error, CoordinationError) else PoolerUnreachableError
    return cls(
        f"{message}: the connection pooler (PgBouncer) answers but cannot reach its PostgreSQL server; "
        "after a failover, point its [databases] at the new primary and RELOAD it (docs/fleet.md, Failover)",
        engine="postgres", code=code)
