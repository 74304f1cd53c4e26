"""Follow many leagues at once: one event loop, one connection pool, one poller per league.

    python examples/async_poll_many_leagues.py NFL NBA MLB NHL --for 20   # embedded sandbox
    SPORTS_POSTS_API_KEY=... SPORTS_POSTS_BASE_URL=https://.../v1 \\
        python examples/async_poll_many_leagues.py NFL NBA

Each league has its own checkpoint file, so each resumes on its own after a restart, and a
league that fails for good (403: not on your plan) stops only its own poller. Costs: every
poller at least one call per cycle (one per 100 new posts): with many leagues, a longer interval or one poller with
``leagues="NFL,NBA,..."`` spends less.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from datetime import datetime, timedelta, timezone

from sports_posts import AsyncPoller, AsyncSportsPosts, FileCheckpoint, Post, SportsPostsError
from sports_posts.sandbox import aconnect

log = logging.getLogger("example")


async def store(league: str, batch: list[Post]) -> None:
    """Stand-in for your (async) database: upsert by post.id."""
    for post in batch:
        print(f"[{league}] {post.created_at:%H:%M:%S} @{post.author_username}: {post.text}")


async def follow(poller: AsyncPoller, league: str) -> int:
    """Poll one league until stopped; return the calls it spent."""
    try:
        async with poller:
            async for batch in poller:
                await store(league, batch)
    except SportsPostsError as exc:  # raised only for what retrying cannot fix (401, 403, ...)
        log.error("%s: stopped: %s", league, exc)
    return poller.calls


def start(aclient: AsyncSportsPosts, league: str, hours: float) -> AsyncPoller:
    return aclient.posts.poll(
        leagues=league,
        since=datetime.now(timezone.utc) - timedelta(hours=hours),  # ignored once a checkpoint exists
        interval=120,
        checkpoint=FileCheckpoint(f"poll-{league.lower()}.json"),
    )


async def main(leagues: list[str], seconds: float, hours: float = 24.0) -> None:
    async with aconnect(posts_per_minute=30, late_index_rate=0.2) as aclient:  # one pool for all
        pollers = [start(aclient, league, hours) for league in leagues]
        if seconds:
            for poller in pollers:
                asyncio.get_running_loop().call_later(seconds, poller.stop)
        calls = await asyncio.gather(*(follow(p, league) for p, league in zip(pollers, leagues)))
    print(", ".join(f"{league}: {n} call(s)" for league, n in zip(leagues, calls)), file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("leagues", nargs="*", default=["NFL", "NBA"])
    parser.add_argument("--for", dest="seconds", type=float, default=0.0, help="stop after this many seconds")
    parser.add_argument("--hours", type=float, default=24.0, help="on a first run, start this many hours back")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        asyncio.run(main(args.leagues, args.seconds, args.hours))
    except KeyboardInterrupt:
        pass  # each checkpoint holds the last batch that was fully stored
