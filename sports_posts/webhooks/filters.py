"""Subscription filters of spec 6.4, applied on the receiving side."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional, Union

from .._errors import ParameterError
from .events import BreakingNewsData, BreakingNewsUpdateData, WebhookEvent

__all__ = ["SubscriptionFilter"]

Values = Union[str, Iterable[str], None]

# The filter vocabulary says verified; the spec's sample payload says confirmed (spec 6.3).
_STATUS_SYNONYMS = {"confirmed": "verified"}


def _group(name: str, values: Values, *, fold: bool) -> frozenset[str]:
    if values is None:
        return frozenset()
    if isinstance(values, str):  # leagues="NFL" means one league, not three letters
        values = [values]
    try:
        items = list(values)
    except TypeError:
        raise ParameterError(f"{name} must be a string or an iterable of strings", parameter=name) from None
    for item in items:
        if not isinstance(item, str):
            raise ParameterError(f"{name} must contain strings, got {type(item).__name__}", parameter=name)
    return frozenset(_normal(item, fold=fold) for item in items)


def _normal(value: str, *, fold: bool) -> str:
    if fold:
        return value.upper()
    value = value.lower()
    return _STATUS_SYNONYMS.get(value, value)


class SubscriptionFilter:
    """Four optional groups: an empty group matches all, OR within a group, AND across groups.

    Leagues compare case-insensitively, as league codes do in spec 4.1; so do the others.
    ``confirmed`` (the spec's sample) and ``verified`` (the filter value) are one status.
    A field an event does not carry (an update has no ``news_origin``) does not exclude it:
    the service sends updates to every active breaking-news subscription (spec 6.1).
    """

    def __init__(
        self,
        *,
        leagues: Values = None,
        news_types: Values = None,
        news_statuses: Values = None,
        news_origins: Values = None,
    ) -> None:
        self.leagues: frozenset[str] = _group("leagues", leagues, fold=True)
        self.news_types: frozenset[str] = _group("news_types", news_types, fold=False)
        self.news_statuses: frozenset[str] = _group("news_statuses", news_statuses, fold=False)
        self.news_origins: frozenset[str] = _group("news_origins", news_origins, fold=False)

    def __repr__(self) -> str:
        groups = {
            "leagues": self.leagues,
            "news_types": self.news_types,
            "news_statuses": self.news_statuses,
            "news_origins": self.news_origins,
        }
        shown = ", ".join(f"{k}={sorted(v)!r}" for k, v in groups.items() if v)
        return f"SubscriptionFilter({shown})"

    def matches(self, event: Union[WebhookEvent, BreakingNewsData, BreakingNewsUpdateData]) -> bool:
        """Whether ``event`` (or its ``data``) passes every non-empty group."""
        data: Any = event if isinstance(event, (BreakingNewsData, BreakingNewsUpdateData)) else event.data
        return (
            _passes(self.leagues, data.league, fold=True)
            and _passes(self.news_types, data.news_type, fold=False)
            and _passes(self.news_statuses, data.news_status, fold=False)
            and _passes(self.news_origins, data.news_origin, fold=False)
        )


def _passes(group: frozenset[str], value: Optional[str], *, fold: bool) -> bool:
    if not group or value is None:
        return True
    return _normal(value, fold=fold) in group
