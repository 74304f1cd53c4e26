"""The emulated service without its HTTP server: world, clock, keys, webhooks and admin actions.

``SandboxService`` is what the routes of ``app`` act on; ``server.Sandbox``
adds the uvicorn server that serves them. Keeping the two apart keeps the dependency one-way
(service <- app <- server).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from importlib import resources
from typing import TYPE_CHECKING, Any, Optional, Union, cast

from typing_extensions import Unpack

from .. import _utils
from .._errors import ParameterError
from .._vocabulary import WebhookHeaders
from ._teams import LEAGUES
from .accounts import Accounts
from .clock import Clock, ManualClock, SystemClock
from .config import (
    BreakingNewsOptions,
    BurstLimit,
    ChaosSettings,
    KeyChanges,
    KeyConfig,
    KeyOptions,
    SandboxState,
    UpdateOptions,
)
from .news import breaking_news_data, update_data
from .profile import Profile, profile_named
from .sender import Delivery, DeliveryAttempt, Subscription, SubscriptionOptions, WebhookSender
from .world import Player, Post, PostFields, Team, World, isoformat

if TYPE_CHECKING:
    from ..webhooks.testing import BreakingNewsPayload, BreakingNewsUpdatePayload

__all__ = ["AUTHOR_SHAPES", "SandboxService"]

AUTHOR_SHAPES = ("flat", "nested", "both", "mixed")
"""Author forms of spec 2.1: flat fields, the nested object, both in every post, or a seeded
mix of one form per post (the strict profile's default)."""


def _leagues(value: Optional[Iterable[str]]) -> Optional[frozenset[str]]:
    """League codes of a plan, upper-cased; ParameterError for a code the service does not know."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split(",")
    codes = frozenset(v.strip().upper() for v in value if v.strip())
    unknown = sorted(codes - set(LEAGUES))
    if unknown:
        raise ParameterError(f"unknown league codes: {', '.join(unknown)}")
    return codes


class SandboxService:
    """The emulated Sports Posts service, its live data and its webhooks, without a server.

    Everything ``server.Sandbox`` offers except the server's lifecycle; its routes
    (``app.create_app``) act on one of these.
    """

    def __init__(
        self,
        seed: int = 7,
        *,
        plan: str = "paid",
        leagues: Optional[Iterable[str]] = None,
        keys: Union[Sequence[KeyConfig], Mapping[str, KeyConfig], None] = None,
        posts: int = 3000,
        posts_per_minute: float = 2.0,
        late_index_rate: float = 0.1,
        deletions_per_hour: float = 4.0,
        profile: str = "strict",
        author_shape: Optional[str] = None,
        time_scale: float = 1.0,
        webhook_timeout: Optional[float] = None,
        webhook_header_names: Optional[WebhookHeaders] = None,
        chaos: Optional[ChaosSettings] = None,
        burst: Optional[BurstLimit] = None,
        clock: Union[Clock, str, None] = None,
        start: Optional[datetime] = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.profile: Profile = profile_named(profile)
        """How the sandbox reads what the specification leaves open (``strict`` or ``lenient``)."""
        if author_shape is None:
            author_shape = self.profile.author_shape
        if author_shape not in AUTHOR_SHAPES:
            raise ParameterError(f"author_shape must be one of {', '.join(AUTHOR_SHAPES)}")
        if clock is None or clock == "system":
            self.clock: Clock = SystemClock()
        elif clock == "manual":
            self.clock = ManualClock(start)
        elif isinstance(clock, Clock):
            self.clock = clock
        else:
            raise ParameterError("clock must be 'system', 'manual' or a Clock")
        self.seed = seed
        self.author_shape = author_shape
        self.chaos = chaos
        self.host = host
        self._requested_port = port
        self._rng = random.Random(f"{seed}:news")
        self.world: World = World(
            seed, start=self.clock.now(), posts=posts, posts_per_minute=posts_per_minute,
            late_index_rate=late_index_rate, deletions_per_hour=deletions_per_hour, now=self.clock.now,
        )
        self.accounts: Accounts = Accounts(seed, burst)
        self.api_key: str = self.accounts.add(KeyConfig(plan=plan, leagues=_leagues(leagues)))
        self.extra_keys: list[str] = []
        if isinstance(keys, Mapping):
            for key, config in keys.items():
                self.extra_keys.append(self.accounts.add(config, key))
        else:
            for config in keys or ():
                self.extra_keys.append(self.accounts.add(config))
        # A drill of the service's retry schedule: 0.01 runs 1, 2, 4, 8, 16 minutes in
        # 0.6, 1.2, 2.4, 4.8, 9.6 seconds (and the 10 s timeout in 0.1 s).
        self.time_scale: float = _utils.positive_float("time_scale", time_scale)
        self.sender: WebhookSender = WebhookSender(
            self.clock, time_scale=self.time_scale, timeout=webhook_timeout, header_names=webhook_header_names
        )
        self._events: dict[str, dict[str, Any]] = {}
        self._openapi: Optional[dict[str, Any]] = None

    # -- time and data --------------------------------------------------------------------

    def now(self) -> datetime:
        """The sandbox time."""
        return self.clock.now()

    def advance(self, seconds: float) -> datetime:
        """Move sandbox time forward: live posts appear, late posts get indexed, retries fall due."""
        now = self.clock.advance(seconds)
        self.world.sync(now)
        return now

    def publish_post(
        self,
        league: str = "NFL",
        *,
        text: Optional[str] = None,
        index_delay: float = 0.0,
        created_at: Optional[datetime] = None,
        teams: Optional[Sequence[Union[Team, str]]] = None,
        players: Optional[Sequence[Player]] = None,
        **fields: Unpack[PostFields],
    ) -> Post:
        """Add a post now (visible after ``index_delay`` seconds); ``teams`` may be team codes;
        ``fields`` sets any other field of the `Post`."""
        resolved: Optional[list[Team]] = None
        if teams is not None:
            resolved = [t if isinstance(t, Team) else self.world.team(league, t) for t in teams]
        return self.world.publish(league=league, text=text, index_delay=index_delay,
                                  created_at=created_at, teams=resolved, players=players, **fields)

    def delete_post(self, post_id: str) -> Post:
        """Delete a post now: it disappears from GET /posts and appears in /account/x-ids."""
        return self.world.delete(post_id, self.now())

    def visible_posts(self, league: Optional[str] = None) -> list[Post]:
        """Posts GET /posts can return now, oldest first."""
        return self.world.visible_posts(self.now(), league=league)

    # -- keys, usage, chaos -----------------------------------------------------------------

    def add_key(self, plan: str = "paid", **options: Unpack[KeyOptions]) -> str:
        """Create an API key with its own plan and settings; returns the key.

        Options: ``active``, ``leagues``, ``company``, ``monthly_quota``, ``burst``, ``chaos``,
        ``endpoints`` (the endpoints on the plan, of ``posts``, ``account/x-ids``, ``ids``).
        """
        endpoints = options.get("endpoints")
        config = KeyConfig(plan=plan, leagues=_leagues(options.get("leagues")),
                           endpoints=frozenset(endpoints) if endpoints is not None else None)
        rest: dict[str, Any] = {k: v for k, v in options.items() if k not in ("leagues", "endpoints")}
        return self.accounts.add(replace(config, **rest))

    def update_key(self, key: str, **changes: Unpack[KeyChanges]) -> None:
        """Change a key's plan, ``active``, ``leagues``, quota, burst, chaos or endpoints."""
        fields: dict[str, Any] = dict(changes)
        if "leagues" in changes:
            fields["leagues"] = _leagues(changes["leagues"])
        endpoints = changes.get("endpoints")
        if endpoints is not None:
            fields["endpoints"] = frozenset(endpoints)
        self.accounts.update(key, **fields)

    def calls(self, key: Optional[str] = None) -> int:
        """Calls counted this billing cycle for ``key`` (default: ``api_key``)."""
        account = self.accounts.get(key or self.api_key)
        if account is None:
            raise KeyError("unknown API key")
        return account.calls

    def reset_usage(self, key: Optional[str] = None) -> None:
        """Zero the usage counters of one key or of all keys."""
        self.accounts.reset_usage(key)

    def set_chaos(self, settings: Optional[ChaosSettings] = None, *, key: Optional[str] = None) -> None:
        """Set (or clear, with None) chaos globally or for one key."""
        if key is None:
            self.chaos = settings
        else:
            self.accounts.update(key, chaos=settings)

    # -- webhooks ---------------------------------------------------------------------------

    def subscribe(self, url: str, secret: str, **options: Unpack[SubscriptionOptions]) -> Subscription:
        """Register a webhook target with its signing secret and filters (spec 6.4).

        Filters: ``leagues``, ``news_types``, ``news_statuses``, ``news_origins``.
        ``header_names`` renames the three headers of its deliveries (default: the sandbox's
        ``webhook_header_names``, else spec 6.2's), as a proxy or white-label deployment would.
        """
        return self.sender.subscribe(url, secret, **options)

    def unsubscribe(self, subscription_id: str) -> None:
        """Remove a subscription."""
        self.sender.unsubscribe(subscription_id)

    def send_breaking_news(
        self, league: str = "NFL", **options: Unpack[BreakingNewsOptions]
    ) -> BreakingNewsPayload:
        """Publish a news post and send ``breaking_news`` to matching subscriptions; returns the payload.

        Options: news_type, news_status, news_origin, news_attribution, text, alt_sources (a
        count or a list), event_id.
        """
        if "news_status" not in options and self.profile.draw_news_status:
            # Both the filter values and the sample's value reach receivers (spec 6.3's discrepancy).
            options["news_status"] = self._rng.choice(("verified", "rumor", "confirmed"))
        data, _post = breaking_news_data(self.world, self._rng, league=league, **options)
        self._events[data["event_id"]] = data
        jobs = self.sender.emit("breaking_news", data)
        payload = self._payload(jobs, "breaking_news", data)  # built to spec 6.3 by news.py
        return cast("BreakingNewsPayload", cast(object, payload))

    def send_update(
        self, event_id: str, whats_new: str = "New details confirmed", **options: Unpack[UpdateOptions]
    ) -> BreakingNewsUpdatePayload:
        """Send ``breaking_news.update`` for a story to the subscriptions that got its first event."""
        original = self._events.get(event_id)
        if original is None:
            raise KeyError(f"no breaking_news event {event_id!r} was sent")
        data, _post = update_data(self.world, self._rng, original, whats_new=whats_new, **options)
        only = self.sender.event_subscribers.get(event_id, set())
        jobs = self.sender.emit("breaking_news.update", data, only=only)
        payload = self._payload(jobs, "breaking_news.update", data)
        return cast("BreakingNewsUpdatePayload", cast(object, payload))

    def emit(self, event: str, data: dict[str, object]) -> dict[str, object]:
        """Send an arbitrary event payload (for malformed-payload tests) to matching subscriptions;
        ``data`` is any JSON object. Returns the payload sent."""
        jobs = self.sender.emit(event, cast("dict[str, Any]", data))
        return self._payload(jobs, event, data)

    def _payload(self, jobs: list[Delivery], event: str, data: dict[str, Any]) -> dict[str, Any]:
        if jobs:
            return dict(jobs[0].payload)
        return {"event": event, "sent_at": isoformat(self.now()), "data": data}

    @property
    def deliveries(self) -> list[DeliveryAttempt]:
        """The delivery log: one row per attempt, oldest first."""
        return list(self.sender.log)

    @property
    def delivery_jobs(self) -> list[Delivery]:
        """One entry per (event, subscription) with its state: pending, in_flight, delivered or dead."""
        return list(self.sender.jobs)

    def wait_for_deliveries(self, timeout: float = 10.0) -> None:
        """Block until no attempt is in flight or due now; raises TimeoutError."""
        self.sender.wait(timeout)

    def drain_deliveries(self, timeout: float = 10.0) -> None:
        """Run every delivery to the end (delivered or dead), moving the clock to each retry."""
        self.sender.drain(timeout)

    # -- description ---------------------------------------------------------------------------

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI 3.1 description shipped with the package (also served at /v1/openapi.json)."""
        if self._openapi is None:
            text = resources.files("sports_posts.sandbox").joinpath("openapi.json").read_text("utf-8")
            self._openapi = json.loads(text)
        return self._openapi

    def state(self) -> SandboxState:
        """A summary for the admin route and the CLI (no secrets)."""
        now = self.now()
        return {
            "now": isoformat(now), "seed": self.seed, "profile": self.profile.name,
            "author_shape": self.author_shape, "time_scale": self.time_scale,
            "visible_posts": len(self.world.visible_posts(now)),
            "deleted_posts": len(self.world.deleted_posts(now)),
            "subscriptions": len(self.sender.subscriptions),
            "deliveries": len(self.sender.log),
        }
