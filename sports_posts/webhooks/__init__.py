"""Receive the breaking-news webhook of spec 6: verify, parse, de-duplicate, dispatch.

Framework adapters live in :mod:`sports_posts.webhooks.adapters` (ASGI, WSGI, Django) and
import their framework only when used.
"""

from .._errors import SignatureVerificationError, WebhookPayloadError
from ._inbox_protocol import Inbox
from ._postgres import PostgresDedupeStore, PostgresInbox
from ._redis_inbox import RedisInbox
from ._store import StoreError
from .dedupe import DedupeStore, MemoryDedupeStore, RedisDedupeStore, SQLiteDedupeStore
from .events import (
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
from .receiver import Handler, WebhookReceiver, WebhookResponse
from .signature import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    sign_payload,
    verify_signature,
)
from .stories import Story, thread_stories
from .testing import SignedRequest, build_test_request, sample_payload

__all__ = [
    "DELIVERY_HEADER",
    "EVENT_HEADER",
    "SIGNATURE_HEADER",
    "AltSource",
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
    "SQLiteInbox",
    "SQLiteDedupeStore",
    "SignatureVerificationError",
    "SignedRequest",
    "StoreError",
    "Story",
    "SubscriptionFilter",
    "TaggedEntity",
    "WebhookEvent",
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
