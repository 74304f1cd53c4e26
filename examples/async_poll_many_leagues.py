"""Follow many leagues at once: one event loop, one connection pool, one poller per league.

    export SPORTS_POSTS_API_KEY=...
    export SPORTS_POSTS_BASE_URL=https://.../v1
    python examples/async_poll_many_leagues.py NFL NBA MLB NHL

Each league has its own checkpoint file, so each resumes on its own after a restart, and a
failing league (say, 403: not on your plan) stops only its own poller. Every poller costs
at least one call per cycle: with many leagues, a longer interval or a single poller with
``leagues="NFL,NBA,..."`` spends less.
"""

from __future__ import annotations

import asyncio
import logging
import sys

from sports_posts import AsyncSportsPosts, FileCheckpoint, Post, SportsPostsError

log = logging.getLogger("example")


async def store(league: str, batch: list[Post]) -> None:
    """Stand-in for your (async) database: upsert by post.id."""
    for post in batch:
        print(f"[{league}] {post.created_at:%H:%M:%S} @{post.author_username}: {post.text}")


async def follow(aclient: AsyncSportsPosts, league: str, interval: float) -> int:
    """Poll one league until cancelled or stopped; return the calls it spent."""
    poller = aclient.posts.poll(
        leagues=league, interval=interval, checkpoint=FileCheckpoint(f"poll-{league.lower()}.json")
    )
    try:
        async with poller:
            async for batch in poller:
                await store(league, batch)
    except SportsPostsError as exc:  # raised only for what retrying cannot fix (401, 403, ...)
        log.error("%s: stopped: %s", league, exc)
    return poller.calls


async def main(leagues: list[str]) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    async with AsyncSportsPosts() as aclient:  # one pool shared by every poller
        calls = await asyncio.gather(*(follow(aclient, league, 120.0) for league in leagues))
    print(dict(zip(leagues, calls)), file=sys.stderr)


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1:] or ["NFL", "NBA"]))
    except KeyboardInterrupt:
        pass  # each checkpoint holds the last batch that was fully stored
