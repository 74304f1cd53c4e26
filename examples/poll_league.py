"""Follow one league: print every new post once, oldest first, and survive restarts.

Run it against the service (or a sandbox's base URL and key):

    export SPORTS_POSTS_API_KEY=...                 # from the customer dashboard
    export SPORTS_POSTS_BASE_URL=https://.../v1
    python examples/poll_league.py NFL              # Ctrl-C or SIGTERM to stop

Stop it and start it again: it resumes from ``poll-<league>.json`` and repeats at most the
batch it was handling. ``SPORTS_POSTS_MAX_CALLS_PER_DAY`` (default 6, about the free
plan's 200 calls a month) stretches the interval to stay inside the budget.
"""

from __future__ import annotations

import logging
import os
import signal
import sys

from sports_posts import FileCheckpoint, Post, SportsPosts


def store(batch: list[Post]) -> None:
    """Stand-in for your database: an upsert by post.id makes a repeated batch harmless."""
    for post in batch:
        print(f"{post.created_at:%H:%M:%S} {post.league} @{post.author_username}: {post.text}")


def main(league: str) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    budget = int(os.environ.get("SPORTS_POSTS_MAX_CALLS_PER_DAY", "6"))
    with SportsPosts() as client:  # key and base URL from the environment
        poller = client.posts.poll(
            leagues=league,
            interval=60,
            max_calls_per_day=budget,
            checkpoint=FileCheckpoint(f"poll-{league.lower()}.json"),
        )
        signal.signal(signal.SIGTERM, lambda *_: poller.stop())  # finish the cycle, then exit
        with poller:  # a clean exit commits the last batch; an exception leaves it to repeat
            for batch in poller:
                store(batch)
        print(f"stopped after {poller.calls} call(s)", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "NFL")
