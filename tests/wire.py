"""Spec-complete wire bodies for test fixtures: every field sections 2.1 to 2.7 list.

A fixture that means to test something else starts from these and overrides what it is
about, so a body is never refused for a field the test did not care about. A test of a
missing field removes it explicitly (``without``).
"""

from __future__ import annotations

from typing import Any, Optional


def spec_post(
    id: str = "1",
    created_at: str = "2024-05-01T12:00:00Z",
    *,
    author: str = "flat",
    **overrides: Any,
) -> dict[str, Any]:
    """A post of spec 2.1; ``author`` is ``flat``, ``nested``, ``both`` or ``none`` (the union of
    the two documented author forms)."""
    body: dict[str, Any] = {
        "id": id,
        "post_url": f"https://x.example/p/{id}",
        "text": f"post {id}",
        "created_at": created_at,
        "league": "NFL",
        "like_count": 10,
        "retweet_count": 2,
        "reply_count": 1,
        "quote_count": 0,
        "media_type": "video",
        "highlight": False,
        "teams": [],
        "players": [],
        "media": [],
    }
    if author in ("flat", "both"):
        body["author_username"] = "nflnews"
        body["author_id"] = "42"
    if author in ("nested", "both"):
        body["author"] = spec_author()
    body.update(overrides)
    return body


def spec_author(username: str = "nflnews", **overrides: Any) -> dict[str, Any]:
    """The nested author form of spec 2.1."""
    return {
        "username": username,
        "name": "NFL News",
        "profile_image_url": f"https://img.example/{username}.jpg",
        "verified": True,
        **overrides,
    }


def spec_media(**overrides: Any) -> dict[str, Any]:
    """A MediaObject of spec 2.2 (a video: every field)."""
    return {
        "type": "video",
        "url": "https://video.example/1.mp4",
        "preview_image_url": "https://img.example/1.jpg",
        "width": 1280,
        "height": 720,
        "duration_ms": 30_000,
        **overrides,
    }


def spec_pagination(page: Any = 1, *, limit: int = 20, has_next: bool = False, **overrides: Any) -> dict[str, Any]:
    """The pagination object of spec 2.4."""
    return {"page": page, "limit": limit, "has_next": has_next, "has_prev": isinstance(page, int) and page > 1, **overrides}


def spec_page(
    items: Optional[list[dict[str, Any]]] = None,
    *,
    page: int = 1,
    limit: int = 20,
    has_next: bool = False,
    **pagination: Any,
) -> dict[str, Any]:
    """A PostsResponse of spec 2.4."""
    return {
        "pagination": spec_pagination(page, limit=limit, has_next=has_next, **pagination),
        "items": [] if items is None else items,
    }


def spec_account(current_calls: int = 7, **overrides: Any) -> dict[str, Any]:
    """The account information of spec 2.6."""
    return {
        "company": {"name": "Acme Sports", "plan": "free", "subscription_status": "active"},
        "billing_cycle": {
            "current_period_start": "2024-05-01T00:00:00+00:00",
            "current_period_end": "2024-06-01T00:00:00+00:00",
        },
        "usage": {"current_calls": current_calls},
        **overrides,
    }


def spec_compliance(ids: Optional[list[str]] = None, as_of: str = "2024-05-01T00:00:00Z") -> dict[str, Any]:
    """The compliance list of spec 2.7."""
    return {"ids_to_delete": [] if ids is None else ids, "as_of": as_of}


def without(body: dict[str, Any], *fields: str) -> dict[str, Any]:
    """``body`` without ``fields`` (a test of what a missing field gives)."""
    return {key: value for key, value in body.items() if key not in fields}
