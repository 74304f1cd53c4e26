"""The types of the pytest plugin's webhook fixtures, importable without pytest: what
``sports_posts_send_story`` returns (``SentStory``) and the call signatures of the two
factory fixtures, for a customer's own annotations (``def test_x(send: StorySender)``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Union

from typing_extensions import Protocol, Unpack

if TYPE_CHECKING:
    from ..sandbox import BreakingNewsOptions, DeliveryAttempt
    from ..webhooks import SignedRequest, WebhookHeaders
    from ..webhooks.testing import PayloadFields, WebhookPayload
    from ._serve import ASGIApp, WSGIApp

__all__ = ["SentStory", "StorySender", "WebhookRequestFactory"]


@dataclass(frozen=True)
class SentStory:
    """What `sports_posts_send_story` sent and how the receiver answered each attempt."""

    payloads: list[WebhookPayload]
    """The ``breaking_news`` payload, then its ``breaking_news.update`` when one was sent."""
    attempts: list[DeliveryAttempt] = field(repr=False)
    """Every delivery attempt of those events, oldest first (retries included)."""

    @property
    def status_codes(self) -> list[Optional[int]]:
        """The receiver's answer to each attempt (None: no answer, see ``attempts[i].error``)."""
        return [attempt.status_code for attempt in self.attempts]

    @property
    def delivered(self) -> bool:
        """True when every event ended with a 2xx answer (after retries, if any)."""
        done = {(a.event, a.event_id) for a in self.attempts if a.outcome == "delivered"}
        return all((p["event"], p["data"]["event_id"]) in done for p in self.payloads)


class WebhookRequestFactory(Protocol):
    """The ``sports_posts_webhook_request`` fixture: a request as the service signs it."""

    def __call__(
        self,
        event: str = "breaking_news",
        *,
        payload: Union[WebhookPayload, Mapping[str, object], bytes, str, None] = None,
        secret: Optional[str] = None,
        header_names: Optional[WebhookHeaders] = None,
        **data: Unpack[PayloadFields],
    ) -> SignedRequest: ...


class StorySender(Protocol):
    """The ``sports_posts_send_story`` fixture: a story sent by the sandbox's webhook sender to
    ``target``, a URL or an ASGI / WSGI app, retried as the service retries."""

    def __call__(
        self,
        target: Union[str, ASGIApp, WSGIApp],
        *,
        path: str = "/webhooks",
        league: str = "NFL",
        update: Optional[str] = None,
        secret: Optional[str] = None,
        header_names: Optional[WebhookHeaders] = None,
        timeout: float = 30.0,
        **news: Unpack[BreakingNewsOptions],
    ) -> SentStory: ...
