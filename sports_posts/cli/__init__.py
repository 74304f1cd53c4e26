"""The ``sports-posts`` command: a sandbox, the demo, and the endpoints from a shell.

It talks to the service named by ``SPORTS_POSTS_API_KEY`` and ``SPORTS_POSTS_BASE_URL``,
or to an embedded sandbox when asked for (``--sandbox``, no key, or a sandbox key), and
says which on stderr. Only the command line (this package: the parser here, a module per command
group, ``_common.py`` for what they share) and the demo print; the library logs and warns.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Optional, TextIO

from .._errors import ParameterError, SportsPostsError
from .._version import __version__
from ._common import connect, exit_status, fresh_line, safe, timeout
from ._poll import add_poll_command
from ._posts import add_account_command, add_posts_command, add_teams_command
from ._sandbox import add_sandbox_commands
from ._webhooks import add_webhooks_command

__all__ = ["main"]


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
    service.add_argument("--timeout", type=timeout, default=None, metavar="SECONDS",
                         help="give up on a call after this many seconds, retries included (default: 30 s "
                              "per attempt); each retry is announced on stderr")

    # One line a command (or a group of them), each from the module that runs it; the
    # order is the order of `sports-posts --help`.
    add_sandbox_commands(sub)
    add_posts_command(sub, service)
    add_poll_command(sub, service)
    add_account_command(sub, service)
    add_teams_command(sub, service)
    add_webhooks_command(sub)
    from ._ops import add_commands  # compliance, inbox, budget, lease

    add_commands(sub, service, connect)
    return parser


def main(argv: Optional[Sequence[str]] = None, *, out: Optional[TextIO] = None,
         err: Optional[TextIO] = None) -> int:
    """Entry point of the ``sports-posts`` console script; returns the exit status. ``out`` and
    ``err`` default to ``sys.stdout``/``sys.stderr`` as they are at the call, not at import."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    # argparse writes its usage errors and --help to sys.stderr / sys.stdout and exits: here
    # they go to ``err`` / ``out`` and become the return value, as every other outcome does.
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            args = build_parser().parse_args(argv)
    except SystemExit as exited:
        return exited.code if isinstance(exited.code, int) else (0 if exited.code is None else 2)
    try:
        status: int = args.run(args, out, err)
        out.flush()  # here, where a closed pipe is caught, rather than at the interpreter's exit
        return status
    except KeyboardInterrupt:
        print(f"{fresh_line(err)}sports-posts: interrupted", file=err)
        return 130
    except BrokenPipeError:
        # The reader went away (`| head -1`): stop quietly, as git and gh do.
        _quiet_stdout(out)
        return 141
    except SportsPostsError as exc:
        if _closed_pipe(exc):  # a callback that printed, wrapped by the SDK (compliance sweep)
            _quiet_stdout(out)
            return 141
        name = type(exc).__name__
        text = _in_flags(exc) if isinstance(exc, ParameterError) else str(exc)
        print(f"sports-posts: error: {name}: {safe(text)}", file=err)
        return exit_status(exc)
    except (OSError, ValueError) as exc:
        print(f"sports-posts: error: {safe(str(exc))}", file=err)
        return 1


def _closed_pipe(exc: BaseException) -> bool:
    """Whether ``exc`` was caused, at some depth, by a closed pipe."""
    seen: set[int] = set()
    cause: Optional[BaseException] = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, BrokenPipeError):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


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
    cut = text.find("wrap it: Unchecked(")
    if cut >= 0:
        text = text[:cut] + "add --unchecked."
    return text

