"""``sports-posts demo``: the whole SDK end to end against an embedded sandbox.

The sandbox runs on a manual clock that the poller's waits move forward, so the demo
shows minutes of live traffic in a few seconds and prints the same thing every run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, TextIO

from .._client import SportsPosts
from ..models.post import Post
from ..polling import MemoryCheckpoint, Poller
from ..testing import serve_asgi
from ._format import count, format_post

__all__ = ["run_demo"]

SECRET = "whsec_demo_only_not_a_real_secret"


class _Printer:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def section(self, title: str) -> None:
        print(f"\n== {title}", file=self.out)

    def line(self, text: str = "") -> None:
        print(text, file=self.out)

    def posts(self, posts: Sequence[Post], limit: int = 5, *, none: str = "(no posts)") -> None:
        """The first ``limit`` posts, then how many more there are; ``none`` when there are none."""
        for post in posts[:limit]:
            print("  " + format_post(post, 110), file=self.out)
        if len(posts) > limit:
            print(f"  ... and {len(posts) - limit} more", file=self.out)
        if not posts:
            print(f"  {none}", file=self.out)


class _LoseFirstAnswer:
    """An ASGI wrapper that plays a flaky proxy: the receiver handles the first delivery,
    but the service gets a 503 instead of its 2xx, so the service retries it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lost = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self.lost:
            await self.app(scope, receive, send)
            return
        self.lost += 1

        async def swallow(message: Any) -> None:
            return None

        await self.app(scope, receive, swallow)
        await send({"type": "http.response.start", "status": 503, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"proxy error"})


def _a_played_game(sb: Any, league: str) -> Any:
    """The most recent game of ``league`` with posts of its own visible in the sandbox's world
    (a game still ahead has none yet); ``None`` when no game has any."""
    now = sb.now()
    played: dict[int, int] = {}
    for post in list(sb.world.posts):
        if post.game is not None and post.game.league == league and post.visible_at(now):
            played[id(post.game)] = played.get(id(post.game), 0) + 1
    games = [g for g in sb.world.games_of(league) if played.get(id(g), 0) >= 1]
    return games[-1] if games else None


