"""The post of GET /posts and its page envelope (spec 2.1 to 2.4)."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import Field, model_validator

from ._base import SportsPostsModel, UTCDateTime

__all__ = ["Author", "Media", "MediaType", "Pagination", "Post", "PostsResponse", "TaggedPlayer", "TaggedTeam"]

MediaType = Union[Literal["image", "photo", "video", "gif", "animated_gif", "none"], str]
"""Both vocabularies of the spec (image/video/none and photo/gif/animated_gif); open."""


class Author(SportsPostsModel):
    """The nested author of the reference example."""

    username: Optional[str] = None
    name: Optional[str] = None
    profile_image_url: Optional[str] = None
    verified: Optional[bool] = None


class Media(SportsPostsModel):
    """An attached image, video or gif (spec 2.2)."""

    type: Optional[MediaType] = None
    url: Optional[str] = None
    preview_image_url: Optional[str] = None
    width: Optional[int] = None
    height: Optional[int] = None
    duration_ms: Optional[int] = None


class TaggedTeam(SportsPostsModel):
    """A team tagged on a post; ``provider1_guid_id`` has the shape ``s:<n>~l:<n>~t:<n>``."""

    provider1_guid_id: Optional[str] = None
    service_id: Optional[int] = None
    name: Optional[str] = None


class TaggedPlayer(SportsPostsModel):
    """A player tagged on a post; ``provider1_guid_id`` is a UUID."""

    provider1_guid_id: Optional[str] = None
    service_id: Optional[int] = None
    name: Optional[str] = None


class Post(SportsPostsModel):
    """A verified sports post.

    The spec documents the author twice: flat (``author_username``, ``author_id``) and
    nested (``author``). Whichever the service sent, both are filled.
    """

    id: str
    created_at: UTCDateTime
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
    media_type: Optional[MediaType] = None
    highlight: Optional[bool] = None
    teams: list[TaggedTeam] = Field(default_factory=list)
    players: list[TaggedPlayer] = Field(default_factory=list)
    media: list[Media] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _ids_as_strings(cls, data: Any) -> Any:
        # Post ids are strings on the wire; a numeric id (some exports write them as
        # numbers) is kept as its decimal text rather than rejected.
        if isinstance(data, dict):
            for key in ("id", "author_id"):
                value = data.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    data = {**data, key: str(value)}
            for key in ("teams", "players", "media"):
                if key in data and data[key] is None:
                    data = {**data, key: []}
        return data

    @model_validator(mode="after")
    def _fill_both_author_forms(self) -> Post:
        if self.author is None:
            if self.author_username is not None:
                self.author = Author(username=self.author_username)
        elif self.author_username is None:
            self.author_username = self.author.username
        return self


class Pagination(SportsPostsModel):
    """Where a page stands; ``has_next`` drives auto-pagination."""

    page: int = 1
    limit: Optional[int] = None
    has_next: bool = False
    has_prev: bool = False


class PostsResponse(SportsPostsModel):
    """The body of GET /posts."""

    pagination: Pagination = Field(default_factory=Pagination)
    items: list[Post] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _null_items(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("items", []) is None:
            data = {**data, "items": []}
        return data
