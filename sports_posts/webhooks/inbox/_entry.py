"""What every inbox shares: the stored entry, the default backoff, a dead entry's text when its workers died."""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from typing import Optional

__all__ = ["DEFAULT_BACKOFF", "DIED", "InProgress", "InboxEntry", "holder_of", "lease_token"]


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


@dataclass(frozen=True)
class InProgress:
    """An entry a worker is processing now, as an operator sees it (``sports-posts inbox
    active``): ``holder`` is the worker (``host:pid``), ``attempts`` the handler runs that
    ended, ``deliveries`` the times it was leased, ``lease_left`` the seconds until another
    worker may take it (negative: its worker is late or gone, and the next drain takes it)."""

    key: str
    holder: str
    attempts: int
    deliveries: int
    lease_left: float


def lease_token() -> str:
    """A new lease's token, ``host:pid/random``: unique, and it names its worker for an operator."""
    return f"{socket.gethostname()}:{os.getpid()}/{uuid.uuid4().hex}"


def holder_of(token: str) -> str:
    """The worker a lease token names (``""`` for a token of an older release, a bare random hex)."""
    holder, slash, _ = token.rpartition("/")
    return holder if slash else ""
