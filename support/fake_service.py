"""A stateful fake of GET /posts (spec 4.1) over an in-memory list of posts and a fake clock.

It implements what the poller relies on, as the specification says it: ``since``
(exclusive), ``since_id`` (400 ``SINCE_ID_NOT_FOUND`` when the post is unknown or
deleted), ``sort=recent`` (newest first), ``page``, ``limit`` (default 20, maximum 100),
``has_next`` / ``has_prev``, and ``leagues``. A post is visible only once its
``indexed_at`` has passed, so late indexing happens on its own as the clock moves.
Scripted answers (429 with ``Retry-After``, 500, anything) are served before the real one.
"""

from __future__ import annotations

import bisect
import email.utils
import json
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional

import httpx

from tests.wire import spec_post

T0 = datetime(2026, 11, 21, 12, 0, 0, tzinfo=timezone.utc)
BASE_URL = "https://fake.sports-posts.test/v1"


class FakeClock:
    """Service time and poller time at once: the poller's sleep advances it."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class FakePost:
    id: str
    created_at: datetime
    indexed_at: datetime
    league: str = "NFL"
    deleted: bool = False

    def wire(self) -> dict[str, Any]:
        return spec_post(
            self.id,
            self.created_at.isoformat().replace("+00:00", "Z"),
            league=self.league,
            author_username="reporter",
            post_url=f"https://x.example/{self.id}",
        )


@dataclass
class Scripted:
    status: int
    error_code: str
    headers: dict[str, str] = field(default_factory=dict)


class _PostTable(dict[str, FakePost]):
    """The service's posts by id; ``version`` counts its changes, so that the posts are
    put in creation order again only after one."""

    version = 0

    def __setitem__(self, key: str, value: FakePost) -> None:
        super().__setitem__(key, value)
        self.version += 1

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self.version += 1


def _counting(name: str) -> Callable[..., Any]:
    def change(self: _PostTable, *args: Any, **kwargs: Any) -> Any:
        result = getattr(dict, name)(self, *args, **kwargs)
        self.version += 1
        return result

    return change


for _name in ("pop", "popitem", "setdefault", "update", "clear", "__ior__"):
    setattr(_PostTable, _name, _counting(_name))


def _parse_dt(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _error(
    status: int, code: str, message: str, headers: Optional[dict[str, str]] = None
) -> httpx.Response:
    body = {"ok": False, "error_code": code, "error_message": message}
    return httpx.Response(status, json=body, headers=headers or {})


class FakePostsService:
    """The fake; pass :meth:`handler` to ``httpx.MockTransport``."""

    def __init__(self, clock: FakeClock, *, seconds_per_request: float = 0.0, max_limit: int = 100) -> None:
        self.clock = clock
        self.max_limit = max_limit  # 50 plays a service that follows the reference page
        self.posts = _PostTable()
        self._order: list[FakePost] = []  # every post by (created_at, id), as of _order_version
        self._created: list[datetime] = []  # their created_at, for bisection
        self._order_version = -1
        self.scripted: deque[Scripted] = deque()
        self.requests: list[dict[str, str]] = []
        self.seconds_per_request = seconds_per_request
        self.before_answer: Optional[Callable[[FakePostsService, dict[str, str]], None]] = None
        self.dated = False
        """Whether answers carry a ``Date`` header (off: the poller's clock goes uncorrected)."""

    # -- the world ------------------------------------------------------------------

    def publish(
        self, post_id: str, created: float, *, delay: float = 0.0, league: str = "NFL"
    ) -> FakePost:
        """A post created ``created`` seconds after T0 that becomes visible ``delay`` later."""
        created_at = T0 + timedelta(seconds=created)
        post = FakePost(post_id, created_at, created_at + timedelta(seconds=delay), league)
        self.posts[post_id] = post
        return post

    def delete(self, post_id: str) -> None:
        self.posts[post_id].deleted = True

    def fail_next(
        self, status: int, error_code: str, *, times: int = 1, retry_after: Optional[str] = None
    ) -> None:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        for _ in range(times):
            self.scripted.append(Scripted(status, error_code, headers))

    def visible(self) -> list[FakePost]:
        now = self.clock.now
        return [p for p in self.posts.values() if not p.deleted and p.indexed_at <= now]

    def _created_after(self, moment: Optional[datetime]) -> list[FakePost]:
        """Every post created after ``moment`` (all without one), deleted and not yet
        visible ones included, oldest first: the end of the posts in creation order."""
        if self.posts.version != self._order_version:
            self._order = sorted(self.posts.values(), key=lambda p: (p.created_at, p.id))
            self._created = [p.created_at for p in self._order]
            self._order_version = self.posts.version
        return self._order if moment is None else self._order[bisect.bisect_right(self._created, moment):]

    # -- GET /posts -----------------------------------------------------------------

    def handler(self, request: httpx.Request) -> httpx.Response:
        query = dict(request.url.params)
        self.requests.append(query)
        if self.before_answer is not None:
            self.before_answer(self, query)
        response = self._answer(request, query)
        if self.dated:  # the service's own clock, as its Date header states it (whole seconds)
            response.headers["Date"] = email.utils.format_datetime(self.clock.now, usegmt=True)
        self.clock.advance(self.seconds_per_request)
        return response

    def _answer(self, request: httpx.Request, q: dict[str, str]) -> httpx.Response:
        if not request.headers.get("authorization"):
            return _error(401, "UNAUTHORIZED", "missing API key")
        if request.url.path != "/v1/posts":
            return _error(404, "NOT_FOUND", "no such route")
        if self.scripted:
            s = self.scripted.popleft()
            return _error(s.status, s.error_code, "scripted", s.headers)
        if q.get("sort", "trending") != "recent":
            return _error(400, "INVALID_PARAMETER", "this fake serves sort=recent only")
        try:
            limit = int(q.get("limit", "20"))
            page = int(q.get("page", "1"))
        except ValueError:
            return _error(400, "INVALID_PARAMETER", "limit and page are integers")
        if not 1 <= limit <= self.max_limit:
            return _error(400, "INVALID_PARAMETER", f"limit must be between 1 and {self.max_limit}")
        if page < 1:
            return _error(400, "INVALID_PARAMETER", "page must be 1 or more")
        floor = _parse_dt(q["since"]) if "since" in q else None
        if "since_id" in q:
            ref = self.posts.get(q["since_id"])
            if ref is None or ref.deleted:
                return _error(400, "SINCE_ID_NOT_FOUND", f"post {q['since_id']} is unavailable")
            floor = ref.created_at if floor is None else max(floor, ref.created_at)
        wanted = {x.strip().upper() for x in q["leagues"].split(",")} if "leagues" in q else {"ALL"}
        now = self.clock.now
        items = [p for p in reversed(self._created_after(floor))  # newest first: sort=recent
                 if not p.deleted and p.indexed_at <= now and ("ALL" in wanted or p.league.upper() in wanted)]
        start = (page - 1) * limit
        chunk = items[start : start + limit]
        body = {
            "pagination": {
                "page": page,
                "limit": limit,
                "has_next": start + limit < len(items),
                "has_prev": page > 1,
            },
            "items": [p.wire() for p in chunk],
        }
        return httpx.Response(
            200, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )
