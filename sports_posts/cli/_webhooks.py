"""The ``webhooks`` commands: verify a saved delivery, or listen for deliveries and print
the verified events."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Optional, TextIO

from .._errors import SportsPostsError
from .._vocabulary import WebhookHeaders
from ._common import (
    SERVER_GRACE,
    InFlight,
    header_names,
    listen_error,
    path,
    port,
    read_text_file,
    safe,
    serve_until_signal,
)
from ._format import cell, count, one_line


def _webhook_secret(args: argparse.Namespace, err: TextIO) -> str:
    """The signing secret from ``--secret-file``, else the deprecated ``--secret`` (which
    ``ps`` and the shell history show), else ``SPORTS_POSTS_WEBHOOK_SECRET``."""
    if args.secret is not None:
        print("sports-posts: warning: --secret is deprecated: the command line is visible to every user "
              "of the machine (ps); use --secret-file PATH or SPORTS_POSTS_WEBHOOK_SECRET", file=err)
    if args.secret_file is not None:
        secret_text = read_text_file(args.secret_file, "--secret-file")
        if "\n" in secret_text or "\r" in secret_text:
            raise SportsPostsError(f"--secret-file {safe(args.secret_file)} holds more than one line: "
                                   "keep only the signing secret in it")
        if not (secret_text.isascii() and secret_text.isprintable()):
            # the dashboard's secrets are printable ASCII: anything else was decoded from bytes
            # that are not the secret (another encoding, a binary file), which would only
            # report every signature as not matching
            raise SportsPostsError(f"--secret-file {safe(args.secret_file)}: not the signing secret as the "
                                   "dashboard shows it (printable ASCII): save it as plain UTF-8 text")
        return secret_text
    secret = args.secret or os.environ.get("SPORTS_POSTS_WEBHOOK_SECRET")
    if not secret:
        raise SportsPostsError("no signing secret: pass --secret-file PATH or set SPORTS_POSTS_WEBHOOK_SECRET")
    return str(secret)




def _cmd_webhooks_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..webhooks import (
        DEFAULT_TOLERANCE,
        ReplayedWebhookError,
        SignatureVerificationError,
        construct_event,
        verify_signature,
    )

    names = header_names(args.header_prefix) or WebhookHeaders()
    body = sys.stdin.buffer.read() if args.body == "-" else Path(args.body).read_bytes()
    secret = _webhook_secret(args, err)
    try:
        verify_signature(body, args.signature, secret, header_names=names)
    except SignatureVerificationError as exc:
        print(safe(f"invalid: {exc}"), file=out)
        return 1
    try:
        event = construct_event(body, {names.signature: args.signature}, secret, header_names=names)
    except SportsPostsError as exc:
        print(safe(f"valid signature, but the body is not an event: {exc}"), file=out)
        return 1
    what = safe(f"{event.event} {event.data.id} ({event.data.league}, {event.data.news_type})")
    try:
        construct_event(body, {names.signature: args.signature}, secret, header_names=names,
                        tolerance=DEFAULT_TOLERANCE)
    except ReplayedWebhookError as exc:
        print(f"outside the replay window: {what}: {safe(str(exc))}; the signature is genuine, but a "
              "receiver refuses this body now (a replay, or a delivery kept too long)", file=out)
        return 1
    print(f"valid: {what}", file=out)
    return 0


class _ReaderGone(Exception):
    """stdout's reader went away (``| head -1``): the event was not printed."""


def webhook_listener_app(secret: str, out: TextIO, *, header_names: Optional[WebhookHeaders] = None,
                         on_closed: Optional[Callable[[], None]] = None) -> Any:
    """The ASGI app of ``webhooks listen``: verify, de-duplicate, print each event once.

    An event that cannot be printed (stdout closed) is not acknowledged, so the service
    delivers it again; ``on_closed`` is then called once, to stop the listener."""
    from ..webhooks import WebhookReceiver
    from ..webhooks.adapters.asgi import WebhookASGIApp

    lock = threading.Lock()
    closed = threading.Event()

    def show(event: Any) -> None:
        data = event.data
        line = "  ".join([cell(event.event, 20), cell(str(data.id), 20), cell(data.league or "-", 7),
                          cell(data.news_type or "-", 18), one_line(data.text, 70)])
        with lock:
            if closed.is_set():
                raise _ReaderGone("stdout is closed")
            try:
                print(safe(line), file=out, flush=True)
            except (BrokenPipeError, ValueError):  # ValueError: a closed file object
                closed.set()
                if on_closed is not None:
                    on_closed()
                raise _ReaderGone("stdout is closed") from None

    return WebhookASGIApp(WebhookReceiver(secret, show, header_names=header_names))


