"""Receive the breaking-news webhook of spec 6: verify, parse, de-duplicate, dispatch.

Framework adapters live in ``sports_posts.webhooks.adapters`` (ASGI, WSGI, Django) and
import their framework only when used.

Only signature checking is imported with the package: a script that calls
``verify_signature`` pays for hashlib and hmac, not for the receiver, the stores or the
pydantic event models, which load on first use (module ``__getattr__``, PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
    from .._errors import (
        SignatureVerificationError,
        WebhookPayloadError,
    )
    from .._webhook_headers import WebhookHeaders
    from ._inbox_protocol import Inbox
    from ._postgres import (
        PostgresDedupeStore,
        PostgresInbox,
    )
    from ._redis_inbox import RedisInbox
    from ._store import StoreError
    from .dedupe import (
        AsyncDedupeStore,
        DedupeStore,
        MemoryDedupeStore,
        RedisDedupeStore,
        SQLiteDedupeStore,
    )
    from .errors import (
        ReplayedWebhookError,
        StoreDataLostError,
        StoreUnavailableError,
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
    from .inbox import (
        InboxEntry,
        SQLiteInbox,
    )
    from .receiver import (
        DEFAULT_HANDLER_TIMEOUT,
        Handler,
        WebhookReceiver,
        WebhookResponse,
    )
    from .signature import (
        DELIVERY_HEADER,
        EVENT_HEADER,
        SIGNATURE_HEADER,
        sign_payload,
        verify_signature,
    )
    from .stories import (
        Story,
        thread_stories,
    )
    from .testing import (
        SignedRequest,
        build_test_request,
        sample_payload,
    )

# Each public name and the module that defines it, one a line.
__getattr__, __dir__, __all__ = attach(__name__, {
    "DELIVERY_HEADER": ".signature",
    "EVENT_HEADER": ".signature",
    "ReplayedWebhookError": ".errors",
    "SIGNATURE_HEADER": ".signature",
    "SignatureVerificationError": ".._errors",
    "StoreDataLostError": ".errors",
    "StoreUnavailableError": ".errors",
    "WebhookHeaders": ".._webhook_headers",
    "WebhookPayloadError": ".._errors",
    "sign_payload": ".signature",
    "verify_signature": ".signature",
    "Inbox": "._inbox_protocol",
    "PostgresDedupeStore": "._postgres",
    "PostgresInbox": "._postgres",
    "RedisInbox": "._redis_inbox",
    "StoreError": "._store",
    "AsyncDedupeStore": ".dedupe",
    "DedupeStore": ".dedupe",
    "MemoryDedupeStore": ".dedupe",
    "RedisDedupeStore": ".dedupe",
    "SQLiteDedupeStore": ".dedupe",
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
    "InboxEntry": ".inbox",
    "SQLiteInbox": ".inbox",
    "DEFAULT_HANDLER_TIMEOUT": ".receiver",
    "Handler": ".receiver",
    "WebhookReceiver": ".receiver",
    "WebhookResponse": ".receiver",
    "Story": ".stories",
    "thread_stories": ".stories",
    "SignedRequest": ".testing",
    "build_test_request": ".testing",
    "sample_payload": ".testing",
}, eager=(".._errors", ".._webhook_headers", ".errors", ".signature"))
