"""The ``sandbox`` and ``demo`` commands: the emulated service served locally, and the
end-to-end demo against it."""

from __future__ import annotations

import argparse
from typing import TextIO

from .._errors import SportsPostsError
from ._common import SERVER_GRACE, converted, header_names, listen_error, port, serve_until_signal


def time_scale(text: str) -> float:
    """``--time-scale``: a positive number, at most 1000."""
    value = converted(float, text, "a number above 0")
    if not 0 < value <= 1000:
        raise argparse.ArgumentTypeError("a number above 0, at most 1000")
    return value


PLANS = ("paid", "free")
"""The plans of the specification (spec 1 and 2.6): ``free`` has 200 calls a month."""


def _cmd_sandbox(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..sandbox import Sandbox

    sb = Sandbox(seed=args.seed, port=args.port, plan=args.plan, posts_per_minute=args.posts_per_minute,
                 profile=args.profile, author_shape=args.author_shape, time_scale=args.time_scale,
                 webhook_header_names=header_names(args.webhook_header_prefix))
    try:
        sb.start()
    except OSError as exc:  # the bind: a port in use, or one the user may not take
        raise SportsPostsError(listen_error(args.port, exc)) from None
    thread = sb._thread
    try:
        assert thread is not None
        clean = True

        def announce() -> None:
            print(f"base URL  {sb.base_url}", file=out)
            print(f"API key   {sb.api_key}", file=out)
            print(f"export SPORTS_POSTS_BASE_URL={sb.base_url} SPORTS_POSTS_API_KEY={sb.api_key}", file=out)
            out.flush()
            quota = ": 200 calls a month, then 429 RATE_LIMITED" if args.plan == "free" else ": no quota"
            if args.time_scale != 1.0:
                retries = ", ".join(f"{minutes * 60 * args.time_scale:g}" for minutes in (1, 2, 4, 8, 16))
                print(f"webhook retries after {retries} s (--time-scale {args.time_scale:g})", file=err)
            print(f"serving the {args.plan} plan{quota}; Ctrl-C or SIGTERM to stop", file=err, flush=True)

        def stop() -> None:
            nonlocal clean
            clean = sb.stop(grace=SERVER_GRACE)

        received = serve_until_signal(sb._server, thread, stop, err, announce)
    finally:
        sb.stop()
    if received is None:
        print("sports-posts: error: the sandbox server stopped by itself", file=err)
        return 1
    if not clean:
        print(f"sports-posts: stopped; requests still in flight after {SERVER_GRACE:g} s were cut",
              file=err)
        return 1
    print("sports-posts: stopped", file=err)
    return 0


def _cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ._demo import run_demo

    return run_demo(out, seed=args.seed)


def add_sandbox_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``sandbox`` and ``demo``."""
    p = sub.add_parser("sandbox", help="serve a local sandbox of the service",
                       description="Serve the whole service (and its /_sandbox admin routes) on "
                       "127.0.0.1 until Ctrl-C or SIGTERM; prints its base URL and API key. On "
                       "either signal it stops accepting, lets requests and webhook attempts in "
                       f"flight finish (at most {SERVER_GRACE:g} s) and exits 0.")
    p.add_argument("--port", type=port, default=8080, help="loopback port to listen on, 0 for any free one "
                   "(default 8080)")
    p.add_argument("--seed", type=int, default=7, help="seed of the world and the keys: same seed, same data (default 7)")
    p.add_argument("--plan", default="paid", choices=PLANS,
                   help="plan of the printed API key: paid (default, no quota) or free (200 calls a "
                        "month, then 429 RATE_LIMITED)")
    p.add_argument("--posts-per-minute", type=float, default=2.0,
                   help="live posts that appear per minute (default 2; 0 = none)")
    p.add_argument("--profile", default="strict", choices=["strict", "lenient"],
                   help="strict (default): every open point of the specification read against the client; "
                        "lenient: each open point read in the client's favour, for demos")
    p.add_argument("--author-shape", default=None, choices=["flat", "nested", "both", "mixed"],
                   help="author form in posts: flat fields, nested object, both, or one of the "
                        "two per post (default: mixed in the strict profile, both in the lenient one)")
    p.add_argument("--time-scale", type=time_scale, default=1.0, metavar="SCALE",
                   help="multiply the webhook retry schedule (1, 2, 4, 8, 16 min) and timeout (10 s) by "
                        "SCALE, for drills: a hundredth runs the 31-minute schedule in 19 s (default 1)")
    p.add_argument("--webhook-header-prefix", metavar="PREFIX", default=None,
                   help="send webhooks under PREFIX-Event, -Delivery, -Signature instead of X-Service-* "
                        "(as a renaming proxy would)")
    p.set_defaults(run=_cmd_sandbox)

    p = sub.add_parser("demo", help="the end-to-end demo against an embedded sandbox")
    p.add_argument("--seed", type=int, default=7, help="seed of the sandbox's world (default 7)")
    p.set_defaults(run=_cmd_demo)
