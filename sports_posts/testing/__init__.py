"""Helpers for customers' own tests: the pytest plugin's fixtures and an ASGI app served on loopback.

The pytest plugin (`sports_posts.testing.pytest_plugin`) is registered through the
``pytest11`` entry point; its fixtures need the ``sandbox`` extra. The types of its webhook
fixtures are here, for your own annotations: ``WebhookRequestFactory``
(``sports_posts_webhook_request``), ``StorySender`` (``sports_posts_send_story``) and the
``SentStory`` it returns; ``ASGIApp`` and ``WSGIApp``, the apps ``StorySender`` and
``serve_asgi`` take; ``RetryWaits``, a client's ``sleep=`` that records each wait between
retries instead of sleeping (``sports_posts_retry_waits``). See docs/testing.md.
"""

from __future__ import annotations

from ._serve import ASGIApp, WSGIApp, serve_asgi
from ._stories import SentStory, StorySender, WebhookRequestFactory
from ._waits import RetryWaits

__all__ = ["ASGIApp", "RetryWaits", "SentStory", "StorySender", "WSGIApp", "WebhookRequestFactory", "serve_asgi"]
