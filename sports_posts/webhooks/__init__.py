"""Receive the breaking-news webhook of spec 6: verify, parse, de-duplicate, dispatch.

Framework adapters live in ``sports_posts.webhooks.adapters`` (ASGI, WSGI, Django) and
import their framework only when used.

Only signature checking is imported with the package: a script that calls
``verify_signature`` pays for hashlib and hmac, not for the receiver, the stores or the
pydantic event models, which load on first use (module ``__getattr__``, PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._utils import attach

if TYPE_CHECKING:  # the same names, as explicit re-exports (`X as X`) that every checker accepts
    from .._errors import SignatureVerificationError as SignatureVerificationError
    from .._errors import WebhookPayloadError as WebhookPayloadError
    from .._stores.errors import PoolerUnreachableError as PoolerUnreachableError
    from .._vocabulary import WebhookHeaders as WebhookHeaders
    from ._store import StoreError as StoreError
    from .dedupe import AsyncDedupeStore as AsyncDedupeStore
    from .dedupe import DedupeStore as DedupeStore
    from .dedupe.memory import MemoryDedupeStore as MemoryDedupeStore
    from .dedupe.postgres import PostgresDedupeStore as PostgresDedupeStore
    from .dedupe.redis import RedisDedupeStore as RedisDedupeStore
    from .dedupe.sqlite import SQLiteDedupeStore as SQLiteDedupeStore
    from .errors import ReplayedWebhookError as ReplayedWebhookError
    from .errors import StoreDataLostError as StoreDataLostError
    from .errors import StoreUnavailableError as StoreUnavailableError
    from .events import DEFAULT_CLOCK_SKEW as DEFAULT_CLOCK_SKEW
    from .events import DEFAULT_TOLERANCE as DEFAULT_TOLERANCE
    from .events import AltSource as AltSource
    from .events import BreakingNewsData as BreakingNewsData
    from .events import BreakingNewsEvent as BreakingNewsEvent
    from .events import BreakingNewsUpdateData as BreakingNewsUpdateData
    from .events import BreakingNewsUpdateEvent as BreakingNewsUpdateEvent
    from .events import TaggedEntity as TaggedEntity
    from .events import WebhookEvent as WebhookEvent
    from .events import construct_event as construct_event
    from .filters import SubscriptionFilter as SubscriptionFilter
    from .inbox import Inbox as Inbox
    from .inbox import InboxEntry as InboxEntry
    from .inbox.postgres import PostgresInbox as PostgresInbox
    from .inbox.redis import RedisInbox as RedisInbox
    from .inbox.sqlite import SQLiteInbox as SQLiteInbox
    from .receiver import DEFAULT_HANDLER_TIMEOUT as DEFAULT_HANDLER_TIMEOUT
    from .receiver import Handler as Handler
    from .receiver import WebhookReceiver as WebhookReceiver
    from .receiver import WebhookResponse as WebhookResponse
    from .signature import DELIVERY_HEADER as DELIVERY_HEADER
    from .signature import EVENT_HEADER as EVENT_HEADER
    from .signature import SIGNATURE_HEADER as SIGNATURE_HEADER
    from .signature import sign_payload as sign_payload
    from .signature import verify_signature as verify_signature
    from .stories import Story as Story
    from .stories import thread_stories as thread_stories
    from .testing import AltSourcePayload as AltSourcePayload
    from .testing import BreakingNewsPayload as BreakingNewsPayload
    from .testing import BreakingNewsPayloadData as BreakingNewsPayloadData
    from .testing import BreakingNewsUpdatePayload as BreakingNewsUpdatePayload
    from .testing import BreakingNewsUpdatePayloadData as BreakingNewsUpdatePayloadData
    from .testing import NewsPayloadData as NewsPayloadData
    from .testing import PayloadFields as PayloadFields
    from .testing import SignedRequest as SignedRequest
    from .testing import TaggedEntityPayload as TaggedEntityPayload
    from .testing import WebhookPayload as WebhookPayload
    from .testing import build_test_request as build_test_request
    from .testing import sample_payload as sample_payload

__all__ = [
    "AltSource",
    "AltSourcePayload",
    "AsyncDedupeStore",
    "BreakingNewsData",
    "BreakingNewsEvent",
    "BreakingNewsPayload",
    "BreakingNewsPayloadData",
    "BreakingNewsUpdateData",
    "BreakingNewsUpdateEvent",
    "BreakingNewsUpdatePayload",
    "BreakingNewsUpdatePayloadData",
    "DEFAULT_CLOCK_SKEW",
    "DEFAULT_HANDLER_TIMEOUT",
    "DEFAULT_TOLERANCE",
    "DELIVERY_HEADER",
    "DedupeStore",
    "EVENT_HEADER",
    "Handler",
    "Inbox",
    "InboxEntry",
    "MemoryDedupeStore",
    "NewsPayloadData",
    "PayloadFields",
    "PoolerUnreachableError",
    "PostgresDedupeStore",
    "PostgresInbox",
    "RedisDedupeStore",
    "RedisInbox",
    "ReplayedWebhookError",
    "SIGNATURE_HEADER",
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
    "TaggedEntityPayload",
    "WebhookEvent",
    "WebhookHeaders",
    "WebhookPayload",
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

# Each public name and the module that defines it, one a line: the run-time table.
# tests/test_lazy_imports.py checks that it, __all__ and the imports above name the same things.
_LAZY = {
    "DELIVERY_HEADER": ".signature",
    "EVENT_HEADER": ".signature",
    "ReplayedWebhookError": ".errors",
    "SIGNATURE_HEADER": ".signature",
    "SignatureVerificationError": ".._errors",
    "StoreDataLostError": ".errors",
    "StoreUnavailableError": ".errors",
    "WebhookHeaders": ".._vocabulary",
    "WebhookPayloadError": ".._errors",
    "sign_payload": ".signature",
    "verify_signature": ".signature",
    "StoreError": "._store",
    "PoolerUnreachableError": ".._stores.errors",
    "AsyncDedupeStore": ".dedupe",
    "DedupeStore": ".dedupe",
    "MemoryDedupeStore": ".dedupe.memory",
    "PostgresDedupeStore": ".dedupe.postgres",
    "RedisDedupeStore": ".dedupe.redis",
    "SQLiteDedupeStore": ".dedupe.sqlite",
    "DEFAULT_CLOCK_SKEW": ".events",
    "DEFAULT_TOLERANCE": ".events",
    "AltSource": ".events",
    "BreakingNewsData": ".events",
    "BreakingNewsEvent": ".events",
    "BreakingNewsUpdateData": ".events",
    "BreakingNewsUpdateEvent": ".events",
    "TaggedEntity": ".events",
    "WebhookEvent": ".events",
    "construct_event": ".events",
    "SubscriptionFilter": ".filters",
    "Inbox": ".inbox",
    "InboxEntry": ".inbox",
    "PostgresInbox": ".inbox.postgres",
    "RedisInbox": ".inbox.redis",
    "SQLiteInbox": ".inbox.sqlite",
    "DEFAULT_HANDLER_TIMEOUT": ".receiver",
    "Handler": ".receiver",
    "WebhookReceiver": ".receiver",
    "WebhookResponse": ".receiver",
    "Story": ".stories",
    "thread_stories": ".stories",
    "AltSourcePayload": ".testing",
    "BreakingNewsPayload": ".testing",
    "BreakingNewsPayloadData": ".testing",
    "BreakingNewsUpdatePayload": ".testing",
    "BreakingNewsUpdatePayloadData": ".testing",
    "NewsPayloadData": ".testing",
    "PayloadFields": ".testing",
    "TaggedEntityPayload": ".testing",
    "WebhookPayload": ".testing",
    "SignedRequest": ".testing",
    "build_test_request": ".testing",
    "sample_payload": ".testing",
}

if not TYPE_CHECKING:  # at run time only: a checker reads the imports above
    __getattr__, __dir__ = attach(__name__, _LAZY, __all__, eager=(".._errors", ".._vocabulary"))
