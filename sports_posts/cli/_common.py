"""The command line's internal API: what ``cli/__init__.py`` and its command modules
(``_posts``, ``_poll``, ``_webhooks``, ``_sandbox``, ``_ops``) share: argument
types, the filters of GET /posts, the client a command talks to, and the output,
escaped for a terminal."""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import re
import signal
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, Callable, Optional, TextIO, TypeVar

from .._client import SportsPosts
from .._errors import SportsPostsError
from .._vocabulary import WebhookHeaders
from ..models.post import Post
from ._format import format_post

# The exit statuses a script can tell apart (docs/cli.md, "Exit status"): pg_isready and
# systemctl give "nothing there" and "cannot reach" codes of their own, so do we.
EXIT_OK = 0
EXIT_ERROR = 1          # anything else that failed: bad input, a program that failed
EXIT_USAGE = 2          # the option parser refused the command line
EXIT_NOTHING = 3        # nothing there: no inbox, budget, lease, claim or dead letter of that name
EXIT_UNREACHABLE = 4    # a store could not be reached or gave no answer: nothing was decided
EXIT_REFUSED = 5        # refused: the store denied it (permissions, read-only) or it needs --force
EXIT_INTERRUPTED = 130
EXIT_CLOSED_PIPE = 141

# SQLSTATEs of a store that answered "no": insufficient privilege, a read-only transaction.
_REFUSED_CODES = frozenset({"42501", "25006"})


class NothingThere(SportsPostsError):
    """What the command was asked about does not exist at that store (exit status 3)."""


class Refused(SportsPostsError):
    """The command will not act without a confirmation, or the store denied it (exit status 5)."""


def exit_status(exc: SportsPostsError) -> int:
    """The exit status of a command that ended in ``exc``."""
    from .._stores import StoreUnavailableError

    if isinstance(exc, NothingThere):
        return EXIT_NOTHING
    if isinstance(exc, Refused):
        return EXIT_REFUSED
    if isinstance(exc, StoreUnavailableError):
        code = getattr(exc, "code", None)
        text = str(exc)
        if code in _REFUSED_CODES or "NOPERM" in text or "READONLY" in text:
            return EXIT_REFUSED
        return EXIT_UNREACHABLE
    return EXIT_ERROR


# (flag name, kind, help) for every filter of GET /posts; kinds: csv, str, float, int, bool, time
_POST_PARAMS: list[tuple[str, str, str]] = [
    ("leagues", "csv", "league codes, comma-separated, or ALL"),
    ("sports", "csv", "parent sports, comma-separated (soccer = football)"),
    ("teams", "csv", "team ids (at most 10; needs --id-type)"),
    ("players", "csv", "player ids (at most 100; needs --id-type)"),
    ("id_type", "str", "id system of --teams/--players (service, code, provider1_guid, ...)"),
    ("match", "csv", "two team ids: A,B (needs --start-time)"),
    ("start_time", "time", "game start, ISO 8601 with offset"),
    ("include_pregame", "bool", "include pregame posts of a game"),
    ("lat", "float", "latitude (nearby mode, with --lng)"),
    ("lng", "float", "longitude"),
    ("radius_km", "float", "search radius in km, up to 4830"),
    ("media_type", "str", "image, photo, video, gif, animated_gif or none"),
    ("aspect_ratio", "str", "landscape, portrait or square"),
    ("min_score", "float", "minimum engagement score 0-9"),
    ("min_duration", "int", "minimum video duration in ms"),
    ("highlight", "bool", "only highlight clips"),
    ("has_player", "bool", "only posts with a tagged player"),
    ("custom_sources", "bool", "include your custom sources"),
    ("user_location", "str", "ISO 3166-1 alpha-2 country code"),
    ("sort", "str", "recent, trending or top"),
    ("since", "time", "only posts created after this time"),
    ("since_id", "str", "only posts created after this post"),
    ("page", "int", "page to start from"),
]
MAX_PAGE_SIZE = 100  # the larger of the service's two documented maxima of `limit`
SECONDS_PER_DAY = 86400.0


