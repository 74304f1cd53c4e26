"""What every inbox shares: the stored entry, the default backoff, a dead entry's text when its workers died."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["DEFAULT_BACKOFF", "DIED", "InboxEntry"]


DEFAULT_BACKOFF: tuple[float, ...] = (1.0, 5.0, 30.0, 120.0, 600.0, 1800.0)
"""Seconds before attempt 2, 3, ...; the last value repeats until ``max_attempts``."""


DIED = "leased {n} times without an outcome (workers died)"
"""A dead entry's ``last_error`` when its workers died rather than failed (every engine)."""


@dataclass(frozen=True)
class InboxEntry:
    """One stored event: the verified raw body, so nothing is lost to a model change.

    ``attempts`` counts handler runs that *ended* (``mark_done`` or ``mark_failed``); a run
    whose worker died ends nothing, so an entry can go ``dead`` showing fewer attempts than
    ``max_attempts``: every engine also counts the times an entry was leased, and one leased
    ``max_attempts`` times without an outcome is dead with ``last_error`` set to
    ``"leased N times without an outcome (workers died)"``. Otherwise a dead entry's
    ``last_error`` is the error its last failed run reported.
    """

    key: str
    body: bytes
    delivery_id: Optional[str]
    attempts: int
    state: str
    last_error: Optional[str]
    token: str = ""
