"""Follow one league: print every new post once, oldest first, and survive restarts.

    python examples/poll_league.py NFL --for 20      # an embedded sandbox: no account needed
    SPORTS_POSTS_API_KEY=... SPORTS_POSTS_BASE_URL=https://.../v1 python examples/poll_league.py NFL

Ctrl-C, SIGTERM or ``--for SECONDS`` stops it. Start it again and it resumes from
``poll-<league>.json``, repeating at most the batch it was handling; an empty checkpoint
starts a day back. Costs: one call per cycle (one per 100 new posts), at most
``SPORTS_POSTS_MAX_CALLS_PER_DAY`` a day (default 6, about the free plan's 200 calls a
month): the interval stretches to stay inside that budget.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from datetime import datetime, timedelta, timezone

from sports_posts import FileCheckpoint, Post
from sports_posts.sandbox import connect


def store(batch: list[Post]) -> None:
    """Stand-in for your database: an upsert by post.id makes a repeated batch harmless."""
    for post in batch:
        print(f"{post.created_at:%H:%M:%S} {post.league} @{post.author_username}: {post.text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("league", nargs="?", default="NFL")
    parser.add_argument("--for", dest="seconds", type=float, help="stop after this many seconds")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)

    path = f"poll-{args.league.lower()}.json"
    # `since` only places a first start: a restart resumes from the checkpoint (and passing
    # `since` beside a saved checkpoint logs a WARNING that it was ignored).
    since = None if os.path.exists(path) else datetime.now(timezone.utc) - timedelta(days=1)
    with connect(posts_per_minute=30, late_index_rate=0.2) as client:  # sandbox options only
        poller = client.posts.poll(
            leagues=args.league,
            since=since,
            interval=60,
            max_calls_per_day=int(os.environ.get("SPORTS_POSTS_MAX_CALLS_PER_DAY", "6")),
            checkpoint=FileCheckpoint(path),
        )

        def on_sigterm(signum: int, frame: object) -> None:
            poller.stop()  # finish the cycle, then exit

        signal.signal(signal.SIGTERM, on_sigterm)
        if args.seconds:
            threading.Timer(args.seconds, poller.stop).start()  # stop() also cuts a wait short
        try:
            with poller:  # a clean exit commits the last batch; an exception leaves it to repeat
                for batch in poller:
                    store(batch)
        except KeyboardInterrupt:
            pass  # the checkpoint holds the last batch that was fully stored
        print(f"{args.league}: {poller.calls} call(s)", file=sys.stderr)


if __name__ == "__main__":
    main()
