"""The operations commands of ``sports-posts``: the compliance sweep, and the fleet's
inboxes, budgets and leases as an on-call engineer sees and steers them.

Registered by ``sports_posts.cli`` with one call to ``add_commands``; every command takes
``--json`` for scripts, and prints text for people otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, TextIO

from ._cli_common import _positive_int
from ._errors import SportsPostsError
from ._format import count

__all__ = ["add_commands"]

Command = Callable[[argparse.Namespace, TextIO, TextIO], int]


def _dump(value: Any, out: TextIO) -> None:
    print(json.dumps(value, sort_keys=True, default=str), file=out)


def _exit_status(code: int) -> str:
    """``status 1``, or the signal that ended a process (``signal SIGKILL``)."""
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


# -- compliance ---------------------------------------------------------------------------


def _cmd_compliance_sweep(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ._compliance import ComplianceSweeper, ComplianceSweepError
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

        program = argv[0]
        if shutil.which(program) is None:  # before the list is fetched: nothing spent
            raise SportsPostsError(f"--command: {program!r} is not a program on PATH (nor an executable path)")

        def delete(post_id: str) -> None:
            # No shell: the id is one argument, whatever it contains.
            try:
                subprocess.run([*argv, post_id], check=True, timeout=timeout, stdout=sink)
            except subprocess.CalledProcessError as exc:
                raise SportsPostsError(f"--command {program!r} exited with {_exit_status(exc.returncode)}") from None
            except subprocess.TimeoutExpired:
                raise SportsPostsError(f"--command {program!r} took longer than --command-timeout "
                                       f"({timeout:g} s) and was killed") from None
            except OSError as exc:  # removed or made unexecutable since the check
                raise SportsPostsError(f"--command {program!r} could not run: "
                                       f"{exc.strerror or type(exc).__name__}") from None
    else:
        def delete(post_id: str) -> None:
            if not args.json:
                print(post_id, file=out)
                out.flush()  # printed is handled: a closed pipe must fail here, unmarked

    checkpoint = FileCheckpoint(args.checkpoint) if args.checkpoint else None
    with args.connect(args, err) as client:
        try:
            result = ComplianceSweeper(client, delete=delete, checkpoint=checkpoint).sweep()
        except ComplianceSweepError as exc:
            if isinstance(exc.__cause__, BrokenPipeError):
                raise exc.__cause__ from None  # the reader left: quiet, as every command
            done = len(exc.deleted)
            kept = (f"saved in {args.checkpoint}: the next run starts with {exc.post_id!r}" if checkpoint
                    else "not saved (no --checkpoint): the next run hands every listed id again")
            cause = str(exc.__cause__) if isinstance(exc.__cause__, SportsPostsError) else str(exc)
            raise ComplianceSweepError(f"{cause}, for id {exc.post_id!r}; the sweep stopped there. "
                                       f"{done} {'id' if done == 1 else 'ids'} handled before it, {kept}",
                                       post_id=exc.post_id, deleted=exc.deleted) from None
    if args.json:
        _dump({"as_of": result.as_of.isoformat() if result.as_of else None, "deleted": list(result.deleted),
               "already_handled": result.already_handled}, out)
    print(f"sports-posts: {count(len(result.deleted), 'id')} deleted, {result.already_handled} handled by "
          f"earlier sweeps (list as of {result.as_of})", file=err)
    return 0


# -- the fleet's stores ---------------------------------------------------------------------


def _store_kind(url: str) -> str:
    """``redis``, ``postgresql`` or ``sqlite`` (a path, or ``sqlite:///path``) from a store URL."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme in ("redis", "rediss", "unix"):
        return "redis"
    if scheme in ("postgresql", "postgres"):
        return "postgresql"
    if scheme in ("", "sqlite", "file"):
        return "sqlite"
    raise SportsPostsError(f"unknown store scheme {scheme!r}: use redis://, postgresql:// or a SQLite file path")


@contextlib.contextmanager
def _closing(store: Any) -> Iterator[Any]:
    try:
        yield store
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            close()


def _inbox(args: argparse.Namespace) -> Any:
    kind = _store_kind(args.url)
    if kind == "redis":
        from .webhooks._redis_inbox import RedisInbox

        return RedisInbox(args.url, **({"prefix": args.prefix} if args.prefix else {}))
    if kind == "postgresql":
        from .webhooks._postgres import PostgresInbox

        return PostgresInbox(args.url)
    if args.prefix:
        raise SportsPostsError("--prefix is for a Redis inbox only")
    from .webhooks.inbox import SQLiteInbox

    path = args.url.split("://", 1)[1] if "://" in args.url else args.url
    if not Path(path).exists():  # opening would create an empty inbox and report it healthy
        raise SportsPostsError(f"no SQLite inbox at {path}")
    return SQLiteInbox(path)


def _entry(entry: Any) -> dict[str, Any]:
    return {"key": entry.key, "delivery_id": entry.delivery_id, "attempts": entry.attempts,
            "last_error": entry.last_error}


def _cmd_inbox(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with _closing(_inbox(args)) as inbox:
        action = args.inbox_command
        if action == "status":
            counts = inbox.counts()
            if args.json:
                _dump(counts, out)
            else:
                for state in ("pending", "processing", "done", "dead"):
                    print(f"{state:<11} {counts.get(state, 0)}", file=out)
            return 0
        if action == "dead":
            entries = [_entry(e) for e in inbox.dead()]
            if args.json:
                _dump(entries, out)
            else:
                for e in entries:
                    print(f"{e['key']}\t{e['attempts']} attempts\t{e['last_error'] or ''}", file=out)
                print(f"sports-posts: {count(len(entries), 'dead letter')}", file=err)
            return 0
        if action == "requeue":
            keys = [e.key for e in inbox.dead()] if args.all else args.keys
            if not keys and not args.all:
                raise SportsPostsError("name the keys to requeue (see: sports-posts inbox dead URL), or pass --all")
            done = {key: bool(inbox.requeue(key)) for key in keys}
            if args.json:
                _dump({"requeued": [k for k, ok in done.items() if ok],
                       "not_dead": [k for k, ok in done.items() if not ok]}, out)
            else:
                for key, ok in done.items():
                    print(f"{key}\t{'requeued' if ok else 'not dead: left as it is'}", file=out)
            return 0 if all(done.values()) else 1
        # purge-dead
        if not args.force:
            raise SportsPostsError("purge-dead deletes every dead letter for good: add --force "
                                   "(look first: sports-posts inbox dead URL)")
        purged = inbox.purge_dead()
        if args.json:
            _dump({"purged": purged}, out)
        else:
            print(f"purged {count(purged, 'dead letter')}", file=out)
        return 0


def _cmd_budget_status(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import dataclasses

    from ._budget import CallBudget

    if _store_kind(args.url) == "sqlite":
        raise SportsPostsError("a CallBudget lives on redis:// or postgresql://")
    unbounded = args.per_minute is None and args.per_month is None
    # status() draws nothing; a bound is only needed to say what is left.
    budget = CallBudget(args.url, key=args.key, per_minute=args.per_minute,
                        per_month=2**62 if unbounded else args.per_month)
    with _closing(budget):
        status = budget.status()
    if unbounded:
        status = dataclasses.replace(status, per_month=None, month_left=None)
    if args.json:
        _dump(dataclasses.asdict(status), out)
    else:
        def bound(value: Any) -> str:
            return "-" if value is None else str(value)

        print(f"key         {args.key}\nmonth       {status.month}", file=out)
        print(f"minute      used {status.minute_used}, left {bound(status.minute_left)} "
              f"of {bound(status.per_minute)}", file=out)
        print(f"month       used {status.month_used}, left {bound(status.month_left)} "
              f"of {bound(status.per_month)}", file=out)
    return 0


def _cmd_lease(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import dataclasses

    from .polling._lease import Lease

    if _store_kind(args.url) == "sqlite":
        raise SportsPostsError("a Lease lives on redis:// or postgresql://")
    with _closing(Lease(args.url, key=args.key)) as lease:
        before = lease.status()
        released = None
        if args.lease_command == "release":
            if not args.force:
                raise SportsPostsError(
                    f"release frees lease {args.key!r} whoever holds it (now: {before.holder or 'nobody'}, "
                    f"token {before.token}); the holder stops at its next renewal. Add --force")
            released = lease.force_release()
    if args.json:
        _dump({**dataclasses.asdict(before), **({} if released is None else {"released": released})}, out)
    else:
        expires = "-" if before.expires_in is None else f"in {before.expires_in:.1f} s"
        print(f"key         {before.key}\nholder      {before.holder or '(free)'}\n"
              f"token       {before.token}\nexpires     {expires}", file=out)
        if released is not None:
            print("released: the next holder gets a higher token" if released else "it was not held", file=out)
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

    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="JSON instead of text")
    url_help = "the store: redis://..., postgresql://... or a SQLite file"

    p = sub.add_parser("inbox", help="a webhook inbox: status, dead letters, requeue, purge")
    isub = p.add_subparsers(dest="inbox_command", required=True)
    for name, text in (("status", "entries per state"), ("dead", "the dead letters: key, attempts, last error"),
                       ("requeue", "give dead letters a fresh set of attempts"),
                       ("purge-dead", "delete every dead letter (with --force)")):
        c = isub.add_parser(name, parents=[as_json], help=text, description=text)
        c.add_argument("url", metavar="URL", help=url_help)
        c.add_argument("--prefix", default=None, help="a Redis inbox's key prefix, if not the default")
        if name == "requeue":
            c.add_argument("keys", nargs="*", metavar="KEY", help="the dead letters to requeue")
            c.add_argument("--all", action="store_true", help="requeue every dead letter")
        if name == "purge-dead":
            c.add_argument("--force", action="store_true", help="really delete them")
        c.set_defaults(run=_cmd_inbox)

    p = sub.add_parser("budget", help="a CallBudget's use, drawing nothing")
    bsub = p.add_subparsers(dest="budget_command", required=True)
    c = bsub.add_parser("status", parents=[as_json], help="calls used and left this minute and month")
    c.add_argument("url", metavar="URL", help="the store: redis://... or postgresql://...")
    c.add_argument("--key", default="sports_posts:budget", help="the budget's key (default sports_posts:budget)")
    c.add_argument("--per-minute", type=_positive_int, default=None, help="the bound the fleet uses, to show what is left")
    c.add_argument("--per-month", type=_positive_int, default=None, help="the bound the fleet uses, to show what is left")
    c.set_defaults(run=_cmd_budget_status)

    p = sub.add_parser("lease", help="a poller's lease: who holds it; free a stuck one")
    lsub = p.add_subparsers(dest="lease_command", required=True)
    for name, text in (("status", "holder, fencing token, expiry"),
                       ("release", "free the lease whoever holds it (with --force)")):
        c = lsub.add_parser(name, parents=[as_json], help=text, description=text)
        c.add_argument("url", metavar="URL", help="the store: redis://... or postgresql://...")
        c.add_argument("key", metavar="KEY", help="the lease's key (the checkpoint's key)")
        if name == "release":
            c.add_argument("--force", action="store_true", help="really free it")
        c.set_defaults(run=_cmd_lease)
