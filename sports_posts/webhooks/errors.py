"""Typed errors of the webhook stores and of the replay window, all ``SportsPostsError``.

A store error becomes a 503 in ``WebhookReceiver`` (the service retries later); a raw
driver exception (``redis.ConnectionError``, ``sqlite3.OperationalError``) never escapes a
store of this package.
"""

from __future__ import annotations

from .._errors import SignatureVerificationError
from .._stores.errors import StoreUnavailableError

__all__ = ["ReplayedWebhookError", "StoreDataLostError", "StoreUnavailableError"]


class StoreDataLostError(StoreUnavailableError):
    """The store lost what it remembered (a Redis restarted without persistence, a FLUSHALL).

    Processing on would handle stories a second time, so every operation fails until an
    operator calls the store's ``acknowledge_data_loss()`` (or restarts the receiver).
    """


class ReplayedWebhookError(SignatureVerificationError):
    """A correctly signed delivery whose ``sent_at`` is outside the replay window.

    ``.age`` is how many seconds before now it was sent (negative: from the future).
    """

    def __init__(self, message: str, *, age: float) -> None:
        super().__init__(message)
        self.age = age
