"""Inboxes: an event is stored before the 2xx, then drained with retries.

Answering 2xx ends the service's retries (spec 6.5), so a receiver that acknowledges and
then crashes would lose the event. With an inbox the 2xx only follows a committed row, and
a worker drains rows with its own backoff; rows that keep failing become ``dead`` and stay
inspectable (``Inbox.dead``) and replayable (``Inbox.requeue``).

The ``Inbox`` protocol is what ``WebhookReceiver`` takes: SQLite (``inbox.sqlite``),
PostgreSQL (``inbox.postgres``) or Redis (``inbox.redis``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._utils import attach

if TYPE_CHECKING:  # the same names, as explicit re-exports (`X as X`) that every checker accepts
    from ._entry import DEFAULT_BACKOFF as DEFAULT_BACKOFF
    from ._entry import DIED as DIED
    from ._entry import InboxEntry as InboxEntry
    from ._protocol import Inbox as Inbox
    from .sqlite import SQLiteInbox as SQLiteInbox

__all__ = ["DEFAULT_BACKOFF", "DIED", "Inbox", "InboxEntry", "SQLiteInbox"]

# Each public name and the module that defines it: the package imports none of its own
# modules at load time (tests/test_import_threads.py), so that a thread importing
# ``inbox.sqlite`` first never waits for a package that waits for it.
_LAZY = {
    "DEFAULT_BACKOFF": "._entry",
    "DIED": "._entry",
    "Inbox": "._protocol",
    "InboxEntry": "._entry",
    "SQLiteInbox": ".sqlite",
}

if not TYPE_CHECKING:  # at run time only: a checker reads the imports above
    __getattr__, __dir__ = attach(__name__, _LAZY, __all__)
