"""The ``sports-posts`` command: a sandbox, the demo, and the endpoints from a shell.

It talks to the service named by ``SPORTS_POSTS_API_KEY`` and ``SPORTS_POSTS_BASE_URL``,
or to an embedded sandbox when asked for (``--sandbox``, no key, or a sandbox key), and
says which on stderr. Only this module and the demo print; the library logs and warns.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import re
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Callable, Optional, TextIO

from ._client import SportsPosts
from ._errors import NotFoundError, ParameterError, SportsPostsError
from ._format import align, cell, count, format_post, one_line, post_header
from ._version import __version__
from ._webhook_headers import WebhookHeaders
from .models.post import Post

__all__ = ["main"]

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
_POLLER_OWNS = {"since", "since_id", "page", "sort"}
MAX_PAGE_SIZE = 100  # the larger of the service's two documented maxima of `limit`
MIN_POLL_INTERVAL = 10.0
"""The shortest ``poll --interval`` (seconds): every cycle is at least one billed call."""
FREE_PLAN_CALLS_PER_MONTH = 200
"""The free plan's quota; ``poll`` keeps within it unless told otherwise."""
SECONDS_PER_DAY = 86400.0


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _port(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {value}")
    return value


def _page_size(text: str) -> int:
    """``--page-size``: posts per call, refused in the words the user typed."""
    value = _positive_int(text)
    if value > MAX_PAGE_SIZE:
        raise argparse.ArgumentTypeError(f"at most {MAX_PAGE_SIZE} posts per call, got {value}")
    return value


def _timeout(text: str) -> float:
    """``--timeout``: seconds for a whole call, retries included."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= SECONDS_PER_DAY:  # also refuses nan
        raise argparse.ArgumentTypeError(f"more than 0 and at most {SECONDS_PER_DAY:g} seconds, got {text}")
    return value


# Text from the service reaches a terminal escaped: C0 and C1 controls (ESC sequences clear
# the screen or write the clipboard, BEL rings, backspace hides text), DEL, line and
# paragraph separators, and the bidirectional overrides that reorder what is shown.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _safe(text: str) -> str:
    """``text`` with every control character written as ``\\uXXXX``: visible on a
    terminal, and still the same string inside a JSON line."""
    return _UNSAFE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def _poll_interval(text: str) -> float:
    """``poll --interval``: seconds, from the floor up to a day."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a number of seconds ({MIN_POLL_INTERVAL:g} to {SECONDS_PER_DAY:g}): {text!r}"
        ) from None
    if not (MIN_POLL_INTERVAL <= value <= SECONDS_PER_DAY):  # also refuses nan
        raise argparse.ArgumentTypeError(
            f"from {MIN_POLL_INTERVAL:g} to {SECONDS_PER_DAY:g} seconds (every cycle is a billed call), got {text}"
        )
    return value


def _add_post_filters(parser: argparse.ArgumentParser, *, skip: frozenset[str] = frozenset()) -> None:
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
                       help="send --leagues and --media-type as written, even values this version "
                            "does not know (a value the service does not know is a billed error)")


