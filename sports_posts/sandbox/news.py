"""Breaking-news payload data (spec 6.3): a story's first report, its alt_sources and its updates."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Optional, Union

from .world import Post, World, isoformat

__all__ = ["NEWS_ORIGINS", "NEWS_STATUSES", "NEWS_TYPES", "breaking_news_data", "update_data"]

NEWS_TYPES = (
    "injury", "trade", "signing", "cut", "suspension", "contract_extension", "roster_move",
    "return_from_injury", "coaching_change", "draft", "other",
)
NEWS_STATUSES = ("verified", "rumor", "confirmed")
NEWS_ORIGINS = ("breaking", "relaying")

_HEADLINES = {
    "injury": "{player} ({team}) is expected to miss time with an injury, per sources.",
    "trade": "{team} are trading {player}, per sources.",
    "signing": "{team} have signed {player}, per sources.",
    "cut": "{team} are releasing {player}.",
    "suspension": "{player} ({team}) has been suspended.",
    "contract_extension": "{team} and {player} agree to a contract extension.",
    "roster_move": "{team} move {player} to the active roster.",
    "return_from_injury": "{player} is set to return for {team}.",
    "coaching_change": "{team} have parted ways with their head coach.",
    "draft": "{team} select {player} in the draft.",
    "other": "News from {team}: {player} in focus.",
}
_OUTLETS = ("Sideline Wire", "Box Score Daily", "The Overtime Desk", "Final Whistle", "Press Box Live")


def _tags(post: Post) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    players = [{"service": p.service_id, "name": p.name} for p in post.players]
    teams = [{"service": t.service_id, "name": t.full_name} for t in post.teams]
    return players, teams


def _alt_sources(rng: random.Random, post: Post, count: int, sent_at: datetime) -> list[dict[str, Any]]:
    """``count`` follow-on reports, dated after the post and at or before ``sent_at``: a report
    attached to an event was written before the event was sent."""
    alts = []
    room = max(timedelta(0), sent_at - post.created_at)
    for i in range(count):
        outlet = _OUTLETS[(i + rng.randrange(len(_OUTLETS))) % len(_OUTLETS)]
        handle = outlet.replace(" ", "")
        post_id = str(int(post.id) + 1_000 * (i + 1))
        alts.append({
            "post_url": f"https://x.com/{handle}/status/{post_id}",
            "source": handle,
            "news_attribution": outlet,
            "role": "alt",
            "text": f"{outlet} also reporting: {post.text}",
            "created_at": isoformat(post.created_at + min(room, timedelta(seconds=30 * (i + 1)))),
        })
    return alts


def _news_data(
    world: World, rng: random.Random, post: Post, alt_sources: Union[int, Sequence[Mapping[str, object]]], **fields: Any
) -> dict[str, Any]:
    """A news event's data object: its post's id, url and text, ``fields`` in their order,
    then the alt sources; an empty ``event_id`` gets a fresh one, drawn after the alt
    sources so that a seeded world gives the same events."""
    alts: list[Mapping[str, object]] = (
        [*_alt_sources(rng, post, alt_sources, world.sync())] if isinstance(alt_sources, int) else list(alt_sources)
    )
    if not fields["event_id"]:
        fields["event_id"] = f"evt_{rng.getrandbits(96):024x}"
    return {"id": post.id, "post_url": post.post_url, "text": post.text, **fields, "alt_sources": alts}


def breaking_news_data(
    world: World,
    rng: random.Random,
    *,
    league: str = "NFL",
    news_type: str = "injury",
    news_status: str = "verified",
    news_origin: str = "breaking",
    news_attribution: Optional[str] = None,
    text: Optional[str] = None,
    alt_sources: Union[int, Sequence[Mapping[str, object]]] = 1,
    event_id: Optional[str] = None,
) -> tuple[dict[str, Any], Post]:
    """The data object of a ``breaking_news`` event; its post is published into the world too."""
    league = league.upper()
    post = world.publish(league=league, media_type="none", media=[], highlight=False)
    team = post.teams[0].full_name if post.teams else world.leagues[league].name
    player = post.players[0].name if post.players else "the roster"
    post.text = text or _HEADLINES.get(news_type, _HEADLINES["other"]).format(team=team, player=player)
    players, teams = _tags(post)
    data = _news_data(
        world, rng, post, alt_sources,
        league=league,
        media_type="text",
        created_at=isoformat(post.created_at),
        news_type=news_type,
        news_status=news_status,
        news_origin=news_origin,
        news_attribution=news_attribution or post.author.name,
        players=players,
        teams=teams,
        event_id=event_id,
    )
    return data, post


def update_data(
    world: World,
    rng: random.Random,
    original: dict[str, Any],
    *,
    whats_new: str,
    text: Optional[str] = None,
    news_type: Optional[str] = None,
    news_status: Optional[str] = None,
    alt_sources: Union[int, Sequence[Mapping[str, object]]] = 0,
) -> tuple[dict[str, Any], Post]:
    """The data object of a ``breaking_news.update`` threading onto ``original`` by event_id."""
    post = world.publish(league=original["league"], media_type="none", media=[], highlight=False)
    post.text = text or f"Update: {whats_new}"
    data = _news_data(
        world, rng, post, alt_sources,
        league=original["league"],
        news_type=news_type or original["news_type"],
        news_status=news_status or original["news_status"],
        event_id=original["event_id"],
        update_of=original["event_id"],
        whats_new=whats_new,
        players=original["players"],
        teams=original["teams"],
    )
    return data, post
