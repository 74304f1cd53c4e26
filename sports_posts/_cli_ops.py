"""The operations commands of ``sports-posts``: the compliance sweep, and the fleet's
inboxes, budgets and leases as an on-call engineer sees and steers them.

Registered by ``sports_posts.cli`` with one call to ``add_commands``; every command takes
``--json`` for scripts, and prints text for people otherwise.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
from typing import Any, Callable, TextIO

from ._errors import SportsPostsError

__all__ = ["add_commands"]

Command = Callable[[argparse.Namespace, TextIO, TextIO], int]


def _dump(value: Any, out: TextIO) -> None:
    print(json.dumps(value, sort_keys=True, default=str), file=out)


# -- compliance ---------------------------------------------------------------------------


def _cmd_compliance_sweep(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ._compliance import ComplianceSweeper
    from .polling import FileCheckpoint

    if args.command_line is not None:
        argv = shlex.split(args.command_line)
        if not argv:
            raise SportsPostsError("--command: empty command")
        timeout = args.command_timeout
        try:  # the command's output goes to stderr, so stdout stays the ids (or the JSON)
            sink: Any = err.fileno()
        except (AttributeError, OSError, ValueError):
            sink = None

        def delete(post_id: str) -> None:
            # No shell: the id is one argument, whatever it contains.
            subprocess.run([*argv, post_id], check=True, timeout=timeout, stdout=sink)
    else:
        def delete(post_id: str) -> None:
            if not args.json:
                print(post_id, file=out)
                out.flush()  # printed is handled: a closed pipe must fail here, unmarked

    checkpoint = FileCheckpoint(args.checkpoint) if args.checkpoint else None
    with args.connect(args, err) as client:
        result = ComplianceSweeper(client, delete=delete, checkpoint=checkpoint).sweep()
    if args.json:
        _dump({"as_of": result.as_of.isoformat() if result.as_of else None, "deleted": list(result.deleted),
               "already_handled": result.already_handled}, out)
    print(f"sports-posts: {len(result.deleted)} ids deleted, {result.already_handled} handled by earlier sweeps"
          f" (list as of {result.as_of})", file=err)
    return 0


# -- registration -------------------------------------------------------------------------


def add_commands(sub: Any, service: argparse.ArgumentParser, connect: Callable[..., Any]) -> None:
    """Add ``compliance``, ``inbox``, ``budget`` and ``lease`` to the ``sports-posts`` parser;
    ``connect(args, err)`` is the CLI's client of the service (or of a sandbox)."""
    p = sub.add_parser("compliance", help="the compliance sweep of GET /account/x-ids")
    csub = p.add_subparsers(dest="compliance_command", required=True)
    c = csub.add_parser(
        "sweep", parents=[service], help="delete each listed post id once",
        description="Fetch GET /account/x-ids and hand each id no earlier sweep handled to --command "
        "(run once per id, the id as its last argument; a failure stops the sweep and that id is "
        "tried again next time), or print it on stdout, one per line (printed counts as handled). "
        "--checkpoint remembers what was handled across runs; run it daily (from cron or a timer).")
    c.add_argument("--checkpoint", default=None, help="a file that keeps the handled ids across runs")
    c.add_argument("--command", dest="command_line", metavar="CMD", default=None,
                   help="run CMD ID for each id to delete (no shell); non-zero exit stops the sweep")
    c.add_argument("--command-timeout", type=float, default=60.0,
                   help="seconds one --command run may take (default 60)")
    c.add_argument("--json", action="store_true",
                   help="one JSON object at the end (as_of, deleted, already_handled) instead of ids")
    c.set_defaults(run=_cmd_compliance_sweep, connect=connect)