def _filters(args: argparse.Namespace, *, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    from ._params import Unchecked

    names = [n for n, _, _ in _POST_PARAMS if n not in skip]
    if "leagues" not in skip:
        names.append("league")
    given = {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
    if getattr(args, "unchecked", False):
        for name in ("leagues", "league", "media_type"):
            if name in given:
                given[name] = Unchecked(given[name])
    return given


# --------------------------------------------------------------------------- target


@contextlib.contextmanager
def _connect(args: argparse.Namespace, err: TextIO) -> Iterator[SportsPosts]:
    """A client of the service the environment names, or of an embedded sandbox when asked
    for; one line on stderr says which, so a script never mistakes one for the other."""
    from .sandbox._connect import choose_target, open_target

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        target = choose_target(True if args.sandbox or getattr(args, "sandbox_first", False) else None)
    for warning in caught:
        print(f"sports-posts: warning: {warning.message}", file=err)
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
                print(f"sports-posts: {_safe(record.getMessage())}", file=self.err, flush=True)
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


def _print_posts(posts: Sequence[Post], as_json: bool, out: TextIO) -> None:
    for post in posts:
        print(_safe(post.model_dump_json() if as_json else format_post(post)), file=out)


def _wait(event: threading.Event, seconds: float) -> bool:
    """Wait until ``event`` is set or ``seconds`` pass; True when set (tests replace this)."""
    return event.wait(seconds)


class _PollStatus:
    """The poller's waits, with a status line on a terminal (feed, next call in N s, calls
    spent) rewritten each second; a plain wait when stderr is not a terminal."""

    def __init__(self, err: TextIO, feed: str, calls: Callable[[], int]) -> None:
        self.err = err
        self.feed = feed
        self.calls = calls
        self.stopped = threading.Event()
        isatty = getattr(err, "isatty", None)
        self.live = bool(isatty and isatty())

    def sleep(self, seconds: float) -> None:
        if not self.live:
            _wait(self.stopped, seconds)
            return
        remaining = seconds
        try:
            while remaining > 0:
                self.err.write(f"\r{self.feed}: next call in {math.ceil(remaining)} s, "
                               f"{count(self.calls(), 'call')} spent\x1b[K")
                self.err.flush()
                step = min(1.0, remaining)
                if _wait(self.stopped, step):
                    break
                remaining -= step
        finally:
            self.err.write("\r\x1b[K")
            self.err.flush()

    def stop(self) -> None:
        self.stopped.set()


def _feed(filters: dict[str, Any]) -> str:
    """The poll command's feed in a few words: its filters, or trending."""
    return " ".join(f"{name}={value}" for name, value in filters.items()) or "trending"


# --------------------------------------------------------------------------- commands


def _cmd_posts(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    # --limit is the number of posts wanted; each call asks for as many as it may (up to
    # 100), so N <= 100 posts cost one call with `limit=N` on the wire.
    page_size = args.page_size or min(args.limit, MAX_PAGE_SIZE)
    calls = math.ceil(args.limit / page_size)
    if calls > args.max_calls:
        raise SportsPostsError(
            f"--limit {args.limit} with --page-size {page_size} needs up to {count(calls, 'call')}, "
            f"over --max-calls {args.max_calls}: raise --max-calls (or --page-size, up to {MAX_PAGE_SIZE})"
        )
    with _connect(args, err) as client:
        page = client.posts.list(**_filters(args), limit=page_size)
        posts = list(page.iter_items(max_items=args.limit, max_pages=calls))
        if not args.json:
            print(post_header(), file=out)
        _print_posts(posts, args.json, out)
        print(f"{count(len(posts), 'post')}, {count(client.calls, 'call')}", file=err)
    return 0


class _PollBudget:
    """What ``poll`` may spend: a pace per day for the poller, and the calls left in this
    billing cycle under a monthly cap (``None``: no cap), with the line that says so."""

    def __init__(self, per_day: Optional[int], cap: Optional[int], used: int, projection: str) -> None:
        self.per_day = per_day
        self.cap = cap
        self.used = used
        self.month_left = None if cap is None else cap - used
        self.projection = projection


def _poll_budget(args: argparse.Namespace, client: SportsPosts) -> _PollBudget:
    """The budget of ``poll`` from its flags, else from the plan: account information is
    free, and a free plan's month is spread over the days left in its billing cycle."""
    from datetime import datetime, timezone

    info = client.account.information()
    used = info.usage.current_calls or 0
    cap, whose = args.max_calls_per_month, "--max-calls-per-month"
    if cap is None and str(info.company.plan or "").lower() == "free":
        cap, whose = FREE_PLAN_CALLS_PER_MONTH, "the free plan's quota"
    per_day, why = args.max_calls_per_day, "--max-calls-per-day"
    month_left = None
    if cap is not None:
        month_left = cap - used
        if month_left <= 0:
            raise SportsPostsError(
                f"{used} of {cap} calls of this billing cycle are used ({whose}): polling would spend "
                "calls past it; raise --max-calls-per-month to poll anyway"
            )
        if per_day is None:
            end = info.billing_cycle.current_period_end
            days = 30.0 if end is None else (end - datetime.now(timezone.utc)).total_seconds() / SECONDS_PER_DAY
            days = max(1.0, days)
            per_day = max(1, math.floor(month_left / days))
            why = (f"{month_left} calls left of {cap} this billing cycle ({whose}) over "
                   f"{count(math.ceil(days), 'day')}; set --max-calls-per-day to change it")
    cycles = math.ceil(SECONDS_PER_DAY / args.interval)
    if per_day is not None and per_day < cycles:
        projection = f"at most {per_day:,} calls a day ({why})"
    else:
        projection = (f"about {cycles:,} calls a day, one a cycle every {args.interval:g} s (more when a "
                      "cycle needs several pages; --max-calls-per-day caps it)")
    return _PollBudget(per_day, cap, used, projection)


def _cmd_poll(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .polling import FileCheckpoint, Poller

    checkpoint = FileCheckpoint(args.checkpoint) if args.checkpoint else None
    filters = _filters(args, skip=frozenset(_POLLER_OWNS))
    status = _PollStatus(err, _feed(filters), lambda: poller.calls)
    if args.page_size is not None:
        filters["limit"] = args.page_size
    with _connect(args, err) as client:
        budget = _poll_budget(args, client)
        print(f"sports-posts: poll: {budget.projection}", file=err)
        spent = False

        def sleep(seconds: float) -> None:
            nonlocal spent
            # Checked before each wait, so the cycle that reaches the cap is the last one.
            if budget.month_left is not None and poller.calls >= budget.month_left:
                spent = True
                stop()
                return
            status.sleep(seconds)

        poller = Poller(client, since=args.since, interval=args.interval, checkpoint=checkpoint,
                        filters=filters, sleep=sleep, max_calls_per_day=budget.per_day)

        def stop() -> None:
            poller.stop()
            status.stop()

        _stop_on_sigterm(stop)
        batches = 0
        interrupted = False
        try:
            # Ctrl-C inside the with-block leaves the batch being printed uncommitted, so a
            # restart prints it again rather than losing its unprinted half.
            with poller:
                for batch in poller:
                    if not args.json and batches == 0:
                        print(post_header(), file=out)
                    _print_posts(batch, args.json, out)
                    out.flush()
                    batches += 1
                    if args.max_batches and batches >= args.max_batches:
                        break
        except KeyboardInterrupt:
            interrupted = True
        print(f"{count(batches, 'batch', 'batches')}, {count(poller.calls, 'call')}", file=err)
        if spent:
            print(f"sports-posts: error: stopped at the monthly cap: {budget.used + poller.calls} of "
                  f"{budget.cap} calls of this billing cycle used (raise --max-calls-per-month to go on)",
                  file=err)
            return 1
    return 130 if interrupted else 0


def _stop_on_sigterm(stop: Callable[[], None]) -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop())


def _cmd_account(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with _connect(args, err) as client:
        if args.x_ids:
            compliance = client.account.x_ids()
            if args.json:
                print(_safe(compliance.model_dump_json()), file=out)
            else:
                print(f"as of {compliance.as_of}: {count(len(compliance.ids_to_delete), 'post id')} to delete",
                      file=out)
                for post_id in compliance.ids_to_delete:
                    print(_safe(post_id), file=out)
            return 0
        info = client.account.information()
        if args.json:
            print(_safe(info.model_dump_json()), file=out)
        else:
            c, b, u = info.company, info.billing_cycle, info.usage
            print(_safe(f"company       {c.name}"), file=out)
            print(_safe(f"plan          {c.plan} ({c.subscription_status})"), file=out)
            print(f"billing cycle {b.current_period_start} .. {b.current_period_end}", file=out)
            print(f"calls used    {u.current_calls}", file=out)
    return 0


def _cmd_teams(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    league = args.league_option or args.league
    if not league or (args.league_option and args.league and args.league_option != args.league):
        raise SportsPostsError("name one league: sports-posts teams --league NBA")
    with _connect(args, err) as client:
        try:
            teams = client.ids.teams(league, reference_id=args.reference_id, lookup=args.lookup)
        except NotFoundError as exc:
            if args.lookup is None or args.reference_id:
                raise
            # The lookup value is a service id unless --reference-id names another system.
            print(f"sports-posts: error: {type(exc).__name__}: {_safe(str(exc))}", file=err)
            print(f"sports-posts: hint: --lookup matches service ids; to look a team up by another id, name "
                  f"it: --reference-id code (or nba_id, ...), as in sports-posts teams --league "
                  f"{_safe(league)} --lookup {_safe(args.lookup)} --reference-id code", file=err)
            return 1
        if args.json:
            for team in teams:
                print(_safe(team.model_dump_json()), file=out)
        else:
            header = ["service_id", "team", "conference", "division"]
            if args.reference_id:
                header.append(args.reference_id)
            rows = [header]
            for team in teams:
                row = [str(team.service_id), f"{team.location} {team.name}", team.conference or "-",
                       team.division or "-"]
                if args.reference_id:
                    row.append(str(team.reference if team.reference is not None else "-"))
                rows.append(row)
            for line in align(rows, right=[0]):
                print(_safe(line), file=out)
        print(count(len(teams), "team"), file=err)
    return 0


def _webhook_secret(args: argparse.Namespace, err: TextIO) -> str:
    """The signing secret from ``--secret-file``, else the deprecated ``--secret`` (which
    ``ps`` and the shell history show), else ``SPORTS_POSTS_WEBHOOK_SECRET``."""
    if args.secret is not None:
        print("sports-posts: warning: --secret is deprecated: the command line is visible to every user "
              "of the machine (ps); use --secret-file PATH or SPORTS_POSTS_WEBHOOK_SECRET", file=err)
    if args.secret_file is not None:
        try:
            with open(args.secret_file, encoding="utf-8") as file:
                from_file = file.read(64 * 1024).strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a UTF-8 text file"
            raise SportsPostsError(f"--secret-file {_safe(args.secret_file)}: {reason}") from None
        if not from_file:
            raise SportsPostsError(f"--secret-file {_safe(args.secret_file)} is empty")
        return from_file
    secret = args.secret or os.environ.get("SPORTS_POSTS_WEBHOOK_SECRET")
    if not secret:
        raise SportsPostsError("no signing secret: pass --secret-file PATH or set SPORTS_POSTS_WEBHOOK_SECRET")
    return str(secret)


def _header_names(prefix: Optional[str]) -> Optional[WebhookHeaders]:
    """``--header-prefix``'s ``WebhookHeaders`` (``None``: the service's own names)."""
    return None if prefix is None else WebhookHeaders.with_prefix(prefix)


def _cmd_webhooks_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .webhooks import (
        DEFAULT_TOLERANCE,
        ReplayedWebhookError,
        SignatureVerificationError,
        construct_event,
        verify_signature,
    )

    names = _header_names(args.header_prefix) or WebhookHeaders()
    body = sys.stdin.buffer.read() if args.body == "-" else Path(args.body).read_bytes()
    secret = _webhook_secret(args, err)
    try:
        verify_signature(body, args.signature, secret, header_names=names)
    except SignatureVerificationError as exc:
        print(_safe(f"invalid: {exc}"), file=out)
        return 1
    try:
        event = construct_event(body, {names.signature: args.signature}, secret, header_names=names)
    except SportsPostsError as exc:
        print(_safe(f"valid signature, but the body is not an event: {exc}"), file=out)
        return 1
    what = _safe(f"{event.event} {event.data.id} ({event.data.league}, {event.data.news_type})")
    try:
        construct_event(body, {names.signature: args.signature}, secret, header_names=names,
                        tolerance=DEFAULT_TOLERANCE)
    except ReplayedWebhookError as exc:
        print(f"outside the replay window: {what}: {_safe(str(exc))}; the signature is genuine, but a "
              "receiver refuses this body now (a replay, or a delivery kept too long)", file=out)
        return 1
    print(f"valid: {what}", file=out)
    return 0


def webhook_listener_app(secret: str, out: TextIO, *, header_names: Optional[WebhookHeaders] = None) -> Any:
    """The ASGI app of ``webhooks listen``: verify, de-duplicate, print each event once."""
    from .webhooks import WebhookReceiver
    from .webhooks.adapters.asgi import WebhookASGIApp

    lock = threading.Lock()

    def show(event: Any) -> None:
        data = event.data
        line = "  ".join([cell(event.event, 20), cell(str(data.id), 20), cell(data.league or "-", 7),
                          cell(data.news_type or "-", 18), one_line(data.text, 70)])
        with lock:
            print(_safe(line), file=out, flush=True)

    return WebhookASGIApp(WebhookReceiver(secret, show, header_names=header_names))


def _cmd_webhooks_listen(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        import uvicorn
    except ImportError:
        raise SportsPostsError("webhooks listen needs uvicorn: pip install 'sports-posts[sandbox]'") from None
    import socket

    app = webhook_listener_app(_webhook_secret(args, err), out, header_names=_header_names(args.header_prefix))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # Bound here, before saying so: a port in use is one clear line, and port 0 shows the
        # port the system chose.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", args.port))
    except OSError as exc:
        sock.close()
        raise SportsPostsError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}") from None
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    print(f"listening on http://127.0.0.1:{port}/ (POST any path); Ctrl-C to stop", file=err, flush=True)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
    return 0


def _cmd_sandbox(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .sandbox import Sandbox

    stop = threading.Event()
    _stop_on_sigterm(stop.set)
    with Sandbox(seed=args.seed, port=args.port, posts_per_minute=args.posts_per_minute,
                 profile=args.profile, author_shape=args.author_shape,
                 webhook_header_names=_header_names(args.webhook_header_prefix)) as sb:
        print(f"base URL  {sb.base_url}", file=out)
        print(f"API key   {sb.api_key}", file=out)
        print(f"export SPORTS_POSTS_BASE_URL={sb.base_url} SPORTS_POSTS_API_KEY={sb.api_key}", file=out)
        print("serving; Ctrl-C to stop", file=err)
        out.flush()
        try:
            while not stop.wait(3600):
                pass
        except KeyboardInterrupt:
            pass
    return 0


def _cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ._demo import run_demo

    return run_demo(out, seed=args.seed)


# --------------------------------------------------------------------------- parser


_HEADER_PREFIX_HELP = ("read PREFIX-Signature and PREFIX-Delivery instead of X-Service-* "
                       "(headers renamed by a proxy or a white-label deployment)")


def _add_secret_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--secret-file", metavar="PATH", default=None,
                        help="file holding the signing secret (default: SPORTS_POSTS_WEBHOOK_SECRET)")
    parser.add_argument("--secret", default=None, metavar="SECRET",
                        help="deprecated: the signing secret itself, which ps shows to every user; "
                             "use --secret-file or SPORTS_POSTS_WEBHOOK_SECRET")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sports-posts",
        description="Sports Posts from the command line. Uses the service named by "
        "SPORTS_POSTS_API_KEY and SPORTS_POSTS_BASE_URL; --sandbox (or no key, or a key "
        "starting with sp_sandbox_) uses an embedded sandbox instead.",
    )
    parser.add_argument("--version", action="version", version=f"sports-posts {__version__}")
    # Also accepted before the command (its own dest: a subcommand's default would reset it).
    parser.add_argument("--sandbox", dest="sandbox_first", action="store_true",
                        help="use an embedded sandbox, even when the environment names a service")
    sub = parser.add_subparsers(dest="command", required=True)

    # What every command that calls the service takes.
    service = argparse.ArgumentParser(add_help=False)
    service.add_argument("--sandbox", action="store_true",
                         help="use an embedded sandbox, even when the environment names a service")
    service.add_argument("--timeout", type=_timeout, default=None, metavar="SECONDS",
                         help="give up on a call after this many seconds, retries included (default: 30 s "
                              "per attempt); each retry is announced on stderr")

    p = sub.add_parser("sandbox", help="serve a local sandbox of the service",
                       description="Serve the whole service (and its /_sandbox admin routes) on "
                       "127.0.0.1 until Ctrl-C or SIGTERM; prints its base URL and API key.")
    p.add_argument("--port", type=_port, default=8080, help="loopback port to listen on, 0 for any free one "
                   "(default 8080)")
    p.add_argument("--seed", type=int, default=7, help="seed of the world and the keys: same seed, same data (default 7)")
    p.add_argument("--posts-per-minute", type=float, default=2.0,
                   help="live posts that appear per minute (default 2; 0 = none)")
    p.add_argument("--profile", default="strict", choices=["strict", "lenient"],
                   help="strict (default): every open point of the specification read against the client; "
                        "lenient: the forgiving behaviour of earlier releases, for demos")
    p.add_argument("--author-shape", default=None, choices=["flat", "nested", "both", "mixed"],
                   help="author form in posts: flat fields, nested object, both, or one of the "
                        "two per post (default: mixed in the strict profile, both in the lenient one)")
    p.add_argument("--webhook-header-prefix", metavar="PREFIX", default=None,
                   help="send webhooks under PREFIX-Event, -Delivery, -Signature instead of X-Service-* "
                        "(as a renaming proxy would)")
    p.set_defaults(run=_cmd_sandbox)

    p = sub.add_parser("demo", help="the end-to-end demo against an embedded sandbox")
    p.add_argument("--seed", type=int, default=7, help="seed of the sandbox's world (default 7)")
    p.set_defaults(run=_cmd_demo)

    p = sub.add_parser("posts", parents=[service], help="GET /posts with any filter",
                       description="Print --limit posts (default 20) matching the filters, spending as few "
                       "calls as that needs: one call for up to 100 posts.")
    _add_post_filters(p)
    p.add_argument("--limit", type=_positive_int, default=20, help="how many posts to print (default 20)")
    p.add_argument("--page-size", type=_page_size, default=None,
                   help=f"posts per call, 1-{MAX_PAGE_SIZE} (default: --limit, up to {MAX_PAGE_SIZE})")
    p.add_argument("--max-calls", type=_positive_int, default=10,
                   help="refuse, before any call, a --limit that needs more calls than this (default 10)")
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.set_defaults(run=_cmd_posts)

    p = sub.add_parser("poll", parents=[service], help="print new posts as they appear, each once",
                       description="Print new posts as they appear, each once, oldest first. Every cycle "
                       "is a billed call: it starts by saying how many calls a day it may spend (from "
                       "the budget flags, else from the plan, read for free). On a terminal a status "
                       "line shows the feed, the next call and the calls spent.")
    _add_post_filters(p, skip=frozenset(_POLLER_OWNS))
    p.add_argument("--since", default=None, help="start here when the checkpoint is empty")
    p.add_argument("--interval", type=_poll_interval, default=60.0,
                   help=f"seconds between cycles, {MIN_POLL_INTERVAL:g} or more (default 60)")
    p.add_argument("--max-calls-per-day", type=_positive_int, default=None, metavar="N",
                   help="wait rather than spend more than N calls a day (default: the calls left in "
                        "the month spread over the days left, when there is a monthly cap)")
    p.add_argument("--max-calls-per-month", type=_positive_int, default=None, metavar="N",
                   help="stop before the account's calls this billing cycle pass N (default: 200 on "
                        "the free plan, none on a paid plan)")
    p.add_argument("--page-size", type=_page_size, default=None, help=f"posts per call, 1-{MAX_PAGE_SIZE}")
    p.add_argument("--checkpoint", default=None, help="a file that keeps the position across restarts")
    p.add_argument("--max-batches", type=_positive_int, default=None, help="stop after this many batches")
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.set_defaults(run=_cmd_poll)

    p = sub.add_parser("account", parents=[service], help="account information (free), or --x-ids")
    p.add_argument("--x-ids", action="store_true", help="the post ids to delete for compliance")
    p.add_argument("--json", action="store_true", help="JSON instead of text")
    p.set_defaults(run=_cmd_account)

    p = sub.add_parser("teams", parents=[service], help="the teams of a league (GET /ids?entity=teams)",
                       usage="sports-posts teams [-h] --league LEAGUE [--reference-id ID] [--lookup VALUE] "
                       "[--json] [--sandbox]",
                       description="The teams of a league, alphabetical by location.",
                       epilog="example: sports-posts teams --league NBA --reference-id nba_id")
    p.add_argument("--league", dest="league_option", metavar="LEAGUE", default=None,
                   help="league code: NFL, NBA, MLB, NHL, ... (also accepted without --league)")
    p.add_argument("league", nargs="?", default=None, help=argparse.SUPPRESS)
    p.add_argument("--reference-id", metavar="ID", default=None, help="add this id column (nba_id, code, ...)")
    p.add_argument("--lookup", metavar="VALUE", default=None, help="only the team matching this value")
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.set_defaults(run=_cmd_teams)

    p = sub.add_parser("webhooks", help="verify a saved delivery, or listen for deliveries")
    wsub = p.add_subparsers(dest="webhooks_command", required=True)
    w = wsub.add_parser("verify", help="check a saved body against its X-Service-Signature",
                        description="Check a saved body against its signature, then its sent_at against "
                        "the replay window a receiver applies.")
    w.add_argument("body", help="file with the raw body, or - for stdin")
    w.add_argument("--signature", required=True, help="the X-Service-Signature value")
    _add_secret_options(w)
    w.add_argument("--header-prefix", metavar="PREFIX", default=None, help=_HEADER_PREFIX_HELP)
    w.set_defaults(run=_cmd_webhooks_verify)
    w = wsub.add_parser("listen", help="a local receiver that prints verified events")
    w.add_argument("--port", type=_port, default=8000,
                   help="loopback port to listen on, 0 for any free one (default 8000)")
    _add_secret_options(w)
    w.add_argument("--header-prefix", metavar="PREFIX", default=None, help=_HEADER_PREFIX_HELP)
    w.set_defaults(run=_cmd_webhooks_listen)
    from ._cli_ops import add_commands  # compliance, inbox, budget, lease

    add_commands(sub, service, _connect)
    return parser


def main(argv: Optional[Sequence[str]] = None, *, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Entry point of the ``sports-posts`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args, out, err)
        out.flush()  # here, where a closed pipe is caught, rather than at the interpreter's exit
        return status
    except KeyboardInterrupt:
        print("\nsports-posts: interrupted", file=err)
        return 130
    except BrokenPipeError:
        # The reader went away (`| head -1`): stop quietly, as git and gh do.
        _quiet_stdout(out)
        return 141
    except ParameterError as exc:
        print(f"sports-posts: error: {type(exc).__name__}: {_safe(_in_flags(exc))}", file=err)
        return 1
    except SportsPostsError as exc:
        print(f"sports-posts: error: {type(exc).__name__}: {_safe(str(exc))}", file=err)
        return 1
    except (OSError, ValueError) as exc:
        print(f"sports-posts: error: {_safe(str(exc))}", file=err)
        return 1


def _quiet_stdout(out: TextIO) -> None:
    """Point a closed pipe of stdout at /dev/null, so the interpreter's last flush at exit
    does not fail again with a second "Broken pipe" message."""
    if out is not sys.stdout:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real descriptor behind stdout
        pass


_OWN_NAMES = {"limit": "--page-size"}
"""Parameters the CLI fills itself, by the option that sets them."""


def _in_flags(exc: ParameterError) -> str:
    """The SDK's message in the words the user typed: ``--media-type`` for ``media_type``,
    and ``--unchecked`` where the SDK suggests ``Unchecked(...)``."""
    text = str(exc)
    name = exc.parameter
    if name and text.startswith(name + ":"):
        flag = _OWN_NAMES.get(name) or "--" + name.replace("_", "-")
        text = flag + text[len(name):]
    cut = text.find(" To send a value the service added")
    if cut >= 0:
        text = text[:cut] + " To send a value the service added after this version, add --unchecked."
    return text


if __name__ == "__main__":
    sys.exit(main())

