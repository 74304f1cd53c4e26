"""The ``sports-posts`` command: a sandbox, the demo, and the endpoints from a shell.

It talks to the service named by ``SPORTS_POSTS_API_KEY`` and ``SPORTS_POSTS_BASE_URL``,
or to an embedded sandbox when asked for (``--sandbox``, no key, or a sandbox key), and
says which on stderr. Only this module and the demo print; the library logs and warns.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Callable, Optional, TextIO

from ._client import SportsPosts
from ._errors import SportsPostsError
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
    ("media_type", "str", "image, photo, video, gif, animated_gif, none"),
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
MAX_PAGE_SIZE = 100  # the larger of the spec's two documented maxima of `limit`


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _add_post_filters(parser: argparse.ArgumentParser, *, skip: frozenset[str] = frozenset()) -> None:
    group = parser.add_argument_group("filters (spec 4.1)")
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


def _filters(args: argparse.Namespace, *, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    names = [n for n, _, _ in _POST_PARAMS if n not in skip]
    if "leagues" not in skip:
        names.append("league")
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


# --------------------------------------------------------------------------- target


@contextlib.contextmanager
def _connect(args: argparse.Namespace, err: TextIO) -> Iterator[SportsPosts]:
    """A client of the service the environment names, or of an embedded sandbox when asked
    for; one line on stderr says which, so a script never mistakes one for the other."""
    from .sandbox._connect import choose_target, open_target

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        target = choose_target(True if args.sandbox else None)
    for warning in caught:
        print(f"sports-posts: warning: {warning.message}", file=err)
    with open_target(target) as (key, url), SportsPosts(api_key=key, base_url=url) as client:
        if target.sandbox:
            print(f"sports-posts: using an embedded sandbox at {url} ({target.reason})", file=err)
        else:
            print(f"sports-posts: using the service at {url} (SPORTS_POSTS_BASE_URL)", file=err)
        yield client


# --------------------------------------------------------------------------- output


def _print_posts(posts: Sequence[Post], as_json: bool, out: TextIO) -> None:
    for post in posts:
        print(post.model_dump_json() if as_json else format_post(post), file=out)


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


def _cmd_poll(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .polling import FileCheckpoint, Poller

    checkpoint = FileCheckpoint(args.checkpoint) if args.checkpoint else None
    filters = _filters(args, skip=frozenset(_POLLER_OWNS))
    status = _PollStatus(err, _feed(filters), lambda: poller.calls)
    if args.page_size is not None:
        filters["limit"] = args.page_size
    with _connect(args, err) as client:
        poller = Poller(client, since=args.since, interval=args.interval, checkpoint=checkpoint,
                        filters=filters, sleep=status.sleep)

        def stop() -> None:
            poller.stop()
            status.stop()

        _stop_on_sigterm(stop)
        batches = 0
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
            pass
        print(f"{count(batches, 'batch', 'batches')}, {count(poller.calls, 'call')}", file=err)
    return 0


def _stop_on_sigterm(stop: Callable[[], None]) -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop())


def _cmd_account(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with _connect(args, err) as client:
        if args.x_ids:
            compliance = client.account.x_ids()
            if args.json:
                print(compliance.model_dump_json(), file=out)
            else:
                print(f"as of {compliance.as_of}: {count(len(compliance.ids_to_delete), 'post id')} to delete",
                      file=out)
                for post_id in compliance.ids_to_delete:
                    print(post_id, file=out)
            return 0
        info = client.account.information()
        if args.json:
            print(info.model_dump_json(), file=out)
        else:
            c, b, u = info.company, info.billing_cycle, info.usage
            print(f"company       {c.name}\nplan          {c.plan} ({c.subscription_status})", file=out)
            print(f"billing cycle {b.current_period_start} .. {b.current_period_end}", file=out)
            print(f"calls used    {u.current_calls}", file=out)
    return 0


def _cmd_teams(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    league = args.league_option or args.league
    if not league or (args.league_option and args.league and args.league_option != args.league):
        raise SportsPostsError("name one league: sports-posts teams --league NBA")
    with _connect(args, err) as client:
        teams = client.ids.teams(league, reference_id=args.reference_id, lookup=args.lookup)
        if args.json:
            for team in teams:
                print(team.model_dump_json(), file=out)
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
                print(line, file=out)
        print(count(len(teams), "team"), file=err)
    return 0


def _webhook_secret(args: argparse.Namespace) -> str:
    secret = args.secret or os.environ.get("SPORTS_POSTS_WEBHOOK_SECRET")
    if not secret:
        raise SportsPostsError("no signing secret: pass --secret or set SPORTS_POSTS_WEBHOOK_SECRET")
    return str(secret)


def _header_names(prefix: Optional[str]) -> Optional[WebhookHeaders]:
    """``--header-prefix``'s ``WebhookHeaders`` (``None``: spec 6.2's names)."""
    return None if prefix is None else WebhookHeaders.with_prefix(prefix)


def _cmd_webhooks_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .webhooks import SignatureVerificationError, construct_event, verify_signature

    names = _header_names(args.header_prefix) or WebhookHeaders()
    body = sys.stdin.buffer.read() if args.body == "-" else Path(args.body).read_bytes()
    secret = _webhook_secret(args)
    try:
        verify_signature(body, args.signature, secret, header_names=names)
    except SignatureVerificationError as exc:
        print(f"invalid: {exc}", file=out)
        return 1
    try:
        event = construct_event(body, {names.signature: args.signature}, secret, header_names=names)
    except SportsPostsError as exc:
        print(f"valid signature, but the body is not an event: {exc}", file=out)
        return 1
    print(f"valid: {event.event} {event.data.id} ({event.data.league}, {event.data.news_type})", file=out)
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
            print(line, file=out, flush=True)

    return WebhookASGIApp(WebhookReceiver(secret, show, header_names=header_names))


def _cmd_webhooks_listen(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        import uvicorn
    except ImportError:
        raise SportsPostsError("webhooks listen needs uvicorn: pip install 'sports-posts[sandbox]'") from None
    app = webhook_listener_app(_webhook_secret(args), out, header_names=_header_names(args.header_prefix))
    print(f"listening on http://127.0.0.1:{args.port}/ (POST any path); Ctrl-C to stop", file=err)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False, lifespan="off")
    return 0


def _cmd_sandbox(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .sandbox import Sandbox

    stop = threading.Event()
    _stop_on_sigterm(stop.set)
    with Sandbox(seed=args.seed, port=args.port, posts_per_minute=args.posts_per_minute,
                 author_shape=args.author_shape,
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sports-posts",
        description="Sports Posts from the command line. Uses the service named by "
        "SPORTS_POSTS_API_KEY and SPORTS_POSTS_BASE_URL; --sandbox (or no key, or a key "
        "starting with sp_sandbox_) uses an embedded sandbox instead.",
    )
    parser.add_argument("--version", action="version", version=f"sports-posts {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    # What every command that calls the service takes.
    service = argparse.ArgumentParser(add_help=False)
    service.add_argument("--sandbox", action="store_true",
                         help="use an embedded sandbox, even when the environment names a service")

    p = sub.add_parser("sandbox", help="serve a local sandbox of the service",
                       description="Serve the whole service (and its /_sandbox admin routes) on "
                       "127.0.0.1 until Ctrl-C or SIGTERM; prints its base URL and API key.")
    p.add_argument("--port", type=int, default=8080, help="loopback port to listen on (default 8080)")
    p.add_argument("--seed", type=int, default=7, help="seed of the world and the keys: same seed, same data (default 7)")
    p.add_argument("--posts-per-minute", type=float, default=2.0,
                   help="live posts that appear per minute (default 2; 0 = none)")
    p.add_argument("--author-shape", default="both", choices=["flat", "nested", "both", "mixed"],
                   help="author form of spec 2.1 in posts: flat fields, nested object, both, or alternating (default both)")
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
    p.add_argument("--page-size", type=_positive_int, default=None,
                   help=f"posts per call, 1-{MAX_PAGE_SIZE} (default: --limit, up to {MAX_PAGE_SIZE})")
    p.add_argument("--max-calls", type=_positive_int, default=10,
                   help="refuse, before any call, a --limit that needs more calls than this (default 10)")
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.set_defaults(run=_cmd_posts)

    p = sub.add_parser("poll", parents=[service], help="print new posts as they appear, each once",
                       description="Print new posts as they appear, each once, oldest first. On a terminal "
                       "a status line shows the feed, the next call and the calls spent.")
    _add_post_filters(p, skip=frozenset(_POLLER_OWNS))
    p.add_argument("--since", default=None, help="start here when the checkpoint is empty")
    p.add_argument("--interval", type=float, default=60.0, help="seconds between cycles (default 60)")
    p.add_argument("--page-size", type=_positive_int, default=None, help=f"posts per call, 1-{MAX_PAGE_SIZE}")
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
    w = wsub.add_parser("verify", help="check a saved body against its X-Service-Signature")
    w.add_argument("body", help="file with the raw body, or - for stdin")
    w.add_argument("--signature", required=True, help="the X-Service-Signature value")
    w.add_argument("--secret", default=None, help="signing secret (default: SPORTS_POSTS_WEBHOOK_SECRET)")
    w.add_argument("--header-prefix", metavar="PREFIX", default=None, help=_HEADER_PREFIX_HELP)
    w.set_defaults(run=_cmd_webhooks_verify)
    w = wsub.add_parser("listen", help="a local receiver that prints verified events")
    w.add_argument("--port", type=int, default=8000, help="loopback port to listen on (default 8000)")
    w.add_argument("--secret", default=None, help="signing secret (default: SPORTS_POSTS_WEBHOOK_SECRET)")
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
        return status
    except SportsPostsError as exc:
        print(f"sports-posts: error: {type(exc).__name__}: {exc}", file=err)
        return 1
    except (OSError, ValueError) as exc:
        print(f"sports-posts: error: {exc}", file=err)
        return 1


if __name__ == "__main__":
    sys.exit(main())

