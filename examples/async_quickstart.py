"""The async client: several leagues fetched concurrently over one connection pool.

    python examples/async_quickstart.py          # an embedded sandbox by default

Costs: up to 8 calls (one per league, then up to three pages of hockey).
"""

from __future__ import annotations

import asyncio

from sports_posts import AsyncSportsPosts, Post
from sports_posts.sandbox import aconnect

LEAGUES = ["NFL", "NBA", "MLB", "NHL", "EPL"]


async def latest(client: AsyncSportsPosts, league: str) -> tuple[str, list[Post]]:
    page = await client.posts.by_league(league, sort="recent", limit=5)   # one call
    return league, page.items


async def main() -> None:
    async with aconnect() as client:
        for league, posts in await asyncio.gather(*(latest(client, league) for league in LEAGUES)):
            newest = posts[0].text if posts else "(nothing yet)"
            print(f"{league:<4} {len(posts)} posts; newest: {newest}")
        count = 0
        async for _post in client.posts.by_sport("hockey", limit=50).iter_items(max_items=120):
            count += 1                                             # pages fetched as reached
        print(f"{count} hockey posts; {client.calls} calls in all")


if __name__ == "__main__":
    asyncio.run(main())
