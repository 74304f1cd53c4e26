"""Helpers of the webhook tests: a secret, signed requests, a clock moved by hand."""

from __future__ import annotations

import threading
from typing import Any

from sports_posts.webhooks import SignedRequest, WebhookEvent, build_test_request, sample_payload

SECRET = "whsec_test_0123456789"
SENT_AT = sample_payload()["sent_at"]
"""One ``sent_at`` for the whole run: the service's retries repeat the payload byte for byte."""
STORY_ID = "1790000000000000001"
"""One post id for the requests of `signed` (sample_payload's are fresh): they are retries of one story."""


class Recorder:
    """A handler that keeps every event it is given, from any thread."""

    def __init__(self) -> None:
        self.events: list[WebhookEvent] = []
        self.lock = threading.Lock()

    def __call__(self, event: WebhookEvent) -> None:
        with self.lock:
            self.events.append(event)


class FakeClock:
    """A clock the test moves by hand, so leases and expiry need no real sleeps."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def signed(event: str = "breaking_news", *, secret: str = SECRET, delivery_id: str | None = None,
           **data: Any) -> SignedRequest:
    """A request as the service sends it; each call is a new delivery unless ``delivery_id`` is given."""
    data.setdefault("sent_at", SENT_AT)
    data.setdefault("id", STORY_ID)
    return build_test_request(sample_payload(event, **data), secret, delivery_id=delivery_id)


urlpatterns: list[Any] = []
"""The Django URLconf of the adapter tests (``ROOT_URLCONF`` names this module)."""


def configure_django() -> None:
    """Configure Django once per process, the same way whichever test module comes first."""
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            DEBUG=False,
            SECRET_KEY="django-test-only",
            ALLOWED_HOSTS=["testserver"],
            ROOT_URLCONF=__name__,
            MIDDLEWARE=["django.middleware.csrf.CsrfViewMiddleware"],
            INSTALLED_APPS=[],
        )
        django.setup()