def _cmd_webhooks_listen(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        import uvicorn
    except ImportError:
        raise SportsPostsError("webhooks listen needs uvicorn: pip install 'sports-posts[sandbox]'") from None
    import socket

    reader_gone = threading.Event()
    server: Any = None

    def closed() -> None:
        reader_gone.set()
        if server is not None:
            server.should_exit = True

    listener = webhook_listener_app(_webhook_secret(args, err), out, header_names=header_names(args.header_prefix),
                                    on_closed=closed)
    app = InFlight(listener)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # Bound here, before saying so: a port in use is one clear line, and port 0 shows the
        # port the system chose.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", args.port))
    except OSError as exc:
        sock.close()
        raise SportsPostsError(listen_error(args.port, exc)) from None
    port = sock.getsockname()[1]
    # In flight at a stop: uvicorn stops accepting, then waits up to SERVER_GRACE for them.
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=int(SERVER_GRACE))
    server = uvicorn.Server(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])  # in a thread: uvicorn leaves the signals to us
        except BaseException as exc:
            failure.append(exc)

    # An event the reader left is answered 503 and delivered again: not worth a traceback.
    quiet = _DropReaderGone()
    logging.getLogger("sports_posts.webhooks").addFilter(quiet)
    thread = threading.Thread(target=run, name=f"webhooks-listen-{port}", daemon=True)
    thread.start()
    try:
        while not server.started and thread.is_alive():
            thread.join(0.01)

        def announce() -> None:
            print(f"listening on http://127.0.0.1:{port}/ (POST any path); Ctrl-C or SIGTERM to stop",
                  file=err, flush=True)

        def finish() -> None:
            thread.join(SERVER_GRACE + 5)  # uvicorn cuts what is left at SERVER_GRACE
            if thread.is_alive():
                server.force_exit = True
                thread.join(5)

        received = serve_until_signal(server, thread, finish, err, announce)
    finally:
        server.should_exit = True
        thread.join(5)
        sock.close()
        logging.getLogger("sports_posts.webhooks").removeFilter(quiet)
    if reader_gone.is_set():
        raise BrokenPipeError("stdout is closed")  # quiet, as every command on a closed pipe
    if received is None:
        print(f"sports-posts: error: the listener stopped by itself{_cause(failure)}", file=err)
        return 1
    if app.cut:
        print(f"sports-posts: stopped; {count(app.cut, 'delivery', 'deliveries')} in flight after "
              f"{SERVER_GRACE:g} s were cut (not acknowledged: the service delivers them again)", file=err)
        return 1
    print("sports-posts: stopped", file=err)
    return 0


def _cause(failure: list[BaseException]) -> str:
    return f": {type(failure[0]).__name__}: {safe(str(failure[0]))}" if failure else ""


class _DropReaderGone(logging.Filter):
    """Drops the receiver's log record of an event the listener could not print (stdout
    closed): the delivery is answered 503 and comes again; the command ends quietly."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, _ReaderGone)


_HEADER_PREFIX_HELP = ("read PREFIX-Signature and PREFIX-Delivery instead of X-Service-* "
                       "(headers renamed by a proxy or a white-label deployment)")


def _add_secret_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--secret-file", metavar="PATH", type=path, default=None,
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
    w.add_argument("body", type=path, help="file with the raw body, or - for stdin")
    w.add_argument("--signature", required=True, help="the X-Service-Signature value")
    _add_secret_options(w)
    w.add_argument("--header-prefix", metavar="PREFIX", default=None, help=_HEADER_PREFIX_HELP)
    w.set_defaults(run=_cmd_webhooks_verify)
    w = wsub.add_parser("listen", help="a local receiver that prints verified events")
    w.add_argument("--port", type=port, default=8000,
                   help="loopback port to listen on, 0 for any free one (default 8000)")
    _add_secret_options(w)
    w.add_argument("--header-prefix", metavar="PREFIX", default=None, help=_HEADER_PREFIX_HELP)
    w.set_defaults(run=_cmd_webhooks_listen)