_Number = TypeVar("_Number", int, float)


def converted(kind: Callable[[str], _Number], text: str, expected: str) -> _Number:
    """``text`` as ``kind`` (``int`` or ``float``), else the argument error saying it is not ``expected``."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {expected}: {text!r}") from None


def positive_int(text: str) -> int:
    value = converted(int, text, "a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def port(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535."""
    value = converted(int, text, "a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {value}")
    return value


def page_size(text: str) -> int:
    """``--page-size``: posts per call, refused in the words the user typed."""
    value = positive_int(text)
    if value > MAX_PAGE_SIZE:
        raise argparse.ArgumentTypeError(f"at most {MAX_PAGE_SIZE} posts per call, got {value}")
    return value


def timeout(text: str) -> float:
    """``--timeout``: seconds for a whole call, retries included."""
    value = converted(float, text, "a number of seconds")
    if not 0 < value <= SECONDS_PER_DAY:  # also refuses nan
        raise argparse.ArgumentTypeError(f"more than 0 and at most {SECONDS_PER_DAY:g} seconds, got {text}")
    return value


def path(text: str) -> str:
    """A file path or store URL argument: an empty one is refused (``""`` would name the
    current directory, or an SQLite database in memory), never taken as a file."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path: name a file")
    return text


def read_text_file(path: str, option: str, *, limit: int = 64 * 1024) -> str:
    """A short text file as editors write it: UTF-8 with or without a byte-order mark
    (Notepad), UTF-16 with one, CRLF or LF line ends, a trailing newline; surrounding
    whitespace removed. A ``SportsPostsError`` naming ``option`` for a file it cannot read,
    a file larger than ``limit`` bytes (refused in one line, never cut short and used), a
    file that is not text, or one that holds nothing."""
    from .._errors import SportsPostsError

    try:
        with open(path, "rb") as file:
            data = file.read(limit + 1)
    except OSError as exc:
        raise SportsPostsError(f"{option} {safe(path)}: {exc.strerror or 'cannot be read'}") from None
    if len(data) > limit:
        raise SportsPostsError(f"{option} {safe(path)}: larger than {limit:,} bytes, so not the short "
                               "text file it should be")
    try:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            text = data.decode("utf-16")
        else:
            text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SportsPostsError(f"{option} {safe(path)}: not a UTF-8 text file") from None
    text = text.strip()
    if not text:
        raise SportsPostsError(f"{option} {safe(path)} is empty")
    return text


# Text from outside (the service, a store, a file) reaches a terminal escaped: C0 and C1
# controls (ESC sequences clear the screen or write the clipboard, BEL rings, backspace hides
# text, a newline starts a record no one listed), DEL, line and paragraph separators, the
# bidirectional overrides that reorder what is shown, and lone surrogates (bytes that were
# not UTF-8), which no terminal or pipe can encode.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def safe(text: Any) -> str:
    """``text`` with every control character written as ``\\uXXXX``: visible on a
    terminal, one line whatever it holds, and still the same string inside a JSON line.
    Bytes are decoded, each byte that is not UTF-8 shown as ``\\xNN``."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", "backslashreplace")
    elif not isinstance(text, str):
        text = str(text)
    return _UNSAFE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def line(out: TextIO, *fields: Any) -> None:
    """The CLI's one way to print a record from outside: one line, each field escaped
    (``safe``), fields separated by a tab (a tab inside a field is escaped too)."""
    print("\t".join(safe(field) for field in fields), file=out)


def json_line(out: TextIO, value: Any) -> None:
    """``value`` as one line of JSON, valid whatever the bytes it holds: controls, separators
    and undecodable bytes escaped (bytes values decoded as ``safe`` shows them)."""
    import json

    def fallback(item: Any) -> Any:
        if isinstance(item, (bytes, bytearray, memoryview)):
            return bytes(item).decode("utf-8", "backslashreplace")
        return str(item)

    print(safe(json.dumps(value, sort_keys=True, default=fallback, ensure_ascii=False)), file=out)


