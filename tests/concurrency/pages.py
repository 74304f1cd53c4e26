"""Calls whose answer names the request: a league, a page size and a page number, each
echoed by the page the service answers (its items' league, their count, ``pagination``)."""

from __future__ import annotations

from typing import Any

LEAGUES = ("NFL", "NBA", "MLB", "NHL")


def ask(n: int) -> dict[str, Any]:
    """The parameters of call ``n``: distinct enough that a neighbour's answer never fits."""
    return {"leagues": LEAGUES[n % len(LEAGUES)], "limit": 1 + n % 23, "page": 1 + (n // 7) % 5}


def wrong(params: dict[str, Any], page: Any) -> str:
    """Why ``page`` is not the answer to ``params`` ("" when it is)."""
    leagues = {post.league for post in page.items}
    got = (sorted(leagues), len(page.items), page.pagination.page, page.pagination.limit)
    want = ([params["leagues"]], params["limit"], params["page"], params["limit"])
    return "" if got == want else f"asked {want}, got {got}"
