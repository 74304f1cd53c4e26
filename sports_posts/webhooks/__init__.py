"""Receive the breaking-news webhook of spec 6: verify, parse, de-duplicate, dispatch.

Framework adapters live in ``sports_posts.webhooks.adapters`` (ASGI, WSGI, Django) and
import their framework only when used.

Only signature checking is imported with the package: a script that calls
``verify_signature`` pays for hashlib and hmac, not for the receiver, the stores or the
pydantic event models, which load on first use (module ``__getattr__``, PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._errors import SignatureVerificationError, WebhookPayloadError
from .._webhook_headers import WebhookHeaders
from .errors import ReplayedWebhookError, StoreDataLostError, StoreUnavailableError
from .signature import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    sign_payload,
    verify_signature,
)

if TYPE_CHECKING:  # the lazy names, for type checkers and IDEs
    from ._inbox_protocol import Inbox
    from ._postgres import PostgresDedupeStore, PostgresInbox
    from ._redis_inbox import RedisInbox
    from ._store import StoreError
    from .dedupe import (
        AsyncDedupeStore,
        DedupeStore,
        MemoryDedupeStore,
        RedisDedupeStore,
        SQLiteDedupeStore,
    )
    from .events import (
        DEFAULT_CLOCK_SKEW,
        DEFAULT_TOLERANCE,
        AltSource,
        BreakingNewsData,
        BreakingNewsEvent,
        BreakingNewsUpdateData,
        BreakingNewsUpdateEvent,
        TaggedEntity,
        WebhookEvent,
        construct_event,
    )
    from .filters import SubscriptionFilter
    from .inbox import InboxEntry, SQLiteInbox
    from .receiver import DEFAULT_HANDLER_TIMEOUT, Handler, WebhookReceiver, WebhookResponse
    from .stories import Story, thread_stories
    from .testing import SignedRequest, build_test_request, sample_payload

_LAZY = {
    "Inbox": "_inbox_protocol",
    "PostgresDedupeStore": "_postgres",
    "PostgresInbox": "_postgres",
    "RedisInbox": "_redis_inbox",
    "StoreError": "_store",
    "AsyncDedupeStore": "dedupe",
    "DedupeStore": "dedupe",
    "MemoryDedupeStore": "dedupe",
    "RedisDedupeStore": "dedupe",
    "SQLiteDedupeStore": "dedupe",
    "DEFAULT_CLOCK_SKEW": "events",
    "DEFAULT_TOLERANCE": "events",
    "AltSource": "events",
    "BreakingNewsData": "events",
    "BreakingNewsEvent": "events",
    "BreakingNewsUpdateData": "events",
    "BreakingNewsUpdateEvent": "events",
    "TaggedEntity": "events",
    "WebhookEvent": "events",
    "construct_event": "events",
    "SubscriptionFilter": "filters",
    "InboxEntry": "inbox",
    "SQLiteInbox": "inbox",
    "DEFAULT_HANDLER_TIMEOUT": "receiver",
    "Handler": "receiver",
    "WebhookReceiver": "receiver",
    "WebhookResponse": "receiver",
    "Story": "stories",
    "thread_stories": "stories",
    "SignedRequest": "testing",
    "build_test_request": "testing",
    "sample_payload": "testing",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DEFAULT_CLOCK_SKEW",
    "DEFAULT_HANDLER_TIMEOUT",
    "DEFAULT_TOLERANCE",
    "DELIVERY_HEADER",
    "EVENT_HEADER",
    "SIGNATURE_HEADER",
    "AltSource",
    "AsyncDedupeStore",
    "BreakingNewsData",
    "BreakingNewsEvent",
    "BreakingNewsUpdateData",
    "BreakingNewsUpdateEvent",
    "DedupeStore",
    "Handler",
    "Inbox",
    "InboxEntry",
    "MemoryDedupeStore",
    "PostgresDedupeStore",
    "PostgresInbox",
    "RedisDedupeStore",
    "RedisInbox",
    "ReplayedWebhookError",
    "SQLiteDedupeStore",
    "SQLiteInbox",
    "SignatureVerificationError",
    "SignedRequest",
    "StoreDataLostError",
    "StoreError",
    "StoreUnavailableError",
    "Story",
    "SubscriptionFilter",
    "TaggedEntity",
    "WebhookEvent",
    "WebhookHeaders",
    "WebhookPayloadError",
    "WebhookReceiver",
    "WebhookResponse",
    "build_test_request",
    "construct_event",
    "sample_payload",
    "sign_payload",
    "thread_stories",
    "verify_signature",
]
