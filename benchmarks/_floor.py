"""The plainest pydantic models of the benchmark page: the floor under ``Post``'s parse.

Same fields and types as ``sports_posts.models`` with unknown fields kept, but no hooks,
no aliases, no open enums. Parsing into these shows what any page of validated pydantic
models costs on this machine, so the SDK's own share of the parse can be read off.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class Author(_Model):
    username: Optional[str] = None
    name: Optional[str] = None
    profile_image_url: Optional[str] = None
    verified: Optional[bool] = None


class Tagged(_Model):
    provider1_guid_id: Optional[str] = None
    service_id: Optional[int] = None
    name: Optional[str] = None


class Media(_Model):
    type: Optional[str] = None
    url: Optional[str] = None
    preview_image_url: Optional[str] = None
    width: Optional[int] = None
    height: Optional[int] = None
    duration_ms: Optional[int] = None


class Post(_Model):
    id: str
    created_at: datetime
    post_url: Optional[str] = None
    text: Optional[str] = None
    author: Optional[Author] = None
    author_username: Optional[str] = None
    author_id: Optional[str] = None
    league: Optional[str] = None
    like_count: Optional[int] = None
    retweet_count: Optional[int] = None
    reply_count: Optional[int] = None
    quote_count: Optional[int] = None
    media_type: Optional[str] = None
    highlight: Optional[bool] = None
    teams: list[Tagged] = Field(default_factory=list)
    players: list[Tagged] = Field(default_factory=list)
    media: list[Media] = Field(default_factory=list)


class Pagination(_Model):
    page: int = 1
    limit: Optional[int] = None
    has_next: bool = False
    has_prev: bool = False


class Page(_Model):
    pagination: Pagination = Field(default_factory=Pagination)
    items: list[Post]


def parse_plain(body: bytes) -> Page:
    """``body`` into the plain models, the way the SDK parses: from bytes."""
    return Page.model_validate_json(body)


def parse_plain_with_authors(body: bytes) -> Page:
    """``parse_plain``, then an ``Author`` built by hand for each post that came in the flat
    form only: what a user would write to have both forms, as the SDK's models do."""
    page = parse_plain(body)
    for post in page.items:
        if post.author is None and post.author_username is not None:
            post.author = Author(username=post.author_username)
    return page


class HookedPost(Post):
    """``Post`` with an empty ``model_post_init``: pydantic then calls Python once per post.

    The SDK fills the author forms in that public hook, wherever a post is validated; these
    models show what the call alone costs, the floor of any model that uses the hook.
    """

    def model_post_init(self, context: Any, /) -> None:
        pass


class HookedPage(Page):
    items: list[HookedPost]  # type: ignore[assignment]  # the same field, of hooked posts


def parse_hooked(body: bytes) -> HookedPage:
    """``body`` into the plain models whose posts run an empty ``model_post_init``."""
    return HookedPage.model_validate_json(body)
