"""The ``poll`` command: new posts as they appear, within a daily and a monthly budget of
calls, with a status line on a terminal."""

from __future__ import annotations

import argparse
import math
import threading
from typing import TYPE_CHECKING, Any, Callable, Optional, TextIO, cast

from .._client import SportsPosts
from .._errors import SportsPostsError
from ._common import (
    MAX_PAGE_SIZE,
    SECONDS_PER_DAY,
    add_post_filters,
    connect,
    converted,
    filters,
    fresh_line,
    page_size,
    path,
    positive_int,
    print_posts,
    stop_on_sigterm,
)
from ._format import count, post_header

if TYPE_CHECKING:
    from .._params import PollFilters

_POLLER_OWNS = {"since", "since_id", "page", "sort"}
MIN_POLL_INTERVAL = 10.0
"""The shortest ``poll --interval`` (seconds): every cycle is at least one billed call."""
FREE_PLAN_CALLS_PER_MONTH = 200
"""The free plan's quota; ``poll`` keeps within it unless told otherwise."""


def _poll_interval(text: str) -> float:
    """``poll --interval``: seconds, from the floor up to a day."""
    value = converted(float, text, f"a number of seconds ({MIN_POLL_INTERVAL:g} to {SECONDS_PER_DAY:g})")
    if not (MIN_POLL_INTERVAL <= value <= SECONDS_PER_DAY):  # also refuses nan
        raise argparse.ArgumentTypeError(
            f"from {MIN_POLL_INTERVAL:g} to {SECONDS_PER_DAY:g} seconds (every cycle is a billed call), got {text}"
        )
    return value


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
    from ..polling import FileCheckpoint, Poller

    checkpoint = FileCheckpoint(args.checkpoint) if args.checkpoint else None
    wanted = filters(args, skip=frozenset(_POLLER_OWNS))
    status = _PollStatus(err, _feed(wanted), lambda: poller.calls)
    if args.page_size is not None:
        wanted["limit"] = args.page_size
    with connect(args, err) as client:
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

        # The flags are the table of PollFilters' keys (cli._common._POST_PARAMS), checked there.
        poller = Poller(client, since=args.since, interval=args.interval, checkpoint=checkpoint,
                        filters=cast("PollFilters", wanted), sleep=sleep, max_calls_per_day=budget.per_day)

        def stop() -> None:
            poller.stop()
            status.stop()

        batches = 0
        interrupted = False
        try:
            # Ctrl-C inside the with-block leaves the batch being printed uncommitted, so a
            # restart prints it again rather than losing its unprinted half.
            with stop_on_sigterm(stop), poller:
                for batch in poller:
                    if not args.json and batches == 0:
                        print(post_header(), file=out)
                    print_posts(batch, args.json, out)
                    out.flush()
                    batches += 1
                    if args.max_batches and batches >= args.max_batches:
                        break
        except KeyboardInterrupt:
            interrupted = True
        done = f"{count(batches, 'batch', 'batches')}, {count(poller.calls, 'call')}"
        if interrupted:  # one line, as for every command on Ctrl-C
            print(f"{fresh_line(err)}sports-posts: interrupted ({done})", file=err)
            return 130
        print(done, file=err)
        if spent:
            print(f"sports-posts: error: stopped at the monthly cap: {budget.used + poller.calls} of "
                  f"{budget.cap} calls of this billing cycle used (raise --max-calls-per-month to go on)",
                  file=err)
            return 1
    return 0


def add_poll_command(sub: argparse._SubParsersAction[argparse.ArgumentParser], service: argparse.ArgumentParser) -> None:
    """``poll``: print new posts as they appear, each once."""
    p = sub.add_parser("poll", parents=[service], help="print new posts as they appear, each once",
                       description="Print new posts as they appear, each once, oldest first. Every cycle "
                       "is a billed call: it starts by saying how many calls a day it may spend (from "
                       "the budget flags, else from the plan, read for free). On a terminal a status "
                       "line shows the feed, the next call and the calls spent.")
    add_post_filters(p, skip=frozenset(_POLLER_OWNS))
    p.add_argument("--since", default=None, help="start here when the checkpoint is empty")
    p.add_argument("--interval", type=_poll_interval, default=60.0,
                   help=f"seconds between cycles, {MIN_POLL_INTERVAL:g} or more (default 60)")
    p.add_argument("--max-calls-per-day", type=positive_int, default=None, metavar="N",
                   help="wait rather than spend more than N calls a day (default: the calls left in "
                        "the month spread over the days left, when there is a monthly cap)")
    p.add_argument("--max-calls-per-month", type=positive_int, default=None, metavar="N",
                   help="stop before the account's calls this billing cycle pass N (default: 200 on "
                        "the free plan, none on a paid plan)")
    p.add_argument("--page-size", type=page_size, default=None, help=f"posts per call, 1-{MAX_PAGE_SIZE}")
    p.add_argument("--checkpoint", type=path, default=None, help="a file that keeps the position across restarts")
    p.add_argument("--max-batches", type=positive_int, default=None, help="stop after this many batches")
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.set_defaults(run=_cmd_poll)
