"""How posts read on a terminal: one line each, cut to the terminal's width."""

from __future__ import annotations

import shutil
from typing import Optional

from .models.post import Post

__all__ = ["format_post", "one_line"]


def _width() -> int:
    return max(60, shutil.get_terminal_size((120, 24)).columns)


def one_line(text: Optional[str], width: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def format_post(post: Post, width: Optional[int] = None) -> str:
    """One readable line: time, league, author, likes, media, text."""
    width = width or _width()
    when = post.created_at.strftime("%Y-%m-%d %H:%M:%S")
    head = f"{when}  {post.league or '-':<7} @{(post.author_username or '?')[:16]:<16} {post.like_count or 0:>6}♥ {str(post.media_type or '-'):<6} "
    return head + one_line(post.text, width - len(head))
