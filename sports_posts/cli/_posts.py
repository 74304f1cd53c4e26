"""The commands that read the service once: ``posts``, ``account`` and ``teams``."""

from __future__ import annotations

import argparse
import math
from typing import TextIO

from .._errors import NotFoundError, SportsPostsError
from ._common import (
    MAX_PAGE_SIZE,
    add_post_filters,
    connect,
    filters,
    page_size,
    positive_int,
    print_posts,
    safe,
)
from ._format import align, count, post_header


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
    with connect(args, err) as client:
        page = client.posts.list(**filters(args), limit=page_size)
        posts = list(page.iter_items(max_items=args.limit, max_pages=calls))
        if not args.json:
            print(post_header(), file=out)
        print_posts(posts, args.json, out)
        print(f"{count(len(posts), 'post')}, {count(client.calls, 'call')}", file=err)
    return 0


def _cmd_account(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with connect(args, err) as client:
        if args.x_ids:
            compliance = client.account.x_ids()
            if args.json:
                print(safe(compliance.model_dump_json()), file=out)
            else:
                print(f"as of {compliance.as_of}: {count(len(compliance.ids_to_delete), 'post id')} to delete",
                      file=out)
                for post_id in compliance.ids_to_delete:
                    print(safe(post_id), file=out)
            return 0
        info = client.account.information()
        if args.json:
            print(safe(info.model_dump_json()), file=out)
        else:
            c, b, u = info.company, info.billing_cycle, info.usage
            print(safe(f"company       {c.name}"), file=out)
            print(safe(f"plan          {c.plan} ({c.subscription_status})"), file=out)
            print(f"billing cycle {b.current_period_start} .. {b.current_period_end}", file=out)
            print(f"calls used    {u.current_calls}", file=out)
    return 0


def _cmd_teams(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    league = args.league_option or args.league
    if not league or (args.league_option and args.league and args.league_option != args.league):
        raise SportsPostsError("name one league: sports-posts teams --league NBA")
    with connect(args, err) as client:
        try:
            teams = client.ids.teams(league, reference_id=args.reference_id, lookup=args.lookup)
        except NotFoundError as exc:
            if args.lookup is None or args.reference_id:
                raise
            # The lookup value is a service id unless --reference-id names another system.
            print(f"sports-posts: error: {type(exc).__name__}: {safe(str(exc))}", file=err)
            print(f"sports-posts: hint: --lookup matches service ids; to look a team up by another id, name "
                  f"it: --reference-id code (or nba_id, ...), as in sports-posts teams --league "
                  f"{safe(league)} --lookup {safe(args.lookup)} --reference-id code", file=err)
            return 1
        if args.json:
            for team in teams:
                print(safe(team.model_dump_json()), file=out)
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
                print(safe(line), file=out)
        print(count(len(teams), "team"), file=err)
    return 0


def add_posts_command(sub: argparse._SubParsersAction[argparse.ArgumentParser], service: argparse.ArgumentParser) -> None:
    """``posts``: GET /posts with any filter."""
    p = sub.add_parser("posts", parents=[service], help="GET /posts with any filter",
                       description="Print --limit posts (default 20) matching the filters, spending as few "
                       "calls as that needs: one call for up to 100 posts.")
    add_post_filters(p)
    p.add_argument("--limit", type=positive_int, default=20, help="how many posts to print (default 20)")
    p.add_argument("--page-size", type=page_size, default=None,
                   help=f"posts per call, 1-{MAX_PAGE_SIZE} (default: --limit, up to {MAX_PAGE_SIZE})")
    p.add_argument("--max-calls", type=positive_int, default=10,
                   help="refuse, before any call, a --limit that needs more calls than this (default 10)")
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.set_defaults(run=_cmd_posts)



def add_account_command(sub: argparse._SubParsersAction[argparse.ArgumentParser], service: argparse.ArgumentParser) -> None:
    """``account``: account information, or the compliance ids."""
    p = sub.add_parser("account", parents=[service], help="account information (free), or --x-ids")
    p.add_argument("--x-ids", action="store_true", help="the post ids to delete for compliance")
    p.add_argument("--json", action="store_true", help="JSON instead of text")
    p.set_defaults(run=_cmd_account)



def add_teams_command(sub: argparse._SubParsersAction[argparse.ArgumentParser], service: argparse.ArgumentParser) -> None:
    """``teams``: the teams of a league."""
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