def run_demo(out: TextIO, *, seed: int = 7) -> int:
    """Run the demo; returns the exit status (0 when every step did what it shows)."""
    from ..sandbox import Sandbox
    from ..webhooks import MemoryDedupeStore, WebhookReceiver
    from ..webhooks.adapters.asgi import WebhookASGIApp

    p = _Printer(out)
    started = time.monotonic()
    with Sandbox(seed=seed, clock="manual", posts_per_minute=4.0, late_index_rate=0.25, time_scale=0.001,
                 webhook_timeout=10.0) as sb, \
            SportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
        p.line(f"sports-posts demo: an embedded sandbox at {sb.base_url} (no account, no network)")

        p.section("Trending now: client.posts.trending(limit=5)")
        trending = client.posts.trending(limit=5)
        p.posts(trending.items)

        p.section("A league: client.posts.by_league('NBA', limit=3)")
        p.posts(client.posts.by_league("NBA", limit=3).items)

        teams = client.ids.teams("NFL", reference_id="code")
        team = teams.items[0]
        p.section(f"A team: {team.location} {team.name} (service id {team.service_id}, code {team.reference})")
        team_posts = client.posts.by_team([str(team.service_id)], id_type="service", limit=3).items
        p.posts(team_posts)

        tagged = next((pl for post in trending.items + team_posts for pl in post.players), None)
        if tagged is None:
            tagged = next(pl for post in client.posts.by_league("NBA", has_player=True, limit=1).items
                          for pl in post.players)
        p.section(f"A player: {tagged.name} (provider1_guid {tagged.provider1_guid_id})")
        p.posts(client.posts.by_player([str(tagged.provider1_guid_id)], id_type="provider1_guid", limit=3).items)

        p.section("Nearby: 25 km around Boston (42.36, -71.06)")
        p.posts(client.posts.nearby(42.3601, -71.0589, radius_km=25, limit=3).items)

        game = _a_played_game(sb, "NBA")
        if game is None:  # a world whose games all lie ahead (a seed of one's own)
            p.section("A game: none played yet")
            p.line("  (every NBA game of this sandbox starts after its clock's start: no posts of its own)")
        else:
            p.section(f"A game: {game.away.full_name} at {game.home.full_name}, {game.start_time:%Y-%m-%d %H:%M} UTC")
            p.posts(client.posts.for_game((str(game.home.service_id), str(game.away.service_id)), game.start_time,
                                          include_pregame=True, limit=3).items,
                    none="(its posts are not visible to this key)")

        p.section("Polling: new posts, each once, oldest first (interval 60 s of sandbox time)")
        def wait(seconds: float) -> None:  # the poller's waits move the sandbox clock
            sb.advance(seconds)

        poller = Poller(client, filters={"leagues": "NFL,NBA,NHL,MLB"}, interval=60, checkpoint=MemoryCheckpoint(),
                        clock=sb.now, sleep=wait)
        seen: set[str] = set()
        duplicates = 0
        batches = 0
        late = None
        for batch in poller:
            batches += 1
            duplicates += sum(1 for post in batch if post.id in seen)
            seen.update(post.id for post in batch)
            p.line(f"  batch {batches} at sandbox {sb.now():%H:%M:%S}: {count(len(batch), 'new post')}")
            p.posts(batch, limit=3)
            if batches == 2:
                # A post created now but indexed 45 s late: a naive since-poller would skip it.
                late = sb.publish_post("NFL", text="Late-indexed: practice report filed before the newer posts",
                                       index_delay=45)
            if batches >= 4:
                break
        poller.close()
        caught = late is not None and late.id in seen
        p.line(f"  {len(seen)} posts in {batches} batches, {duplicates} repeated, "
               f"late-indexed post {'caught' if caught else 'MISSED'}; {poller.calls} calls")

        p.section("Webhooks: a signed breaking-news event and its update")
        handled: list[Any] = []
        store = MemoryDedupeStore()
        # sent_at is stamped on the sandbox's manual clock: the replay window reads the same one.
        receiver = WebhookReceiver(SECRET, handled.append, store=store, clock=lambda: sb.now().timestamp())
        proxy = _LoseFirstAnswer(WebhookASGIApp(receiver))
        try:
            with serve_asgi(proxy, lifespan="off") as root:
                sb.subscribe(root + "/webhooks", SECRET, leagues=["NFL"])
                first = sb.send_breaking_news("NFL", news_type="injury", alt_sources=2)
                sb.drain_deliveries(timeout=20)
                update = sb.send_update(first["data"]["event_id"], whats_new="MRI confirms a high ankle sprain")
                sb.drain_deliveries(timeout=20)
                receiver.wait_idle(timeout=10)
        finally:
            receiver.close()
        attempts = sb.deliveries
        for attempt in attempts:
            answer = attempt.status_code if attempt.status_code is not None else attempt.error
            p.line(f"  {attempt.event:<20} delivery {attempt.delivery_id[:8]}… attempt {attempt.attempt} -> {answer}")
        for event in handled:
            extra = f" (update of {event.data.update_of[:8]}…: {event.data.whats_new})" if event.event != "breaking_news" else ""
            p.line(f"  handled {event.event}: {event.data.text[:70]}{extra}")
            if event.event == "breaking_news":
                p.line(f"    alt_sources: {', '.join(s.source or '?' for s in event.data.alt_sources)}")
        retried = len(attempts) - len({a.job_id for a in attempts})

        p.section("Summary")
        ok = (
            caught and duplicates == 0 and len(handled) == 2
            and {e.event for e in handled} == {"breaking_news", "breaking_news.update"}
            and update["data"]["update_of"] == first["data"]["event_id"] and retried >= 1
        )
        spent = client.calls
        counted = client.account.information().usage.current_calls  # free: not counted itself
        p.line(f"  API calls spent: {spent}; the service counted {counted} (account information is free)")
        p.line(f"  posts polled: {len(seen)}, repeated: {duplicates}, late-indexed caught: {caught}")
        p.line(f"  webhook deliveries: {len(attempts)} attempts, {retried} retried, "
               f"{len(handled)} handled once each (the retry was de-duplicated)")
        p.line(f"  took {time.monotonic() - started:.1f} s; {'all good' if ok else 'SOMETHING WENT WRONG'}")
        return 0 if ok else 1
