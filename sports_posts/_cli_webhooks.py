"""The ``webhooks`` commands: verify a saved delivery, or listen for deliveries and print
the verified events."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any, Optional, TextIO

from ._cli_common import _header_names, _path, _port, _read_text_file, _safe
from ._errors import SportsPostsError
from ._format import cell, one_line
from ._webhook_headers import WebhookHeaders


def _webhook_secret(args: argparse.Namespace, err: TextIO) -> str:
    """The signing secret from ``--secret-file``, else the deprecated ``--secret`` (which
    ``ps`` and the shell history show), else ``SPORTS_POSTS_WEBHOOK_SECRET``."""
    if args.secret is not None:
        print("sports-posts: warning: --secret is deprecated: the command line is visible to every user "
              "of the machine (ps); use --secret-file PATH or SPORTS_POSTS_WEBHOOK_SECRET", file=err)
    if args.secret_file is not None:
        secret_text = _read_text_file(args.secret_file, "--secret-file")
        if "\n" in secret_text or "\r" in secret_text:
            raise SportsPostsError(f"--secret-file {_safe(args.secret_file)} holds more than one line: "
                                   "keep only the signing secret in it")
        return secret_text
    secret = args.secret or os.environ.get("SPORTS_POSTS_WEBHOOK_SECRET")
    if not secret:
        raise SportsPostsError("no signing secret: pass --secret-file PATH or set SPORTS_POSTS_WEBHOOK_SECRET")
    return str(secret)




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


_HEADER_PREFIX_HELP = ("read PREFIX-Signature and PREFIX-Delivery instead of X-Service-* "
                       "(headers renamed by a proxy or a white-label deployment)")


def _add_secret_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--secret-file", metavar="PATH", type=_path, default=None,
                        help="file holding the signing secret (default: SPORTS_POSTS_WEBHOOK_SECRET)")
    parser.add_argument("--secret", default=None, metavar="SECRET",
                        help="deprecated: the signing secret itself, which ps shows to every user; "
                             "use --secret-file or SPORTS_POSTS_WEBHOOK_SECRET")


def add_webhooks_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``webhooks verify`` and ``webhooks listen``."""
    p = sub.add_parser("webhooks", help="verify a saved delivery, or listen for deliveries")
    wsub = p.add_subparsers(dest="webhooks_command", required=True)
    w = wsub.add_parser("verify", help="check a saved body against its X-Service-Signature",
                        description="Check a saved body against its signature, then its sent_at against "
                        "the replay window a receiver applies.")
    w.add_argument("body", type=_path, help="file with the raw body, or - for stdin")
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
