"""A poller's settings, checked before anything is sent (``PollConfig.build``): the feed's
filters, the interval, the lookback window, the daily call budget and the back-off."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Optional, Union

from .._errors import ParameterError
from .._params import encode_datetime, encode_posts_params
from ._state import PollState

__all__ = [
    "DEFAULT_LIMIT", "DEFAULT_LOOKBACK", "MAX_PAGES_PER_CYCLE", "PollConfig", "same_feed_form", "to_datetime",
]

DEFAULT_LOOKBACK: timedelta = timedelta(seconds=180)
"""Two minutes of indexing delay (spec 1: "indexed within seconds") plus one minute for
clock skew between the platform's ``created_at`` and the service, and for the cycle's own
duration."""
DEFAULT_LIMIT = 100
"""The largest page of the machine-readable description: fewer calls per busy cycle."""
REFERENCE_PAGE_MAX_LIMIT = 50
"""The reference page's maximum page size; the poller falls back to it when a service that
follows that page rejects the machine-readable description's 100 (spec 4.1 discrepancy)."""
MAX_PAGES_PER_CYCLE = 1000
"""Pages one cycle may read: 100,000 posts at ``limit=100`` in one window is no real feed,
but a service that claims ``has_next`` forever would otherwise cost calls forever."""
RESERVED = ("since", "since_id", "page", "sort")
"""Parameters the poller sets itself on every request."""
SECONDS_PER_DAY = 86400.0


_SETS = ("leagues", "sports", "teams", "players")
"""Comma lists the service reads as sets of values (any order, a repeat adds nothing)."""


def same_feed_form(query: Mapping[str, str]) -> dict[str, str]:
    """An encoded query (``encode_posts_params``) in the form the service compares it: two
    queries asking for the same posts have the same form.

    League codes and sports are case-insensitive (``nfl`` is ``NFL``; ``soccer`` is
    ``football``), ``league`` is ``leagues``, and ``leagues``, ``sports``, ``teams`` and
    ``players`` are sets, so their order and repeats do not matter. A checkpoint stores its
    feed in this form, and compares a stored feed after bringing it to this form too."""
    form: dict[str, str] = {}
    for name, value in query.items():
        key = "leagues" if name == "league" else name
        if key in _SETS:
            items = [item.strip() for item in value.split(",")]
            if key == "leagues":
                items = [item.upper() for item in items]
            elif key == "sports":
                items = ["football" if item.lower() == "soccer" else item.lower() for item in items]
            value = ",".join(sorted(set(items)))
        elif key == "user_location":
            value = value.upper()
        form[key] = value
    return dict(sorted(form.items()))


def to_datetime(name: str, value: Union[datetime, str]) -> datetime:
    """An aware ``datetime`` or an ISO 8601 string with an offset, as an aware UTC datetime."""
    text = encode_datetime(name, value)  # raises ParameterError for naive or malformed values
    return datetime.fromisoformat(text[:-1] + "+00:00")


def _seconds(name: str, value: object) -> float:
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not value > 0
        or value == float("inf")
    ):
        raise ParameterError(
            f"{name}: expected a positive number of seconds, got {value!r}", parameter=name
        )
    return float(value)


MAX_LOOKBACK = timedelta(days=1)
"""The widest window: a post indexed a day late is no feed's normal, and every post of the
window is kept in memory (``seen``) and read again each cycle."""


def _lookback(value: object) -> timedelta:
    seconds = _seconds("lookback", value)
    if seconds > MAX_LOOKBACK.total_seconds():
        raise ParameterError(
            f"lookback: at most {MAX_LOOKBACK.total_seconds():.0f} seconds (a day), got {value!r}",
            parameter="lookback",
        )
    return timedelta(seconds=seconds)


@dataclass(frozen=True)
class PollConfig:
    """The checked settings of one poller (built by [`PollConfig.build`][sports_posts.polling.PollConfig.build])."""

    filters: Mapping[str, object]
    interval: float
    lookback: timedelta
    limit: int = DEFAULT_LIMIT
    max_calls_per_day: Optional[int] = None
    limit_given: bool = False
    max_pages: int = MAX_PAGES_PER_CYCLE

    @classmethod
    def build(
        cls,
        *,
        filters: Mapping[str, object],
        interval: Union[float, timedelta],
        lookback: Union[float, timedelta],
        max_calls_per_day: Optional[int],
    ) -> PollConfig:
        """Check every argument before anything is sent; bad input is a [`ParameterError`][sports_posts.ParameterError]."""
        given: dict[str, Any] = {k: v for k, v in filters.items() if v is not None}  # checked below
        for name in RESERVED:
            if name in given:
                hint = (
                    " (pass since= to poll() to choose the starting point)"
                    if name == "since"
                    else ""
                )
                raise ParameterError(
                    f"{name} is set by the poller on every request and cannot be a filter{hint}",
                    parameter=name,
                )
        limit_given = "limit" in given
        limit = given.pop("limit", DEFAULT_LIMIT)
        # The same checks as posts.list, made once here rather than on the first request.
        encode_posts_params({**given, "sort": "recent", "limit": limit, "page": 1})
        if max_calls_per_day is not None and (
            isinstance(max_calls_per_day, bool)
            or not isinstance(max_calls_per_day, int)
            or max_calls_per_day < 1
        ):
            raise ParameterError(
                f"max_calls_per_day: expected a positive integer or None, got {max_calls_per_day!r}",
                parameter="max_calls_per_day",
            )
        return cls(
            filters=given,
            interval=_seconds("interval", interval),
            lookback=_lookback(lookback),
            limit=limit,
            max_calls_per_day=max_calls_per_day,
            limit_given=limit_given,
        )

    @property
    def feed(self) -> dict[str, str]:
        """The query parameters that define the feed (every filter but ``limit``, which
        changes the pages, not the posts), in the form the service compares them
        (``leagues="nfl"`` is ``leagues="NFL"``): what a checkpoint is valid for."""
        return same_feed_form(encode_posts_params(self.filters))

    @property
    def seconds_per_call(self) -> float:
        """The wait each call must pay for to keep inside ``max_calls_per_day`` (0 without one)."""
        return 0.0 if self.max_calls_per_day is None else SECONDS_PER_DAY / self.max_calls_per_day

    def query(self, state: PollState, page: int) -> dict[str, object]:
        """The ``posts.list`` arguments of one page of a cycle."""
        params: dict[str, object] = {
            **self.filters,
            "sort": "recent",
            "since": state.floor,
            "limit": self.limit,
            "page": page,
        }
        if state.since_id is not None:
            params["since_id"] = state.since_id
        return params
