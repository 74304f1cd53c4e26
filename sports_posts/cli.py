"""The ``sports-posts`` command: a sandbox, the demo, and the endpoints from a shell.

It talks to the real service when ``SPORTS_POSTS_API_KEY`` and ``SPORTS_POSTS_BASE_URL``
are set, else to an embedded sandbox, and says which on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Callable, Optional, TextIO

from ._client import SportsPosts
from ._errors import SportsPostsError
from ._format import format_post, one_line
from ._version import __version__
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
    ("limit", "int", "posts per page, 1-100"),
    ("page", "int", "page to start from"),
]
_POLLER_OWNS = {"since", "since_id", "page", "sort"}


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
def _connect(err: TextIO, *, seed: int = 7) -> Iterator[SportsPosts]:
    """A client of the real service (from the environment) or of an embedded sandbox."""
    from .sandbox import connect

    with connect(log=err, seed=seed) as client:
        yield client


# --------------------------------------------------------------------------- output


def _print_posts(posts: Sequence[Post], as_json: bool, out: TextIO) -> None:
    for post in posts:
        print(post.model_dump_json() if as_json else format_post(post), file=out)


# --------------------------------------------------------------------------- commands


def _cmd_posts(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with _connect(err) as client:
        page = client.posts.list(**_filters(args))
        posts = list(page.iter_items(max_items=args.max_items, max_pages=args.pages))
        _print_posts(posts, args.json, out)
        print(f"{len(posts)} posts, {client.calls} call(s)", file=err)
    return 0


def _cmd_poll(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .polling import FileCheckpoint

    checkpoint = FileCheckpoint(args.checkpoint) if args.checkpoint else None
    skip = frozenset(_POLLER_OWNS)
    with _connect(err) as client:
        poller = client.posts.poll(
            since=args.since, interval=args.interval, checkpoint=checkpoint, **_filters(args, skip=skip)
        )
        _stop_on_sigterm(poller.stop)
        batches = 0
        try:
            # Ctrl-C inside the with-block leaves the batch being printed uncommitted, so a
            # restart prints it again rather than losing its unprinted half.
            with poller:
                for batch in poller:
                    _print_posts(batch, args.json, out)
                    out.flush()
                    batches += 1
                    if args.max_batches and batches >= args.max_batches:
                        break
        except KeyboardInterrupt:
            pass
        print(f"{batches} batch(es), {poller.calls} call(s)", file=err)
    return 0


def _stop_on_sigterm(stop: Callable[[], None]) -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop())


def _cmd_account(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with _connect(err) as client:
        if args.x_ids:
            compliance = client.account.x_ids()
            if args.json:
                print(compliance.model_dump_json(), file=out)
            else:
                print(f"as of {compliance.as_of}: {len(compliance.ids_to_delete)} post id(s) to delete", file=out)
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
    with _connect(err) as client:
        teams = client.ids.teams(args.league, reference_id=args.reference_id, lookup=args.lookup)
        for team in teams:
            if args.json:
                print(team.model_dump_json(), file=out)
                continue
            ref = f"  {args.reference_id}={team.reference}" if args.reference_id else ""
            group = " / ".join(x for x in (team.conference, team.division) if x)
            print(f"{team.service_id!s:>6}  {team.location} {team.name}  {group}{ref}", file=out)
        print(f"{len(teams)} team(s)", file=err)
    return 0


def _webhook_secret(args: argparse.Namespace) -> str:
    secret = args.secret or os.environ.get("SPORTS_POSTS_WEBHOOK_SECRET")
    if not secret:
        raise SportsPostsError("no signing secret: pass --secret or set SPORTS_POSTS_WEBHOOK_SECRET")
    return str(secret)


def _cmd_webhooks_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .webhooks import SignatureVerificationError, construct_event, verify_signature

    body = sys.stdin.buffer.read() if args.body == "-" else Path(args.body).read_bytes()
    secret = _webhook_secret(args)
    try:
        verify_signature(body, args.signature, secret)
    except SignatureVerificationError as exc:
        print(f"invalid: {exc}", file=out)
        return 1
    try:
        event = construct_event(body, {"X-Service-Signature": args.signature}, secret)
    except SportsPostsError as exc:
        print(f"valid signature, but the body is not an event: {exc}", file=out)
        return 1
    print(f"valid: {event.event} {event.data.id} ({event.data.league}, {event.data.news_type})", file=out)
    return 0


def webhook_listener_app(secret: str, out: TextIO) -> Any:
    """The ASGI app of ``webhooks listen``: verify, de-duplicate, print each event once."""
    from .webhooks import WebhookReceiver
    from .webhooks.adapters.asgi import WebhookASGIApp

    lock = threading.Lock()

    def show(event: Any) -> None:
        data = event.data
        line = f"{event.event:<20} {data.id}  {data.league or '-':<6} {data.news_type or '-':<12} {one_line(data.text, 70)}"
        with lock:
            print(line, file=out, flush=True)

    return WebhookASGIApp(WebhookReceiver(secret, show))


def _cmd_webhooks_listen(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        import uvicorn
    except ImportError:
        raise SportsPostsError("webhooks listen needs uvicorn: pip install 'sports-posts[sandbox]'") from None
    app = webhook_listener_app(_webhook_secret(args), out)
    print(f"listening on http://127.0.0.1:{args.port}/ (POST any path); Ctrl-C to stop", file=err)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False, lifespan="off")
    return 0


def _cmd_sandbox(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .sandbox import Sandbox

    stop = threading.Event()
    _stop_on_sigterm(stop.set)
    with Sandbox(seed=args.seed, port=args.port, posts_per_minute=args.posts_per_minute,
                 author_shape=args.author_shape) as sb:
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sports-posts",
        description="Sports Posts from the command line. Uses SPORTS_POSTS_API_KEY and "
        "SPORTS_POSTS_BASE_URL when set, else an embedded sandbox.",
    )
    parser.add_argument("--version", action="version", version=f"sports-posts {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("sandbox", help="serve a local sandbox of the service")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--posts-per-minute", type=float, default=2.0)
    p.add_argument("--author-shape", default="both", choices=["flat", "nested", "both", "mixed"])
    p.set_defaults(run=_cmd_sandbox)

    p = sub.add_parser("demo", help="the end-to-end demo against an embedded sandbox")
    p.add_argument("--seed", type=int, default=7)
    p.set_defaults(run=_cmd_demo)

    p = sub.add_parser("posts", help="GET /posts with any filter")
    _add_post_filters(p)
    p.add_argument("--max-items", type=int, default=20, help="stop after this many posts (default 20)")
    p.add_argument("--pages", type=int, default=None, help="fetch at most this many pages")
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.set_defaults(run=_cmd_posts)

    p = sub.add_parser("poll", help="print new posts as they appear, each once")
    _add_post_filters(p, skip=frozenset(_POLLER_OWNS))
    p.add_argument("--since", default=None, help="start here when the checkpoint is empty")
    p.add_argument("--interval", type=float, default=60.0, help="seconds between cycles")
    p.add_argument("--checkpoint", default=None, help="a file that keeps the position across restarts")
    p.add_argument("--max-batches", type=int, default=None, help="stop after this many batches")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_cmd_poll)

    p = sub.add_parser("account", help="account information (free), or --x-ids")
    p.add_argument("--x-ids", action="store_true", help="the post ids to delete for compliance")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_cmd_account)

    p = sub.add_parser("teams", help="the teams of a league (GET /ids?entity=teams)")
    p.add_argument("league")
    p.add_argument("--reference-id", default=None, help="add this id column (nba_id, code, ...)")
    p.add_argument("--lookup", default=None, help="only the team matching this value")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_cmd_teams)

    p = sub.add_parser("webhooks", help="verify a saved delivery, or listen for deliveries")
    wsub = p.add_subparsers(dest="webhooks_command", required=True)
    w = wsub.add_parser("verify", help="check a saved body against its X-Service-Signature")
    w.add_argument("body", help="file with the raw body, or - for stdin")
    w.add_argument("--signature", required=True, help="the X-Service-Signature value")
    w.add_argument("--secret", default=None, help="signing secret (default: SPORTS_POSTS_WEBHOOK_SECRET)")
    w.set_defaults(run=_cmd_webhooks_verify)
    w = wsub.add_parser("listen", help="a local receiver that prints verified events")
    w.add_argument("--port", type=int, default=8000)
    w.add_argument("--secret", default=None, help="signing secret (default: SPORTS_POSTS_WEBHOOK_SECRET)")
    w.set_defaults(run=_cmd_webhooks_listen)
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

