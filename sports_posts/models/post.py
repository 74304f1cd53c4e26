"""The post of GET /posts and its page envelope (spec 2.1 to 2.4)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Optional, Union

from pydantic import ConfigDict, Field

from .._errors import PaginationError
from ._base import OpenVocabulary, SportsPostsModel, UTCDateTime

__all__ = ["Author", "Media", "MediaType", "Pagination", "Post", "PostsResponse", "TaggedPlayer", "TaggedTeam"]

MediaType = Annotated[
    Union[Literal["image", "photo", "video", "gif", "animated_gif", "none"], str], OpenVocabulary()
]
"""Both vocabularies of the spec (image/video/none and photo/gif/animated_gif); open."""

_FLAT_ONLY = (
    "Optional although spec 2.1 lists it in the nested author form: a post in the flat form "
    "carries only the username, and its author is built from that."
)


class Author(SportsPostsModel):
    """The account that published a post (the nested form of the author)."""

    username: str
    """Handle of the account that posted, without the @."""

    name: Optional[str] = Field(None, description=_FLAT_ONLY)
    """Display name of the account; ``None`` when the service sent the flat form (username only)."""

    profile_image_url: Optional[str] = Field(None, description=_FLAT_ONLY)
    """URL of the account's profile picture; ``None`` when the service sent the flat form."""

    verified: Optional[bool] = Field(None, description=_FLAT_ONLY)
    """Whether the platform marks the account as verified; ``None`` when the service sent the flat form."""


class Media(SportsPostsModel):
    """An image, video or gif attached to a post."""

    type: MediaType
    """Kind of media, in either vocabulary of ``media_type``."""

    url: str
    """URL of the media file."""

    preview_image_url: Optional[str] = Field(
        None,
        description="Optional although spec 2.2 lists it: the source platform gives a still preview "
        "only for videos and gifs, a photo being its own preview.",
    )
    """URL of a still preview image; ``None`` for a photo."""

    width: int
    """Width in pixels."""

    height: int
    """Height in pixels."""

    duration_ms: Optional[int] = Field(
        None,
        description="Optional although spec 2.2 lists it: the source platform gives a length only "
        "for videos and gifs, a photo has none.",
    )
    """Length of a video or gif in milliseconds; ``None`` for a photo."""


class TaggedTeam(SportsPostsModel):
    """A team tagged on a post; ``provider1_guid_id`` has the shape ``s:<n>~l:<n>~t:<n>``."""

    provider1_guid_id: str
    """Structured team id of the shape ``s:<n>~l:<n>~t:<n>``."""

    service_id: int
    """The service's own team id (``id_type="service"``)."""

    name: str
    """Team name."""


class TaggedPlayer(SportsPostsModel):
    """A player tagged on a post; ``provider1_guid_id`` is a UUID."""

    provider1_guid_id: str
    """Player id in the provider1 system: a UUID."""

    service_id: int
    """The service's own player id (``id_type="service"``)."""

    name: str
    """Player name."""


class Post(SportsPostsModel):
    """A verified sports post.

    The service writes the author in one of two forms: flat (``author_username``,
    ``author_id``) or nested (``author``). Whichever it sent, both are filled.
    """

    id: str
    """The post's id on its source platform; also what ``since_id`` takes."""

    created_at: UTCDateTime
    """When the post was published, as an aware ``datetime`` in UTC."""

    post_url: str
    """Direct URL of the post."""

    text: str
    """The body of the post."""

    author: Optional[Author] = Field(
        None,
        description="Optional: only the nested author form carries it (spec 2.1 documents a flat and "
        "a nested form); built from author_username when the flat form came.",
    )
    """Who posted it; built from ``author_username`` when only the flat form came."""

    author_username: Optional[str] = Field(
        None,
        description="Optional: only the flat author form carries it (spec 2.1 documents a flat and "
        "a nested form); taken from author.username when the nested form came.",
    )
    """Handle of the author; taken from ``author`` when only the nested form came."""

    author_id: Optional[str] = Field(
        None,
        description="Optional: only the flat author form carries it (spec 2.1 documents a flat and "
        "a nested form), and the nested form has no id to take it from.",
    )
    """The author's id on the source platform."""

    league: str
    """League code the post is tagged with, such as ``NFL``."""

    like_count: int
    """Likes when the post was indexed."""

    retweet_count: int
    """Reposts when the post was indexed."""

    reply_count: int
    """Replies when the post was indexed."""

    quote_count: int
    """Quotes when the post was indexed."""

    media_type: MediaType
    """Kind of attached media (``image``, ``photo``, ``video``, ``gif``, ``animated_gif``,
    ``none``); a value the service adds later is kept as it is."""

    highlight: bool
    """Whether the post is a highlight clip."""

    teams: list[TaggedTeam]
    """Teams tagged on the post."""

    players: list[TaggedPlayer]
    """Players tagged on the post."""

    media: list[Media]
    """Attached images, videos and gifs."""

    # Numeric ids (some exports write them as numbers) are kept as their decimal text.
    model_config: ClassVar[ConfigDict] = ConfigDict(extra="allow", populate_by_name=True, coerce_numbers_to_str=True)

    def model_post_init(self, context: Any, /) -> None:
        # Wherever the post is validated (alone, in a page, inside a caller's model): the
        # usual post carries both forms, and costs one check here.
        fields = self.__dict__
        if fields["author"] is None or fields["author_username"] is None:
            _fill_author(fields)


def _fill_author(fields: dict[str, Any]) -> None:
    """Fill whichever author form the service left out from the one it sent.

    Called from ``Post.model_post_init`` (pydantic's public hook), not a validator: a
    "before" validator would make pydantic build the whole JSON as Python objects first,
    and an "after" one costs more per post than the hook. Aliases
    (``AliasChoices``/``AliasPath``) would keep it all in pydantic-core but took a page's
    parse from 1.02x to 1.26x the plain models, and cannot take the other form when the
    service sends ``null`` for one (docs/performance.md has the figures). The ``Author``
    of a flat post is validated from the username (``model_validate``), so it is the
    ``Author`` a nested ``{"username": ...}`` makes.
    """
    author = fields["author"]
    if author is None:
        username = fields["author_username"]
        if username is not None:
            fields["author"] = Author.model_validate({"username": username})
    elif fields["author_username"] is None:
        fields["author_username"] = author.username



class Pagination(SportsPostsModel):
    """Where a page stands; ``has_next`` drives auto-pagination."""

    page: int
    """Number of this page, from 1."""

    limit: int
    """Posts per page that the service applied."""

    has_next: bool
    """Whether a later page exists; iteration stops when it is false."""

    has_prev: bool
    """Whether an earlier page exists."""


class PostsResponse(SportsPostsModel):
    """The body of GET /posts. Both sections are required: a 200 without ``pagination`` or
    ``items`` is not an empty page (a poller would commit it as "nothing new")."""

    pagination: Pagination
    """Where this page stands."""

    items: list[Post]
    """The posts of this page."""

    def check_follows(self, previous: PostsResponse) -> None:
        """Raise ``PaginationError`` unless this page, asked for as the one after
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

