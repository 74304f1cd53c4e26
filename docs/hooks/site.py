"""mkdocs hook: the version in the header, links to repository files, and the
parameters table of ``posts.list``.

A link written ``[quickstart.py](repo:examples/quickstart.py)`` points at that file in
the repository (``repo_url``); a file that does not exist in this checkout fails the
build, so such a link cannot go stale.

``posts.list(**params)`` takes its keywords from the ``PostsListParams`` TypedDict, which
the reference cannot show as a signature; the table below is generated from that
TypedDict at build time, so it cannot drift from the code. Meanings live here; a key
without one fails the build.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any, Literal, Union

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

import sports_posts
from sports_posts import _params

MARKER = "<!-- posts-list-parameters -->"
ROOT = Path(__file__).resolve().parents[2]
REPO_LINK = re.compile(r"\]\(repo:([^)#\s]+)\)")

# (mode it selects or how it acts, meaning and limits), per key of PostsListParams.
MEANINGS: dict[str, tuple[str, str]] = {
    "leagues": (
        "league",
        "League codes, or `ALL`; case-insensitive; checked before sending "
        "(`Unchecked(\"XFL\")` sends a code the SDK does not know). Alone, it selects "
        "league mode (trending within those leagues); with another mode it narrows it.",
    ),
    "league": ("league", "The same parameter as `leagues`; pass one of the two."),
    "sports": (
        "any",
        "Parent sports: posts of every league of those sports. `football` is association "
        "football (`soccer` is the same); the NFL game is `americanfootball`.",
    ),
    "teams": (
        "team",
        f"Team ids, at most {_params.MAX_TEAMS}, in the `id_type` id system. "
        "Needs `id_type`.",
    ),
    "players": (
        "player",
        f"Player ids, at most {_params.MAX_PLAYERS}, in the `id_type` id system. "
        "Needs `id_type`.",
    ),
    "id_type": (
        "team, player",
        "The id system of `teams` or `players`; required with either. Open: "
        "any other string is sent as it is.",
    ),
    "match": (
        "game",
        "Exactly two team ids (`\"teamA,teamB\"` or a 2-tuple). Needs `start_time`.",
    ),
    "start_time": (
        "game",
        "The game's start: an aware `datetime` or an ISO 8601 string with an offset; "
        "sent in UTC.",
    ),
    "include_pregame": ("game", "Also posts from before the game."),
    "lat": ("nearby", "Latitude, -90 to 90. With `lng`, selects nearby mode."),
    "lng": ("nearby", "Longitude, -180 to 180. Needs `lat`."),
    "radius_km": (
        "nearby",
        f"Search radius in km, over 0 and at most {_params.MAX_RADIUS_KM:g}; "
        "the service's default applies when left out.",
    ),
    "media_type": (
        "any",
        "Only posts with this kind of media: `image`, `photo`, `video`, `gif`, "
        "`animated_gif` or `none`, checked before sending (`Unchecked(...)` sends a "
        "value the SDK does not know).",
    ),
    "aspect_ratio": ("any", "Only media of this shape."),
    "min_score": (
        "any",
        "Minimum engagement score, 0 to 9 (7 and above: top performing; 8 to 9: viral).",
    ),
    "min_duration": ("any", "Minimum video duration in milliseconds, 0 or more."),
    "highlight": ("any", "Only highlight clips."),
    "has_player": ("any", "Only posts with at least one tagged player."),
    "custom_sources": ("any", "Also posts from your account's custom sources."),
    "user_location": (
        "any",
        "Two-letter ISO 3166-1 country code: only sources cleared for viewing there.",
    ),
    "sort": (
        "trending (with `trending`)",
        "Order of the posts. `sort=\"trending\"` alone selects trending mode.",
    ),
    "since": (
        "any",
        "Only posts created after this time: an aware `datetime` or an ISO 8601 string "
        "with an offset; sent in UTC.",
    ),
    "since_id": (
        "any",
        "Only posts created after the post with this id; an id the service no longer "
        "has raises `SinceIdNotFoundError`.",
    ),
    "limit": ("paging", f"Posts per page, 1 to {_params.MAX_LIMIT}."),
    "page": ("paging", "Page number, 1 or more; iteration sets it for you."),
}


def _is_none(tp: Any) -> bool:
    return tp is type(None)


def _known_values(tp: Any) -> list[str]:
    """The values of a ``Literal[...] | str`` open vocabulary (or of a closed Literal)."""
    args = [a for a in typing.get_args(tp) if not _is_none(a)] or [tp]
    values: list[str] = []
    for arg in args:
        if typing.get_origin(arg) is Literal:
            values.extend(str(v) for v in typing.get_args(arg))
    return values


def format_type(tp: Any) -> str:
    """A type as a reader writes it: ``str | Sequence[str | int]``; ``None`` left out
    (every parameter may be ``None``, which means "not sent")."""
    origin = typing.get_origin(tp)
    if origin is Union:
        parts = [format_type(a) for a in typing.get_args(tp) if not _is_none(a)]
        literal = [p for p in parts if p.startswith('"')]
        rest = [p for p in parts if not p.startswith('"')]
        # An open vocabulary (Literal[...] | str) reads as str; its values are listed apart.
        if literal and "str" in rest:
            literal = []
        return " | ".join(dict.fromkeys(literal + rest))
    if origin is Literal:
        return " | ".join(f'"{v}"' for v in typing.get_args(tp))
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(format_type(a) for a in typing.get_args(tp))}]"
    if isinstance(tp, type):
        return tp.__name__
    return str(tp)


def parameters_table() -> str:
    """The markdown table of every ``PostsListParams`` key, in the order of ``MEANINGS``."""
    hints = typing.get_type_hints(_params.PostsListParams)
    missing = sorted(set(hints) - set(MEANINGS))
    stale = sorted(set(MEANINGS) - set(hints))
    if missing or stale:
        raise PluginError(
            "docs/hooks/site.py MEANINGS is out of date with PostsListParams: "
            f"missing {missing}, not parameters {stale}"
        )
    helpers = typing.get_type_hints(_params.PostFilters)
    poll = typing.get_type_hints(_params.PollFilters)
    rows = [
        "| parameter | type | mode | meaning and limits | also taken by |",
        "|---|---|---|---|---|",
    ]
    for name in sorted(hints, key=list(MEANINGS).index):
        mode, meaning = MEANINGS[name]
        values = _known_values(hints[name])
        if values:
            meaning += " Known values: " + ", ".join(f"`{v}`" for v in values) + "."
        also = [what for what, keys in (("helpers", helpers), ("poll", poll)) if name in keys]
        cells = [f"`{name}`", f"`{format_type(hints[name])}`", mode, meaning, ", ".join(also)]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Show the version of the package being documented next to the site name."""
    config.site_name = f"{config.site_name} {sports_posts.__version__}"
    config.copyright = f"sports-posts {sports_posts.__version__} · MIT License"
    return config


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, parameters_table())
    return REPO_LINK.sub(lambda m: f"]({repo_file_url(config, m.group(1))})", markdown)


def repo_file_url(config: MkDocsConfig, path: str) -> str:
    """The address of a file of this repository on the repository's site."""
    if not (ROOT / path).is_file():
        raise PluginError(f"a link points at {path}, which is not a file of the repository")
    return f"{str(config.repo_url).rstrip('/')}/blob/main/{path}"
