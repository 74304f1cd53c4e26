"""Configuration types of the sandbox: chaos settings, burst limits and API key accounts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Annotated, Optional, Union

from pydantic import ConfigDict, Field, with_config
from typing_extensions import Literal, TypedDict

from .._errors import ParameterError

if TYPE_CHECKING:
    from ..webhooks.testing import AltSourcePayload

__all__ = [
    "ENDPOINTS",
    "BreakingNewsOptions",
    "BurstLimit",
    "ChaosSettings",
    "KeyChanges",
    "KeyConfig",
    "KeyOptions",
    "SandboxState",
    "UpdateOptions",
]

ENDPOINTS = ("posts", "account/x-ids", "ids")
"""The endpoints a plan may include (``KeyConfig.endpoints``); account/information is always free."""
_FORBID = ConfigDict(extra="forbid")
"""How pydantic validates these dataclasses in the admin routes' bodies: unknown fields are refused."""


@with_config(_FORBID)
@dataclass(frozen=True)
class ChaosSettings:
    """Rates (0..1, drawn once per request from a seeded RNG) of failures injected before routing.

    ``rate_502``/``rate_504`` answer an HTML proxy page, ``rate_500`` the JSON INTERNAL_ERROR body,
    ``rate_503`` a JSON body with ``Retry-After``, ``rate_429`` RATE_LIMITED with ``Retry-After``.
    ``drop_rate`` closes the connection without an answer; ``malformed_rate`` answers 200 with JSON
    of the wrong shape; ``html_rate`` 200 with an HTML page; ``truncated_rate`` 200 with the real
    JSON cut in half. ``slow_rate`` delays the answer (real time) by ``slow_seconds``, independently.
    """

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_502: float = 0.0
    rate_503: float = 0.0
    rate_504: float = 0.0
    drop_rate: float = 0.0
    malformed_rate: float = 0.0
    html_rate: float = 0.0
    truncated_rate: float = 0.0
    slow_rate: float = 0.0
    slow_seconds: float = 2.0
    retry_after: int = 1

    def __post_init__(self) -> None:
        total = 0.0
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name.endswith("rate") or f.name.startswith("rate_"):
                if not 0.0 <= value <= 1.0:
                    raise ParameterError(f"{f.name} must be between 0 and 1")
                if f.name != "slow_rate":
                    total += value
        if total > 1.0 + 1e-9:
            raise ParameterError("the failure rates of ChaosSettings add up to more than 1")
        if not 0.0 <= self.slow_seconds <= 60.0:
            raise ParameterError("slow_seconds must be between 0 and 60")
        if not 0 <= self.retry_after <= 86400:
            raise ParameterError("retry_after must be between 0 and 86400 seconds")

    @property
    def failure_rates(self) -> list[tuple[str, float]]:
        """(outcome, rate) of the mutually exclusive failures, in draw order."""
        return [
            ("drop", self.drop_rate), ("429", self.rate_429), ("500", self.rate_500),
            ("502", self.rate_502), ("503", self.rate_503), ("504", self.rate_504),
            ("malformed", self.malformed_rate), ("html", self.html_rate),
            ("truncated", self.truncated_rate),
        ]

    @property
    def enabled(self) -> bool:
        """True when any failure or slowness can happen."""
        return self.slow_rate > 0 or any(rate > 0 for _name, rate in self.failure_rates)


@with_config(_FORBID)
@dataclass(frozen=True)
class BurstLimit:
    """At most ``requests`` calls per ``per_seconds`` of sandbox time, else 429 with ``Retry-After``."""

    requests: int
    per_seconds: float = 1.0

    def __post_init__(self) -> None:
        if self.requests < 1:
            raise ParameterError("requests must be 1 or more")
        if not (0.0 < self.per_seconds <= 86400.0):  # also refuses NaN
            raise ParameterError("per_seconds must be greater than 0 and at most 86400")


class KeyOptions(TypedDict, total=False):
    """What a new key may set besides its plan (``Sandbox.add_key`` and ``POST /_sandbox/keys``)."""

    active: bool
    leagues: Union[str, list[str], None]
    company: str
    monthly_quota: Optional[Annotated[int, Field(ge=0)]]
    burst: Optional[BurstLimit]
    chaos: Optional[ChaosSettings]
    endpoints: Optional[list[Literal["posts", "account/x-ids", "ids"]]]


class KeyChanges(KeyOptions, total=False):
    """What ``Sandbox.update_key`` may change: a key's plan and every ``KeyOptions`` field."""

    plan: str


class BreakingNewsOptions(TypedDict, total=False):
    """What ``Sandbox.send_breaking_news`` may set in the event's ``data`` (spec 6.3)."""

    news_type: str
    news_status: str
    news_origin: str
    news_attribution: Optional[str]
    text: Optional[str]
    alt_sources: Union[int, Sequence[AltSourcePayload]]
    """A count of generated alternative sources, or the sources themselves."""
    event_id: Optional[str]


class SandboxState(TypedDict):
    """``Sandbox.state()``: a summary for the admin route and the CLI (no secrets)."""

    now: str
    """The sandbox's time, ISO 8601 UTC."""
    seed: int
    profile: str
    author_shape: str
    time_scale: float
    visible_posts: int
    deleted_posts: int
    subscriptions: int
    deliveries: int
    """Delivery attempts logged so far."""


class UpdateOptions(TypedDict, total=False):
    """What ``Sandbox.send_update`` may set in a ``breaking_news.update`` event's ``data``."""

    text: Optional[str]
    news_type: Optional[str]
    news_status: Optional[str]
    alt_sources: Union[int, Sequence[AltSourcePayload]]


@dataclass(frozen=True)
class KeyConfig:
    """The account behind an API key: plan, subscription state, leagues, limits and chaos."""

    plan: str = "paid"
    active: bool = True
    leagues: Optional[frozenset[str]] = None
    company: str = "Sandbox Sports Media"
    monthly_quota: Optional[int] = None
    burst: Optional[BurstLimit] = None
    chaos: Optional[ChaosSettings] = None
    endpoints: Optional[frozenset[str]] = None
    """Endpoints on the plan (``posts``, ``account/x-ids``, ``ids``); None means all. Others: 403."""

    @property
    def quota(self) -> Optional[int]:
        """Calls per month: the free plan has 200 (spec 8), paid plans no limit unless set."""
        if self.monthly_quota is not None:
            return self.monthly_quota
        return 200 if self.plan == "free" else None
