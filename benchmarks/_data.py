"""A realistic page of posts (about 90 KB for 100 posts), the same in every run."""

from __future__ import annotations

import json
import random
from typing import Any

_TEAMS = [("s:20~l:28~t:4", 4, "Buffalo Bills"), ("s:20~l:28~t:22", 22, "Kansas City Chiefs"),
          ("s:20~l:28~t:17", 17, "Green Bay Packers"), ("s:20~l:28~t:30", 30, "San Francisco 49ers")]


def post(i: int, rng: random.Random) -> dict[str, Any]:
    team = _TEAMS[i % len(_TEAMS)]
    video = i % 3 == 0
    return {
        "id": str(1790000000000000000 + i),
        "post_url": f"https://x.com/NFLnews/status/{1790000000000000000 + i}",
        "text": (
            f"{team[2]} injury update: QB limited at practice "
            f"and is questionable. #{i}"
        ),
        "created_at": f"2026-11-21T12:{i % 60:02d}:{(i * 7) % 60:02d}Z",
        "author_username": "NFLnews",
        "author_id": "19426551",
        "author": {"username": "NFLnews", "name": "NFL News", "verified": True,
                   "profile_image_url": "https://pbs.example/profile_images/1/nfl_400x400.jpg"},
        "league": "NFL",
        "like_count": rng.randint(0, 50000),
        "retweet_count": rng.randint(0, 5000),
        "reply_count": rng.randint(0, 2000),
        "quote_count": rng.randint(0, 500),
        "media_type": "video" if video else "photo",
        "highlight": video,
        "teams": [{"provider1_guid_id": team[0], "service_id": team[1], "name": team[2]}],
        "players": [{"provider1_guid_id": f"0d5c4e7a-{i:04d}-4000-8000-000000000001", "service_id": 1000 + i,
                     "name": "Josh Allen"}],
        "media": [{"type": "video" if video else "photo", "url": f"https://video.example/{i}.mp4",
                   "preview_image_url": f"https://img.example/{i}.jpg", "width": 1280, "height": 720,
                   "duration_ms": 45000 if video else 0}],
    }


_FORMS = {
    "both": (),
    "flat": ("author",),  # the machine-readable description's form
    "nested": ("author_username", "author_id"),  # the reference example's form
}


def page_bytes(n: int = 100, form: str = "both") -> bytes:
    """A page of ``n`` posts whose author comes in both forms, or only the ``flat`` or ``nested`` one."""
    rng = random.Random(7)
    left_out = _FORMS[form]
    items = [{k: v for k, v in post(i, rng).items() if k not in left_out} for i in range(n)]
    body = {"pagination": {"page": 1, "limit": n, "has_next": True, "has_prev": False}, "items": items}
    return json.dumps(body).encode()
