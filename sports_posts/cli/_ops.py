"""The operations commands of ``sports-posts``: the compliance sweep, and the fleet's
inboxes, budgets and leases as an on-call engineer sees and steers them.

Registered by ``sports_posts.cli`` with one call to ``add_commands``; every command takes
``--json`` for scripts, and prints text for people otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import shlex
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, Optional, TextIO

from .._errors import SportsPostsError
from .._stores import store_kind
from .._stores.errors import MAX_URL_LENGTH, has_control
from ._common import (
    EXIT_NOTHING,
    NothingThere,
    Refused,
    json_line,
    line,
    path,
    positive_int,
    read_text_file,
    safe,
)
from ._format import count

__all__ = ["add_commands"]

Command = Callable[[argparse.Namespace, TextIO, TextIO], int]


def _dump(value: Any, out: TextIO) -> None:
    json_line(out, value)


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
    from ..polling import FileCheckpoint
    from ..resources.compliance import ComplianceSweeper, ComplianceSweepError

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
                line(out, post_id)  # one line, escaped: an id never prints a second record
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
    """``redis``, ``postgresql`` or ``sqlite`` (a path, or ``sqlite:///path``) from a store URL
    (or a libpq keyword DSN): the store layer's one table of schemes."""
    kind = store_kind(url)
    if not kind:
        scheme = url.split("://", 1)[0].lower()
        raise SportsPostsError(f"unknown store scheme {safe(scheme[:40])!r}: use redis://, postgresql:// or a SQLite file path")
    return "postgresql" if kind == "postgres" else kind


def _coordination_store(args: argparse.Namespace, what: str) -> tuple[str, str]:
    """The URL and kind of the store that holds a ``what``: a fleet's coordination lives on
    Redis or PostgreSQL only."""
    url = _store_url(args)
    kind = _store_kind(url)
    if kind == "sqlite":
        raise SportsPostsError(f"a {what} lives on redis:// or postgresql://")
    return url, kind


@contextlib.contextmanager
def _closing(store: Any) -> Iterator[Any]:
    try:
        yield store
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            close()


STORE_URL_ENV = "SPORTS_POSTS_STORE_URL"


def _store_url(args: argparse.Namespace) -> str:
    """The store's URL: the argument, else ``--url-file``, else ``$SPORTS_POSTS_STORE_URL``
    (a file or the environment keeps a password out of ``ps`` and the shell's history)."""
    import os

    url: Optional[str] = args.url
    if url is None and args.url_file is not None:
        # BOM, CRLF, a trailing newline; a file larger than any URL is refused, not cut
        url = read_text_file(args.url_file, "--url-file", limit=MAX_URL_LENGTH)
    if url is None:
        url = os.environ.get(STORE_URL_ENV)
    if url is None:
        raise SportsPostsError(f"name the store: URL, --url-file FILE or ${STORE_URL_ENV}")
    if not url.strip():
        raise SportsPostsError("the store URL is empty: name a redis://, postgresql:// URL or a SQLite file")
    if has_control(url):  # a second line of a file, say: never shown, it may hold a password
        raise SportsPostsError("the store URL holds a control character (a second line?); it is not shown")
    args.url = url
    return url


def _pg_has(url: str, owner: str, table: str, where: str = "", params: Any = None) -> bool:
    """Whether ``table`` exists (and has a row ``where`` says): read-only, never creates."""
    from .._stores.postgres import Postgres

    db = Postgres(owner, url, auto_migrate=False, connect_timeout=5.0, statement_timeout=5.0)
    try:
        row = db.execute("SELECT to_regclass(%(table)s) IS NOT NULL", (), {"table": table})
        if not row or not row[0]:
            return False
        return not where or db.execute(f"SELECT 1 FROM {table} WHERE {where}", (), params) is not None
    finally:
        db.close()


def _redis_has(url: str, owner: str, keys: list[str]) -> bool:
    """Whether any of ``keys`` exists (``EXISTS``: read-only, creates nothing), on one server,
    behind Sentinel or on a cluster (given any node's URL or ``redis+cluster://``)."""
    from .._stores.redis import Redis

    db = Redis(owner, url)
    try:
        return db.exists(keys)
    finally:
        db.close()


def _inbox(args: argparse.Namespace) -> Any:
    url = _store_url(args)
    kind = _store_kind(url)
    if kind == "redis":
        from ..webhooks import RedisInbox

        inbox: Any = RedisInbox(url, **({"prefix": args.prefix} if args.prefix else {}))
        if not _redis_has(url, "inbox", [inbox._k("stream"), inbox._k("counts")]):
            inbox.close()
            raise NothingThere(f"no inbox at {inbox._redis.where()} with prefix {inbox.prefix!r} "
                                   "(nothing was created)")
        return inbox
    if args.prefix:  # a PostgreSQL or SQLite inbox has no prefix: refused, never ignored
        raise SportsPostsError("--prefix is for a Redis inbox only")
    if kind == "postgresql":
        from ..webhooks import PostgresInbox

        inbox = PostgresInbox(url, auto_migrate=False)
        if not _pg_has(url, "inbox", "sports_posts_inbox"):
            inbox.close()
            raise NothingThere(f"no inbox at {inbox._db.where()}: table sports_posts_inbox is missing "
                                   "(nothing was created)")
        return inbox
    from ..webhooks import SQLiteInbox

    path = url.split("://", 1)[1] if "://" in url else url
    if not path or not Path(path).is_file():  # opening would create an empty inbox and report it healthy
        raise NothingThere(f"no SQLite inbox at {safe(path)!r}")
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
        if action == "active":
            active = inbox.in_progress(args.limit)
            if args.json:
                _dump([dataclasses.asdict(entry) for entry in active], out)
            else:
                for entry in active:
                    left = f"lease {entry.lease_left:.1f} s" if entry.lease_left >= 0 else \
                        f"lease ended {-entry.lease_left:.1f} s ago (its worker is late or gone)"
                    line(out, entry.key, entry.holder or "-", f"{entry.attempts} attempts",
                         f"{entry.deliveries} deliveries", left)
                print(f"sports-posts: {count(len(active), 'entry')} in progress", file=err)
            return 0
        if action == "dead":
            entries = [_entry(e) for e in inbox.dead()]
            if args.json:
                _dump(entries, out)
            else:
                for e in entries:
                    line(out, e["key"], f"{e['attempts']} attempts", e["last_error"] or "")
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
                    line(out, key, "requeued" if ok else "not dead: left as it is")
            return 0 if all(done.values()) else EXIT_NOTHING
        # purge-dead
        if not args.force:
            raise Refused("purge-dead deletes every dead letter for good: add --force "
                                   "(look first: sports-posts inbox dead URL)")
        purged = inbox.purge_dead()
        if args.json:
            _dump({"purged": purged}, out)
        else:
            print(f"purged {count(purged, 'dead letter')}", file=out)
        return 0


def _cmd_budget_status(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:

    from .._budget import CallBudget

    url, kind = _coordination_store(args, "CallBudget")
    exists = (_redis_has(url, "budget", [args.key]) if kind == "redis" else
              _pg_has(url, "budget", "sports_posts_budget", "key = %(key)s", {"key": args.key}))
    if not exists:
        raise NothingThere(f"no budget {args.key!r} at this store: no draw has been made under that key "
                               "(check --key; nothing was created)")
    unbounded = args.per_minute is None and args.per_month is None
    # status() draws nothing; the bounds shown are the ones given here, else the ones the
    # fleet's last draw stored with the budget.
    budget = CallBudget(url, key=args.key, per_minute=args.per_minute,
                        per_month=2**62 if unbounded else args.per_month)
    budget._runner._migrated = True  # checked above: a status reads, it never creates a table
    with _closing(budget):
        status = budget.status()
    per_minute = args.per_minute if not unbounded else status.stored_per_minute
    per_month = args.per_month if not unbounded else status.stored_per_month
    status = dataclasses.replace(
        status, per_minute=per_minute, per_month=per_month,
        minute_left=None if per_minute is None else max(0, per_minute - status.minute_used),
        month_left=None if per_month is None else max(0, per_month - status.month_used))
    if args.json:
        _dump(dataclasses.asdict(status), out)
    else:
        def bound(value: Any) -> str:
            return "-" if value is None else str(value)

        source = "given here" if not unbounded else ("stored by the last draw" if status.stored else
                                                     "not stored yet: pass --per-minute / --per-month")
        line(out, f"key         {args.key}")
        line(out, f"month       {status.month}")
        print(f"minute      used {status.minute_used}, left {bound(status.minute_left)} "
              f"of {bound(status.per_minute)}", file=out)
        print(f"month       used {status.month_used}, left {bound(status.month_left)} "
              f"of {bound(status.per_month)}", file=out)
        line(out, f"bounds      {source}")
    return 0


def _cmd_lease(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:

    from ..polling._lease import Lease

    url, kind = _coordination_store(args, "Lease")
    if kind == "postgresql" and not _pg_has(url, "lease", "sports_posts_leases", "key = %(key)s", {"key": args.key}):
        raise NothingThere(f"no lease {args.key!r} at this store: no poller has taken it "
                               "(check the key; nothing was created)")
    with _closing(Lease(url, key=args.key)) as lease:
        lease._runner._migrated = True  # the status and release statements never need a new table
        before = lease.status()
        if before.token == 0 and not before.holder:  # nobody ever took it: a mistyped key, most likely
            raise NothingThere(f"no lease {args.key!r} at this store: no poller has taken it "
                                   "(check the key; nothing was created)")
        released = None
        if args.lease_command == "release":
            if not args.force:
                raise Refused(
                    f"release frees lease {args.key!r} whoever holds it (now: {before.holder or 'nobody'}, "
                    f"token {before.token}); the holder stops at its next renewal. Add --force")
            released = lease.force_release()
    if args.json:
        _dump({**dataclasses.asdict(before), **({} if released is None else {"released": released})}, out)
    else:
        expires = "-" if before.expires_in is None else f"in {before.expires_in:.1f} s"
        for label, value in (("key", before.key), ("holder", before.holder or "(free)"),
                             ("token", before.token), ("expires", expires)):
            line(out, f"{label:<11} {value}")
        if released is not None:
            print("released: the next holder gets a higher token" if released else "it was not held", file=out)
    return 0


def _dedupe_store(args: argparse.Namespace) -> Any:
    """The dedupe store at the URL, read-only until told otherwise: never creates a table or file."""
    url = _store_url(args)
    kind = _store_kind(url)
    if kind == "redis":
        from ..webhooks import RedisDedupeStore

        return RedisDedupeStore(url, **({"prefix": args.prefix} if args.prefix else {}))
    if args.prefix:
        raise SportsPostsError("--prefix is for a Redis dedupe store only")
    if kind == "postgresql":
        from ..webhooks import PostgresDedupeStore

        if not _pg_has(url, "claim", "sports_posts_claims"):
            raise NothingThere("no dedupe store at this database: table sports_posts_claims is missing "
                               "(nothing was created)")
        return PostgresDedupeStore(url, auto_migrate=False)
    from ..webhooks import SQLiteDedupeStore

    path = url.split("://", 1)[1] if "://" in url else url
    if not path or not Path(path).is_file():
        raise NothingThere(f"no SQLite dedupe store at {safe(path)!r}")
    return SQLiteDedupeStore(path)


def _cmd_claim(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """A story's dedupe claim: what blocks its redeliveries (a 409 loop), and freeing it."""
    with _closing(_dedupe_store(args)) as store:
        status = store.claim_status(args.key)
        released = None
        if args.claim_command == "release":
            if status.state != "claimed":
                raise NothingThere(f"no claim in progress for {args.key!r} ({status.state}): nothing to release"
                                   + ("; a done story is a duplicate until its ttl ends" if status.state == "done" else ""))
            if not args.force:
                left = f"{status.expires_in:.0f} s" if status.expires_in is not None else "its lease"
                raise Refused(f"release frees the claim of {args.key!r} whoever holds it (it would end by itself "
                              f"in {left}); the next delivery is then processed. Add --force")
            store.release(args.key)
            released = store.claim_status(args.key).state == "none"
    if args.json:
        _dump({"key": status.key, "state": status.state, "expires_in": status.expires_in,
               **({} if released is None else {"released": released})}, out)
    else:
        left = "-" if status.expires_in is None else f"in {status.expires_in:.1f} s"
        for label, value in (("key", status.key), ("state", status.state), ("expires", left)):
            line(out, f"{label:<11} {value}")
        if released is not None:
            print("released: the next delivery of this story is processed" if released
                  else "not released: it changed meanwhile", file=out)
    if status.state == "none" and args.claim_command == "status":
        return EXIT_NOTHING
    return 0


def _cmd_redis_respell(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Respell the SDK's keys for the deployment the URL names, after a migration tool copied
    them from another kind (one server or Sentinel to a cluster, or back)."""
    from .._stores.redis import Redis
    from .._stores.redis_moves import respell

    url = _store_url(args)
    if _store_kind(url) != "redis":
        raise SportsPostsError("respell is for Redis: name a redis://, redis+cluster:// or redis+sentinel:// URL")
    db = Redis("respell", url)
    moved: list[tuple[str, str]] = []
    try:
        for prefix in args.dedupe_prefix or ["sports_posts:webhooks:"]:
            moved += respell(db, prefix, dry_run=args.dry_run)
        for key in args.lease_key or ["sports_posts:poll"]:
            moved += respell(db, key, [":lease", ":fence"], dry_run=args.dry_run)
        cluster = bool(db.cluster)
    finally:
        db.close()
    if args.json:
        _dump({"cluster": cluster, "dry_run": args.dry_run, "moved": [list(pair) for pair in moved]}, out)
    else:
        verb = "would move" if args.dry_run else "moved"
        line(out, f"{verb} {count(len(moved), 'key')} to the names of a "
                  f"{'cluster' if cluster else 'single server'}")
        for old, new in moved[:50]:
            line(out, f"  {old} -> {new}")
        if len(moved) > 50:
            line(out, f"  ... and {len(moved) - 50} more")
    return 0


# -- registration -------------------------------------------------------------------------


def _url_arguments(parser: argparse.ArgumentParser, text: str) -> None:
    parser.add_argument("url", metavar="URL", nargs="?", default=None, type=path,
                        help=f"{text} (or --url-file, or ${STORE_URL_ENV}: kept out of ps and shell history)")
    parser.add_argument("--url-file", default=None, metavar="FILE", type=path, help="read the store's URL from FILE")


def _status_and_release(sub: Any, as_json: argparse.ArgumentParser, command: str, text: str,
                        texts: tuple[str, str], url_help: str, key_help: str,
                        run: Command) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """``COMMAND status URL KEY`` and ``COMMAND release URL KEY --force``: what holds a thing,
    and freeing it whoever holds it (a lease, a story's claim)."""
    p = sub.add_parser(command, help=text)
    commands = p.add_subparsers(dest=f"{command}_command", required=True)
    made = []
    for name, help_text in zip(("status", "release"), texts):
        c = commands.add_parser(name, parents=[as_json], help=help_text, description=help_text)
        _url_arguments(c, url_help)
        c.add_argument("key", metavar="KEY", help=key_help)
        if name == "release":
            c.add_argument("--force", action="store_true", help="really free it")
        c.set_defaults(run=run)
        made.append(c)
    return made[0], made[1]


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
    c.add_argument("--checkpoint", type=path, default=None, help="a file that keeps the handled ids across runs")
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
    for name, text in (("status", "entries per state"),
                       ("active", "entries in progress: key, worker, attempts, lease left"),
                       ("dead", "the dead letters: key, attempts, last error"),
                       ("requeue", "give dead letters a fresh set of attempts"),
                       ("purge-dead", "delete every dead letter (with --force)")):
        c = isub.add_parser(name, parents=[as_json], help=text, description=text)
        _url_arguments(c, url_help)
        c.add_argument("--prefix", default=None, help="a Redis inbox's key prefix, if not the default")
        if name == "requeue":
            c.add_argument("keys", nargs="*", metavar="KEY", help="the dead letters to requeue")
            c.add_argument("--all", action="store_true", help="requeue every dead letter")
        if name == "purge-dead":
            c.add_argument("--force", action="store_true", help="really delete them")
        if name == "active":
            c.add_argument("--limit", type=positive_int, default=100, help="at most this many (default 100)")
        c.set_defaults(run=_cmd_inbox)

    p = sub.add_parser("budget", help="a CallBudget's use, drawing nothing")
    bsub = p.add_subparsers(dest="budget_command", required=True)
    c = bsub.add_parser("status", parents=[as_json], help="calls used and left this minute and month")
    _url_arguments(c, "the store: redis://... or postgresql://...")
    c.add_argument("--key", default="sports_posts:budget", help="the budget's key (default sports_posts:budget)")
    c.add_argument("--per-minute", type=positive_int, default=None, help="the bound the fleet uses, to show what is left")
    c.add_argument("--per-month", type=positive_int, default=None, help="the bound the fleet uses, to show what is left")
    c.set_defaults(run=_cmd_budget_status)

    _status_and_release(
        sub, as_json, "lease", "a poller's lease: who holds it; free a stuck one",
        ("holder, fencing token, expiry", "free the lease whoever holds it (with --force)"),
        "the store: redis://... or postgresql://...", "the lease's key (the checkpoint's key)", _cmd_lease)
    c_status, c_release = _status_and_release(
        sub, as_json, "claim", "a story's dedupe claim: what blocks it (a 409 loop); free a stuck one",
        ("the claim of a story: none, claimed (until when) or done",
         "free a claim in progress whoever holds it (with --force)"),
        "the dedupe store: redis://..., postgresql://... or a SQLite file",
        "the story's dedupe key (the receiver logs it with each 409)", _cmd_claim)
    for c in (c_status, c_release):
        c.add_argument("--prefix", default=None, help="a Redis dedupe store's key prefix, if not the default")

    p = sub.add_parser("redis", help="the SDK's Redis keys across deployments")
    rsub = p.add_subparsers(dest="redis_command", required=True)
    text = ("after a migration tool copied the SDK's keys from one server (or Sentinel) to a cluster, "
            "or back, give them this deployment's names: dedupe marks and markers, leases and their "
            "fencing counters (which never go back)")
    c = rsub.add_parser("respell", parents=[as_json], help="rename copied keys for this deployment", description=text)
    _url_arguments(c, "the Redis the keys were copied to: redis://..., redis+cluster://... or redis+sentinel://...")
    c.add_argument("--dedupe-prefix", action="append", metavar="PREFIX",
                   help="a RedisDedupeStore's prefix (repeat; default sports_posts:webhooks:)")
    c.add_argument("--lease-key", action="append", metavar="KEY",
                   help="a Lease's key (repeat; default sports_posts:poll)")
    c.add_argument("--dry-run", action="store_true", help="list what would move, move nothing")
    c.set_defaults(run=_cmd_redis_respell)
