"""Thread events into stories: a first report and its updates share ``event_id`` / ``update_of``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from .events import AltSource, BreakingNewsEvent, BreakingNewsUpdateEvent, WebhookEvent

__all__ = ["Story", "thread_stories"]


@dataclass
class Story:
    """One story: its first report (if received), its updates in order, and every alt source."""

    event_id: str
    original: Optional[BreakingNewsEvent] = None
    updates: list[BreakingNewsUpdateEvent] = field(default_factory=list)
    alt_sources: list[AltSource] = field(default_factory=list)
    """Follow-on reports from the original and the updates, each ``post_url`` once."""

    @property
    def events(self) -> list[WebhookEvent]:
        """The original (when present) followed by the updates."""
        first: list[WebhookEvent] = [self.original] if self.original is not None else []
        return first + list(self.updates)

    @property
    def latest(self) -> WebhookEvent:
        """The newest event of the story: what to show as its current state."""
        return self.events[-1]

    @property
    def sent_at(self) -> datetime:
        """When the story's earliest known event was sent."""
        return min(event.sent_at for event in self.events)


def _story_id(event: WebhookEvent) -> str:
    if isinstance(event, BreakingNewsUpdateEvent):
        return event.data.update_of or event.data.event_id
    return event.data.event_id


def thread_stories(events: Iterable[WebhookEvent]) -> list[Story]:
    """Group events into stories, oldest story first; a repeated delivery is counted once.

    An update that arrives before its original still starts the story (``original`` stays
    ``None`` until it comes), so nothing is dropped whatever the arrival order.
    """
    stories: dict[str, Story] = {}
    seen: set[str] = set()
    for event in events:
        if event.dedupe_key in seen:
            continue
        seen.add(event.dedupe_key)
        story = stories.setdefault(_story_id(event), Story(_story_id(event)))
        if isinstance(event, BreakingNewsEvent):
            if story.original is None or event.sent_at < story.original.sent_at:
                story.original = event
        else:
            story.updates.append(event)
    for story in stories.values():
        story.updates.sort(key=lambda update: update.sent_at)
        urls: set[Optional[str]] = set()
        for event in story.events:
            for source in event.data.alt_sources:
                marker = source.post_url if source.post_url is not None else repr(source)
                if marker not in urls:
                    urls.add(marker)
                    story.alt_sources.append(source)
    return sorted(stories.values(), key=lambda story: story.sent_at)
