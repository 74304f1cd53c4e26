"""Where a poller stands (``PollState``) and how it is stored: a versioned JSON document
that a checkpoint saves and reads back, refused (``CheckpointError``) when it is corrupt,
foreign, from a newer SDK or ahead of the clock.

Also the time helpers the poller shares (``utc``, ``iso``, ``shift``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Optional, Union

from .._errors import SportsPostsError
from ..models.post import Post

__all__ = ["MAX_CLOCK_SKEW", "CheckpointError", "PollState"]

STATE_VERSION = 1
MAX_CLOCK_SKEW = timedelta(minutes=5)
"""How far ahead of the service's clock (this machine's, corrected by ``ClockSkew``) a
stored watermark may be: ``created_at`` and the service's clock differ by seconds. Further
ahead, the state was written by a clock that was wrong (or edited by hand), and resuming
from it would skip every post up to that time in silence, so it is refused."""


class CheckpointError(SportsPostsError):
    """A checkpoint that cannot be read back (corrupt, foreign or from a newer SDK).

    Nothing is guessed: delete the checkpoint (or pass ``since=``) to start over.
    """


def utc(value: datetime) -> datetime:
    """``value`` in UTC."""
    return value.astimezone(timezone.utc)


def iso(value: datetime) -> str:
    """``value`` in UTC as ISO 8601 with a ``Z``, as a checkpoint stores it."""
    return utc(value).isoformat().replace("+00:00", "Z")


def shift(when: datetime, by: timedelta) -> datetime:
    """``when + by``, held at the ends of the calendar (year 1, year 9999) rather than an
    ``OverflowError``: a ``since`` or a clock at either end stays a valid bound."""
    try:
        return when + by
    except OverflowError:
        edge = datetime.min if by < timedelta(0) else datetime.max
        return edge.replace(tzinfo=timezone.utc)


def _parse_iso(value: Any, what: str) -> datetime:
    if not isinstance(value, str):
        raise CheckpointError(
            f"checkpoint field {what!r}: expected an ISO 8601 string, got {type(value).__name__}"
        )
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            raise CheckpointError(f"checkpoint field {what!r}: {value[:40]!r} has no UTC offset")
        return utc(parsed)
    except (ValueError, OverflowError):  # not ISO 8601, or out of range once in UTC
        raise CheckpointError(
            f"checkpoint field {what!r}: {value[:40]!r} is not an ISO 8601 time"
        ) from None


@dataclass(frozen=True)
class PollState:
    """Where a poller stands: what a checkpoint stores, as JSON with a version field.

    ``watermark`` is the newest ``created_at`` delivered (or the starting point);
    ``floor`` is the exclusive ``since`` of the next query (never moves back, even if
    ``lookback`` grows between runs); ``seen`` maps each delivered id newer than the floor
    to its ``created_at``; ``since_id`` is a delivered post at or below the floor, sent as
    a hint that narrows the service's search without changing the answer. ``undated``
    marks a starting point read from a machine's clock before any answer dated the
    service's: a run that crashed in its first call leaves it, and the next run corrects it.
    ``filters`` are the query parameters that define the feed (as sent): a state is only
    valid for the feed that wrote it (``None``: written before they were stored).
    """

    watermark: datetime
    floor: datetime
    seen: Mapping[str, datetime] = field(default_factory=dict)
    since_id: Optional[str] = None
    since_id_created_at: Optional[datetime] = None
    undated: bool = False
    filters: Optional[Mapping[str, str]] = field(default=None, compare=False)
    """Not part of equality: two states at the same place are equal whatever feed they are for."""

    @classmethod
    def start(
        cls, at: datetime, *, undated: bool = False, filters: Optional[Mapping[str, str]] = None
    ) -> PollState:
        """The state of a poller that delivers every post created after ``at``."""
        return cls(watermark=utc(at), floor=utc(at), undated=undated, filters=filters)

    def advance(
        self,
        batch: list[Post],
        lookback: timedelta,
        cycle_started: datetime,
        ceiling: Optional[datetime] = None,
    ) -> PollState:
        """The state after a complete cycle that found ``batch``: watermark up, window slid,
        ids below the new floor forgotten.

        The floor trails both the watermark and the cycle's start by ``lookback``: any post
        created before ``cycle_started - lookback`` was indexed before the cycle began (if
        its delay is under ``lookback``), so the cycle saw it. The second bound is what
        lets an idle cycle after a burst shrink its window back to one page. ``ceiling`` (the
        service's now, as far as the poller can tell) caps what a post's ``created_at`` may
        move the watermark to: a post from the future is remembered (its id stays in
        ``seen``) but does not slide the window past posts not yet created.
        """
        newest = [p.created_at for p in batch]
        if ceiling is not None:
            newest = [min(t, utc(ceiling)) for t in newest]
        watermark = max([self.watermark, *newest])
        floor = max(self.floor, shift(watermark, -lookback), shift(utc(cycle_started), -lookback))
        seen = dict(self.seen)
        seen.update((p.id, p.created_at) for p in batch)
        kept = {i: t for i, t in seen.items() if t > floor}
        since_id, since_id_at = self.since_id, self.since_id_created_at
        dropped = [(t, i) for i, t in seen.items() if t <= floor]
        if dropped:
            newest_at, newest_id = max(dropped)
            if since_id_at is None or newest_at >= since_id_at:
                since_id, since_id_at = newest_id, newest_at
        return PollState(watermark, floor, kept, since_id, since_id_at, filters=self.filters)

    def without_since_id(self) -> PollState:
        """The same state without the ``since_id`` hint (its post is gone)."""
        return PollState(self.watermark, self.floor, dict(self.seen), None, None, filters=self.filters)

    def to_dict(self) -> dict[str, object]:
        return {
            "version": STATE_VERSION,
            "watermark": iso(self.watermark),
            "floor": iso(self.floor),
            "since_id": self.since_id,
            "since_id_created_at": None
            if self.since_id_created_at is None
            else iso(self.since_id_created_at),
            "seen": {
                i: iso(t) for i, t in sorted(self.seen.items(), key=lambda kv: (kv[1], kv[0]))
            },
            **({"undated": True} if self.undated else {}),
            **({} if self.filters is None else {"filters": dict(sorted(self.filters.items()))}),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: object) -> PollState:
        """Read a stored state back; anything unexpected is a [`CheckpointError`][sports_posts.CheckpointError]."""
        if not isinstance(data, dict):
            raise CheckpointError(f"checkpoint is not a JSON object: {type(data).__name__}")
        version = data.get("version")
        if type(version) is not int or version != STATE_VERSION:  # true == 1 in Python
            raise CheckpointError(
                f"checkpoint version {str(version)[:20]!r} is not supported "
                f"(this SDK writes {STATE_VERSION})"
            )
        seen_raw = data.get("seen", {})
        if not isinstance(seen_raw, dict):
            raise CheckpointError("checkpoint field 'seen': expected an object of id -> created_at")
        since_id = data.get("since_id")
        if since_id is not None and not isinstance(since_id, str):
            raise CheckpointError(
                f"checkpoint field 'since_id': expected a string, got {type(since_id).__name__}"
            )
        undated = data.get("undated", False)
        if type(undated) is not bool:
            raise CheckpointError(
                f"checkpoint field 'undated': expected true or false, got {str(undated)[:20]!r}"
            )
        filters = data.get("filters")  # absent in checkpoints written before it was stored
        if filters is not None and not (
            isinstance(filters, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in filters.items())
        ):
            raise CheckpointError("checkpoint field 'filters': expected an object of name -> value")
        since_id_at_raw = data.get("since_id_created_at")
        since_id_at = (
            None if since_id_at_raw is None else _parse_iso(since_id_at_raw, "since_id_created_at")
        )
        return cls(
            watermark=_parse_iso(data.get("watermark"), "watermark"),
            floor=_parse_iso(data.get("floor"), "floor"),
            seen={str(i): _parse_iso(t, f"seen.{str(i)[:40]}") for i, t in seen_raw.items()},
            since_id=since_id if since_id_at is not None else None,
            since_id_created_at=since_id_at if since_id is not None else None,
            undated=undated,
            filters=filters,
        )

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> PollState:
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"checkpoint is not valid JSON: {exc}") from None
        except RecursionError:  # "[[[[...": nesting deeper than the parser's stack
            raise CheckpointError("checkpoint is not a state: JSON nested too deeply") from None
        return cls.from_dict(data)

    def ahead_of(self, now: datetime) -> timedelta:
        """How far the state's watermark (or floor) is ahead of ``now`` (negative: behind)."""
        return max(self.watermark, self.floor) - utc(now)

    def check_not_ahead_of(self, now: datetime) -> None:
        """Refuse a state whose watermark is further ahead of ``now`` than
        ``MAX_CLOCK_SKEW``: resuming from it would skip posts in silence."""
        ahead = self.ahead_of(now)
        if ahead > MAX_CLOCK_SKEW:
            raise CheckpointError(
                f"the poller's watermark {iso(self.watermark)} is {ahead} ahead of the clock "
                f"({iso(now)}; the allowance for clock skew is {MAX_CLOCK_SKEW}): every post "
                "before it would be skipped. A checkpoint written under a wrong clock or edited "
                "by hand: delete it, or pass since= in the past, to start over"
            )
