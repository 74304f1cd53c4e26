"""How posts and tables read on a terminal: aligned columns, cut to the terminal's width."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import Optional

from ..models.post import Post

__all__ = ["align", "cell", "count", "format_post", "one_line", "post_header"]

# Fixed widths, so that batches printed one after another (``poll``) line up too; each is
# wide enough for every value of the spec's vocabularies ("animated_gif", "CRICKET").
_POST_COLUMNS = ((19, False), (7, False), (20, False), (7, True), (12, False))
POST_HEADER = ("created (UTC)", "league", "author", "likes", "media", "text")


def _width() -> int:
    return max(60, shutil.get_terminal_size((120, 24)).columns)


def one_line(text: Optional[str], width: int) -> str:
    """``text`` on one line, cut with an ellipsis to at most ``width`` characters."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def cell(text: str, width: int, right: bool = False) -> str:
    """``text`` cut or padded to exactly ``width`` characters."""
    text = one_line(text, width)
    return text.rjust(width) if right else text.ljust(width)


def count(n: int, noun: str, plural: Optional[str] = None) -> str:
    """``1 post``, ``2 posts``; ``plural`` for nouns that do not just take an s."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _likes(n: Optional[int]) -> str:
    value = n or 0
    if value < 100_000:
        return str(value)
    if value < 10_000_000:
        return f"{value / 1000:.0f}k"
    return f"{value / 1_000_000:.0f}M"


def _post_row(values: Sequence[str], width: int) -> str:
    head = "  ".join(cell(v, w, right) for v, (w, right) in zip(values, _POST_COLUMNS)) + "  "
    return head + one_line(values[-1], max(10, width - len(head)))


def format_post(post: Post, width: Optional[int] = None) -> str:
    """One line of the posts table: time, league, author, likes, media, text."""
    values = (
        post.created_at.strftime("%Y-%m-%d %H:%M:%S"),
        post.league or "-",
        "@" + (post.author_username or "?"),
        _likes(post.like_count),
        str(post.media_type or "-"),
        post.text or "",
    )
    return _post_row(values, width or _width())


def post_header(width: Optional[int] = None) -> str:
    """The header line of the posts table."""
    return _post_row(POST_HEADER, width or _width())


def align(rows: Sequence[Sequence[str]], *, right: Sequence[int] = ()) -> list[str]:
    """Rows as lines with every column as wide as its widest cell (``right``: right-aligned
    column indexes); the last column is not padded."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell(v, w, i in right) if i < len(row) - 1 else v for i, (v, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return lines
