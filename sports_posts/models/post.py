"""The post of GET /posts and its page envelope (spec 2.1 to 2.4)."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import ConfigDict, Field

from .._errors import PaginationError
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

    # Numeric ids (some exports write them as numbers) are kept as their decimal text.
    model_config = ConfigDict(extra="allow", populate_by_name=True, coerce_numbers_to_str=True)

    def model_post_init(self, context: Any, /) -> None:
        # One cheap pass per post instead of validators: a "before" validator would make
        # pydantic build the whole JSON as Python objects first (about 2x slower pages).
        fields = self.__dict__
        author = fields["author"]
        if author is None:
            if fields["author_username"] is not None:
                fields["author"] = Author.model_construct(username=fields["author_username"])
        elif fields["author_username"] is None:
            fields["author_username"] = author.username


class Pagination(SportsPostsModel):
    """Where a page stands; ``has_next`` drives auto-pagination."""

    page: int = 1
    limit: Optional[int] = None
    has_next: bool = False
    has_prev: bool = False


class PostsResponse(SportsPostsModel):
    """The body of GET /posts. Both sections are required: a 200 without ``pagination`` or
    ``items`` is not an empty page (a poller would commit it as "nothing new")."""

    pagination: Pagination
    items: list[Post]

    def check_follows(self, previous: PostsResponse) -> None:
        """Raise :class:`PaginationError` unless this page, asked for as the one after
        ``previous``, moves on: a page number that does not grow, or the very same posts
        again, means the next call would bring nothing new either."""
        asked = previous.pagination.page + 1
        if self.pagination.page <= previous.pagination.page:
            raise PaginationError(
                f"GET /posts page {asked} did not advance: the service answered page "
                f"{self.pagination.page} after page {previous.pagination.page}",
                page=asked,
            )
        ids = {post.id for post in self.items}
        if ids and ids == {post.id for post in previous.items}:
            raise PaginationError(
                f"GET /posts page {asked} did not advance: it holds the same {len(ids)} "
                f"post(s) as page {previous.pagination.page}",
                page=asked,
            )
