"""The posts of a world indexed by league, time and score, so GET /posts reads a page, not the world.

Every ordering of GET /posts is a lazy stream here that yields matching posts in the exact
order of the answer; the query takes the first ``page * limit + 1`` of them. The cost of a
page is then the number of posts looked at before enough matched: it depends on how selective
the filters are, not on how many posts the world holds.

- ``recent``: each league's posts in time order, merged newest first (a ``highlight=true``
  query walks the league's highlights alone, kept in time order too).
- ``top``: each league's posts in score order, merged.
- ``trending`` (``score / (1 + whole_hours_old / 24)``, rounded to 6 places): posts are kept in
  one-hour buckets per league, each in score order. A bucket's next post cannot score more
  than its score over the bucket's youngest possible age, and a bucket not yet opened no more
  than the highest score over its age; a best-first search opens buckets and takes posts only
  while one could still beat the best post found, and emits a post once nothing unseen can.
  A stream of a few hundred posts is ranked whole instead, and the ranking is kept until a
  post is added or one of its posts' whole-hour ages changes (a manual clock never moves
  on its own: the sandbox of a test suite ranks once per ``advance``). A search asked twice
  at one instant of one version of the index (a manual clock between advances) is kept,
  unfiltered and as far as it was read, and replayed for every query of those leagues at
  that instant, each under its own filter; a clock that moves searches per query.

Ties break as everywhere in the sandbox: created_at, then id, newest first.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from collections.abc import Collection, Iterator
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from itertools import islice, takewhile
from operator import attrgetter, itemgetter
from typing import Any, Callable, Optional

__all__ = ["PostIndex", "epoch_us", "trend"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_HOUR = timedelta(hours=1)
_HOUR_US = 3_600_000_000
_MICROSECOND = timedelta(microseconds=1)
_ALL = "*"
_SMALL = 400
"""Up to this many posts in the leagues asked, trending sorts them instead of searching the buckets."""


def epoch_us(value: datetime) -> int:
    """An aware datetime as whole microseconds since the epoch: exact, and cheap to compare."""
    return (value - _EPOCH) // _MICROSECOND


def trend(score: float, created_at: datetime, now: datetime) -> float:
    """The trending score of a post at ``now``: its score damped by whole hours of age."""
    return _trend_us(score, epoch_us(created_at), epoch_us(now))


def _trend_us(score: float, created_us: int, now_us: int) -> float:
    return _damped(score, max(0, (now_us - created_us) // _HOUR_US))


@lru_cache(maxsize=8192)
def _damped(score: float, hours: int) -> float:
    # Cached: round() to 6 places goes through a decimal conversion, and scores (one decimal
    # place) and ages (whole hours) take few values.
    return round(score / (1 + hours / 24), 6)


_first = itemgetter(0)


class _Sorted:
    """A list kept sorted by a key computed once per item (``bisect.insort(key=)`` needs 3.10)."""

    __slots__ = ("items", "keys")

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.items: list[Any] = []

    def add(self, key: Any, item: Any) -> None:
        at = bisect_right(self.keys, key)
        self.keys.insert(at, key)
        self.items.insert(at, item)

    def extend(self, pairs: list[tuple[Any, Any]]) -> None:
        """Add many ``(key, item)`` pairs (the list is used up): one sort, not an insertion each."""
        pairs.extend(zip(self.keys, self.items))
        pairs.sort(key=_first)  # the keys are unique (each ends with the post's id)
        self.keys = [key for key, _ in pairs]
        self.items = [item for _, item in pairs]


class _Newest:
    """Orders posts newest first (by created_at, then id) inside a heap that pops the smallest."""

    __slots__ = ("key", "post")

    def __init__(self, post: Any) -> None:
        self.post = post
        self.key = post.key

    def __lt__(self, other: _Newest) -> bool:
        return bool(self.key > other.key)


class PostIndex:
    """Posts by league: in time order, in score order, and in score order per hour of creation."""

    def __init__(self) -> None:
        self._time: dict[str, _Sorted] = {}
        self._score: dict[str, _Sorted] = {}
        self._hours: dict[str, dict[int, _Sorted]] = {}
        self._highlights: dict[str, _Sorted] = {}
        self.max_score: float = 0.0
        self._oldest_hour: Optional[int] = None
        self._version = 0
        """Bumped by every ``add``: a kept ranking of an older version is stale."""
        self._ranked: dict[tuple[tuple[str, ...], Optional[datetime]], _Ranking] = {}
        self._searched: dict[tuple[tuple[str, ...], Optional[datetime]], _Memo] = {}
        self._last_asked: dict[tuple[tuple[str, ...], Optional[datetime]], tuple[int, int]] = {}

    def add(self, post: Any) -> None:
        """Index a post; its league, created_at, score and highlight must not change afterwards."""
        for into, key in self._places(post):
            into.add(key, post)
        self._version += 1

    def add_many(self, posts: Collection[Any]) -> None:
        """Index ``posts`` as ``add`` would one by one, sorting each list once instead of
        inserting into it once per post (a world's history)."""
        staged: dict[int, tuple[_Sorted, list[tuple[Any, Any]]]] = {}
        for post in posts:
            for into, key in self._places(post):
                staged.setdefault(id(into), (into, []))[1].append((key, post))
        for into, pairs in staged.values():
            into.extend(pairs)
        self._version += len(posts)

    def _places(self, post: Any) -> list[tuple[_Sorted, Any]]:
        """Each list ``post`` goes into, with its key there; notes its score and hour."""
        key = post.key
        hour = post.created_us // _HOUR_US
        self.max_score = max(self.max_score, post.score)
        self._oldest_hour = hour if self._oldest_hour is None else min(self._oldest_hour, hour)
        places: list[tuple[_Sorted, Any]] = []
        # Each post is filed under its league and under _ALL, which serves the queries of every league
        # with one stream instead of a merge of sixteen.
        for league in (post.league, _ALL):
            places.append((self._time.setdefault(league, _Sorted()), key))
            places.append((self._score.setdefault(league, _Sorted()), (post.score, key)))
            places.append((self._hours.setdefault(league, {}).setdefault(hour, _Sorted()), (post.score, key)))
            if post.highlight:
                places.append((self._highlights.setdefault(league, _Sorted()), key))
        return places

    def _streams(self, leagues: Collection[str]) -> list[str]:
        """The index keys to read for ``leagues``: _ALL when they cover every league indexed."""
        indexed = self._time.keys() - {_ALL}
        return [_ALL] if indexed and indexed <= set(leagues) else [lg for lg in leagues if lg in self._time]

    def in_time_order(self, league: str) -> list[Any]:
        """One league's posts, oldest first (a copy)."""
        found = self._time.get(league)
        return list(found.items) if found is not None else []

    def newest_first(
        self, leagues: Collection[str], keep: Callable[[Any], bool], before: Optional[datetime] = None,
        floor: Optional[datetime] = None, highlights: bool = False,
    ) -> Iterator[Any]:
        """Kept posts of ``leagues``, newest first, created before ``before`` and not before ``floor``;
        with ``highlights``, only highlights are read (``keep`` must refuse the others anyway)."""
        streams = []
        table = self._highlights if highlights else self._time
        for league in self._streams(leagues):
            found = table.get(league)
            if found is None:  # a league without a highlight yet
                continue
            end = len(found.items) if before is None else bisect_right(found.keys, (before,))
            stream = _backwards(found.items, end)
            if floor is not None:  # every later post of the stream is older still
                stream = takewhile(lambda post: post.created_at >= floor, stream)
            streams.append(stream)
        return _kept_merged(streams, keep, _BY_TIME)

    def top_first(self, leagues: Collection[str], keep: Callable[[Any], bool]) -> Iterator[Any]:
        """Kept posts of ``leagues`` by score, highest first."""
        lists = [self._score[league].items for league in self._streams(leagues)]
        return _kept_merged([_backwards(items, len(items)) for items in lists], keep, _BY_SCORE)

    def trending_first(
        self, leagues: Collection[str], keep: Callable[[Any], bool], now: datetime, floor: Optional[datetime] = None
    ) -> Iterator[Any]:
        """Kept posts of ``leagues`` by trending score at ``now``, highest first (none created before ``floor``)."""
        streams = self._streams(leagues)
        now_us = epoch_us(now)  # a post's trend at now: _trend_us(post.score, post.created_us, now_us)
        if sum(len(self._time[league].items) for league in streams) <= _SMALL:
            # A few hundred posts are sorted faster than searched; the filter then reads only as
            # many as the page takes.
            return filter(keep, self._small_ranking(streams, now_us, floor))
        key = (tuple(streams), floor)
        asked = (now_us, self._version)
        memo = self._searched.get(key)
        if memo is None or memo.asked != asked:
            if self._last_asked.get(key) != asked:  # a clock that moves: search for this query alone
                _bounded_put(self._last_asked, key, asked)
                return self._search(streams, keep, now_us, floor)
            # Asked again at the same instant (a manual clock between advances): every query
            # of these leagues at this instant reads one search, kept as far as it was read.
            memo = _Memo(asked, lambda: self._search(streams, _everything, now_us, floor))
            _bounded_put(self._searched, key, memo)
        return filter(keep, memo)

    def _search(
        self, streams: list[str], keep: Callable[[Any], bool], now_us: int, floor: Optional[datetime]
    ) -> Iterator[Any]:
        """The best-first search over the hour buckets of ``streams``."""
        hours = [self._hours[league] for league in streams]
        if not hours or self._oldest_hour is None:
            return
        oldest = self._oldest_hour if floor is None else max(self._oldest_hour, (floor - _EPOCH) // _HOUR)
        # A post created in hour bucket k is at least now_hour - k - 1 whole hours old at `now`, so
        # round(score / damp(k), 6), the formula of trend() at that age, bounds the trend of every
        # post of the bucket with that score or less; equal means "could tie".
        now_hour = now_us // _HOUR_US

        def bound(score: float, k: int) -> float:
            return _damped(score, max(0, now_hour - k - 1))

        def wins(best: tuple[float, _Newest], ceiling: float, k: int) -> bool:
            """Whether the best post found beats every unseen post of hour k and older, bounded by ``ceiling``."""
            # A tie goes to the newer post: one created after hour k ends is newer than all of them.
            return -best[0] > ceiling or (-best[0] == ceiling and best[1].post.created_at >= _EPOCH + (k + 1) * _HOUR)

        # (-bound, -hour, tiebreak, posts, next): the highest bound first, the newest hour among equals.
        open_buckets: list[tuple[float, int, int, list[Any], int]] = []
        found: list[tuple[float, _Newest]] = []  # (-trend, newest first)

        def unopened_bound(k: int) -> float:
            """The bound of every post in hour k and older, none of which is open yet."""
            return bound(self.max_score, k) if k >= oldest else -math.inf

        next_hour = now_hour
        unopened = unopened_bound(next_hour)  # computed again only when next_hour moves
        while True:
            while found and wins(found[0], unopened, next_hour) and (
                    not open_buckets or wins(found[0], -open_buckets[0][0], -open_buckets[0][1])):
                yield heapq.heappop(found)[1].post
            best_open = -open_buckets[0][0] if open_buckets else -math.inf
            if unopened == best_open == -math.inf:
                while found:
                    yield heapq.heappop(found)[1].post
                return
            if unopened >= best_open:  # open hours until the next could not hold a better post
                while next_hour >= oldest and unopened >= best_open:
                    for by_hour in hours:
                        bucket = by_hour.get(next_hour)
                        if bucket is not None and bucket.items:
                            last = len(bucket.items) - 1  # buckets are in score order: read from the end
                            top = bound(bucket.items[last].score, next_hour)
                            heapq.heappush(open_buckets, (-top, -next_hour, id(bucket), bucket.items, last))
                            best_open = max(best_open, top)
                    next_hour -= 1
                    unopened = unopened_bound(next_hour)
                continue
            # Read the best bucket for as long as its posts could beat every other bucket's next one.
            _, minus_k, tie, posts, at = heapq.heappop(open_buckets)
            runner_up = max(unopened, -open_buckets[0][0] if open_buckets else -math.inf)
            while at >= 0:
                post = posts[at]
                limit = bound(post.score, -minus_k)
                if limit < runner_up:
                    heapq.heappush(open_buckets, (-limit, minus_k, tie, posts, at))
                    break
                at -= 1
                if keep(post):
                    heapq.heappush(found, (-_trend_us(post.score, post.created_us, now_us), _Newest(post)))


    def _small_ranking(self, streams: list[str], now_us: int, floor: Optional[datetime]) -> list[Any]:
        """The posts of ``streams`` (none created before ``floor``) by trend at ``now_us``: the
        kept ranking while it holds, else a new one, kept in turn."""
        key = (tuple(streams), floor)
        kept = self._ranked.get(key)
        if kept is not None and kept.version == self._version and kept.since_us <= now_us < kept.until_us:
            return kept.posts
        posts = [p for league in streams for p in self._time[league].items if floor is None or p.created_at >= floor]
        ranking = _Ranking.of(posts, now_us, self._version)
        _bounded_put(self._ranked, key, ranking)
        return ranking.posts


_KEPT = 64
"""Rankings and searches kept at most (one per league selection and floor asked); past it, all are dropped."""


def _bounded_put(table: dict[Any, Any], key: Any, value: Any) -> None:
    if len(table) >= _KEPT and key not in table:
        table.clear()
    table[key] = value


def _everything(post: Any) -> bool:
    return True


class _Memo:
    """A search at one instant of one index version, kept as far as a reader took it: the next
    reader replays the posts kept, then goes on with the search."""

    __slots__ = ("asked", "posts", "_again", "_source")

    def __init__(self, asked: tuple[int, int], search: Callable[[], Iterator[Any]]) -> None:
        self.asked = asked
        self.posts: list[Any] = []
        self._again = search
        self._source: Optional[Iterator[Any]] = search()

    def __iter__(self) -> Iterator[Any]:
        posts = self.posts
        at = 0
        while True:
            while at < len(posts):
                yield posts[at]
                at += 1
            if self._source is None:
                return
            if at >= _MEMO_POSTS:  # a walk past the posts kept searches again (the total of a test)
                yield from islice(self._again(), at, None)
                return
            post = next(self._source, None)
            if post is None:
                self._source = None
                return
            posts.append(post)


_MEMO_POSTS = 2000
"""Posts a kept search holds at most: the first pages of any query; a reader past them searches again."""


class _Ranking:
    """Posts by trend at an instant, and the span of instants over which that order holds: a
    post's trend changes only when its whole-hour age does."""

    __slots__ = ("posts", "since_us", "until_us", "version")

    def __init__(self, posts: list[Any], since_us: float, until_us: float, version: int) -> None:
        self.posts, self.since_us, self.until_us, self.version = posts, since_us, until_us, version

    @classmethod
    def of(cls, posts: list[Any], now_us: int, version: int) -> _Ranking:
        since_us: float = -math.inf
        until_us: float = math.inf
        ranked = []
        for p in posts:
            hours = max(0, (now_us - p.created_us) // _HOUR_US)  # a post not yet created is 0 hours old
            ranked.append((_damped(p.score, hours), p.key, p))
            until_us = min(until_us, p.created_us + (hours + 1) * _HOUR_US)
            if now_us >= p.created_us:
                since_us = max(since_us, p.created_us + hours * _HOUR_US)
        ranked.sort(reverse=True)  # keys are unique (they end in the id): posts are never compared
        return cls([p for _t, _k, p in ranked], since_us, until_us, version)


_BY_TIME = attrgetter("key")
_BY_SCORE = attrgetter("score", "key")  # the score index's key: (score, key)


def _kept_merged(streams: list[Iterator[Any]], keep: Callable[[Any], bool], key: Callable[[Any], Any]) -> Iterator[Any]:
    """The posts of ``streams`` (each in descending ``key`` order) that ``keep`` accepts, merged.

    Each stream is filtered before the merge, so only kept posts pass through the heap: a
    selective filter over two leagues reads about ten posts for each one it keeps."""
    kept = [filter(keep, stream) for stream in streams]
    if len(kept) == 1:
        return kept[0]
    return heapq.merge(*kept, key=key, reverse=True)


def _backwards(items: list[Any], end: int) -> Iterator[Any]:
    """``items[:end]`` from the last to the first, without copying the list (and read in C)."""
    return islice(reversed(items), len(items) - end, None)