def add_post_filters(parser: argparse.ArgumentParser, *, skip: frozenset[str] = frozenset()) -> None:
    group = parser.add_argument_group("filters of GET /posts")
    for name, kind, text in _POST_PARAMS:
        if name in skip:
            continue
        flag = "--" + name.replace("_", "-")
        if kind == "bool":
            group.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=text)
        else:
            convert: Callable[[str], Any] = {"float": float, "int": int}.get(kind, str)
            group.add_argument(flag, dest=name, type=convert, default=None, help=text)
    if "leagues" not in skip:
        group.add_argument("--league", dest="league", default=None, help=argparse.SUPPRESS)
    group.add_argument("--unchecked", action="store_true",
                       help="send --leagues, --media-type, --id-type and --user-location as written, "
                            "even values this version does not know or takes for a typo (a value the "
                            "service does not know is a billed error)")


def filters(args: argparse.Namespace, *, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    from .._params import Unchecked

    names = [n for n, _, _ in _POST_PARAMS if n not in skip]
    if "leagues" not in skip:
        names.append("league")
    given = {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
    if getattr(args, "unchecked", False):
        for name in ("leagues", "league", "media_type", "id_type", "user_location"):
            if name in given:
                given[name] = Unchecked(given[name])
    return given


# --------------------------------------------------------------------------- target


@contextlib.contextmanager
def connect(args: argparse.Namespace, err: TextIO) -> Iterator[SportsPosts]:
    """A client of the service the environment names, or of an embedded sandbox when asked
    for; one line on stderr says which, so a script never mistakes one for the other."""
    from ..sandbox._connect import choose_target, open_target

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        target = choose_target(True if args.sandbox or getattr(args, "sandbox_first", False) else None)
    for warning in caught:
        print(f"sports-posts: warning: {safe(warning.message)}", file=err)
    timeouts: dict[str, Any] = {}
    if getattr(args, "timeout", None) is not None:
        timeouts = {"timeout": args.timeout, "total_timeout": args.timeout}
    with open_target(target) as (key, url), SportsPosts(api_key=key, base_url=url, **timeouts) as client, \
            _retry_notices(err):
        if target.sandbox:
            print(f"sports-posts: using an embedded sandbox at {url} ({target.reason})", file=err)
        else:
            print(f"sports-posts: using the service at {url} (SPORTS_POSTS_BASE_URL)", file=err)
        yield client


class _RetryNotice(logging.Handler):
    """The SDK's retry log lines, as one notice each on stderr: a slow or failing service
    is not silence."""

    def __init__(self, err: TextIO) -> None:
        super().__init__(logging.INFO)
        self.err = err

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith("retrying in"):
            try:
                print(f"sports-posts: {safe(record.getMessage())}", file=self.err, flush=True)
            except Exception:  # a closed stderr: the notice is not worth a crash
                self.handleError(record)


@contextlib.contextmanager
def _retry_notices(err: TextIO) -> Iterator[None]:
    log = logging.getLogger("sports_posts")
    handler = _RetryNotice(err)
    level = log.level
    log.addHandler(handler)
    if not log.isEnabledFor(logging.INFO):
        log.setLevel(logging.INFO)
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


# --------------------------------------------------------------------------- output


def print_posts(posts: Sequence[Post], as_json: bool, out: TextIO) -> None:
    for post in posts:
        print(safe(post.model_dump_json() if as_json else format_post(post)), file=out)


def fresh_line(err: TextIO) -> str:
    """A newline on a terminal, where Ctrl-C left ``^C`` on the current line; nothing when
    stderr is a file or a pipe, whose lines are whole already."""
    isatty = getattr(err, "isatty", None)
    try:
        return "\n" if isatty and isatty() else ""
    except (OSError, ValueError):
        return ""


@contextlib.contextmanager
def _handling(signals: Sequence[int], handler: Callable[[int, Any], None]) -> Iterator[None]:
    """While active, ``signals`` call ``handler`` (in the main thread only, where Python runs
    handlers); the previous handlers come back on exit, so a process that called the command
    line in-process handles its signals as before once the command has returned."""
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in signals:
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, before in previous.items():
            if before is not None:  # None: a handler set outside Python, which cannot be put back
                signal.signal(sig, before)


def stop_on_sigterm(stop: Callable[[], None]) -> contextlib.AbstractContextManager[None]:
    """While active, SIGTERM calls ``stop``."""
    return _handling((signal.SIGTERM,), lambda *_: stop())


# --------------------------------------------------------------------------- servers

SERVER_GRACE = 10.0
"""Seconds a server (``sandbox``, ``webhooks listen``) gives the requests in flight once
told to stop: the service's own webhook timeout (spec 6.5), past which it counts a
delivery as failed and retries it anyway."""


class _StopServer(BaseException):
    """SIGINT or SIGTERM reached a server's main thread (raised by the handler, as Python
    raises ``KeyboardInterrupt``: the handler touches no lock)."""


def _raise_stop(signum: int, frame: Any) -> None:
    """A server's handler of SIGINT and SIGTERM: ``_StopServer`` with the signal's name."""
    raise _StopServer(signal.Signals(signum).name)


_SERVER_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def serve_until_signal(server: Any, thread: threading.Thread, finish: Callable[[], None],
                        err: TextIO, announce: Callable[[], None] = lambda: None) -> Optional[str]:
    """``announce`` the server, then block while the uvicorn ``server`` runs in ``thread``;
    on SIGINT or SIGTERM stop accepting, say so, then ``finish`` (let what is in flight end
    within its bound).

    The signals are handled from before the announcement: a supervisor that signals as
    soon as it reads the address gets the graceful stop, not the default death by SIGTERM.
    Returns the signal's name, or ``None`` when the server ended by itself. A second signal
    while finishing ends the wait at once (``finish`` has bounded what is left)."""
    try:
        with _handling(_SERVER_SIGNALS, _raise_stop):
            announce()
            while thread.is_alive():
                # A sleep, not thread.join(): a join the signal interrupts leaves the thread
                # looking stopped on Python < 3.11, though it still serves.
                time.sleep(0.5)
        return None
    except _StopServer as received:
        name = str(received)
    try:
        with _handling(_SERVER_SIGNALS, _raise_stop):
            _stop_accepting(server, thread)
            print(f"sports-posts: {name}: stopping (no new connections; requests in flight get up to "
                  f"{SERVER_GRACE:g} s)", file=err, flush=True)
            finish()
    except _StopServer:
        pass
    return name


def _stop_accepting(server: Any, thread: threading.Thread, bound: float = 5.0) -> None:
    """Tell a uvicorn server to stop, and return once its listening sockets are closed
    (uvicorn closes them first, before it waits for the requests in flight)."""
    server.should_exit = True
    deadline = time.monotonic() + bound
    while thread.is_alive() and time.monotonic() < deadline:
        if not any(s.is_serving() for s in list(getattr(server, "servers", None) or [])):
            return
        time.sleep(0.02)


class InFlight:
    """ASGI middleware that counts the HTTP requests in flight and those cut by a shutdown
    (cancelled before they answered)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.active = 0
        self.cut = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        import asyncio

        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        except asyncio.CancelledError:
            self.cut += 1
            raise
        finally:
            self.active -= 1


def listen_error(port: int, exc: OSError) -> str:
    """What a failed bind says: the address, the reason, and what to do."""
    reason = exc.strerror or str(exc)
    hint = ""
    if exc.errno == errno.EADDRINUSE:
        hint = " (another process listens there: pick another --port, or --port 0 for any free one)"
    elif exc.errno == errno.EACCES:
        hint = " (ports below 1024 need privileges: pick another --port)"
    return f"cannot listen on 127.0.0.1:{port}: {reason}{hint}"


def header_names(prefix: Optional[str]) -> Optional[WebhookHeaders]:
    """``--header-prefix``'s ``WebhookHeaders`` (``None``: the service's own names)."""
    return None if prefix is None else WebhookHeaders.with_prefix(prefix)
