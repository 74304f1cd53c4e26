"""The sandbox clock: real time or manual time, moved forward by tests instead of sleeping."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import Callable, Optional

from .._errors import ParameterError

__all__ = ["DEFAULT_START", "Clock", "ManualClock", "SystemClock"]

DEFAULT_START = datetime(2026, 1, 15, 18, 0, 0, tzinfo=timezone.utc)
"""Where a ``ManualClock`` starts unless told otherwise (a fixed instant keeps seeds reproducible)."""


class Clock:
    """Base of the clocks: ``now()`` in aware UTC and ``advance()`` that notifies listeners."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []

    def now(self) -> datetime:
        """The current sandbox time (aware UTC)."""
        raise NotImplementedError

    def _shift(self, delta: timedelta) -> None:
        raise NotImplementedError

    def advance(self, seconds: float) -> datetime:
        """Move sandbox time forward by ``seconds`` and return the new time."""
        if seconds < 0:
            raise ParameterError("the sandbox clock only moves forward")
        with self._lock:
            self._shift(timedelta(seconds=seconds))
        for listener in list(self._listeners):
            listener()
        return self.now()

    def advance_to(self, when: datetime) -> datetime:
        """Move sandbox time forward to ``when`` (no-op when already past it)."""
        delta = (when - self.now()).total_seconds()
        if delta > 0:
            return self.advance(delta)
        return self.now()

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every [`advance`][sports_posts.sandbox.Clock.advance] (the webhook sender wakes up on it)."""
        self._listeners.append(listener)

    @property
    def is_manual(self) -> bool:
        """True when time stands still between [`advance`][sports_posts.sandbox.Clock.advance] calls."""
        return False


class SystemClock(Clock):
    """Real UTC time plus whatever tests advanced it by."""

    def __init__(self) -> None:
        super().__init__()
        self._offset = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(timezone.utc) + self._offset

    def _shift(self, delta: timedelta) -> None:
        self._offset += delta


class ManualClock(Clock):
    """Time that stands still until [`advance`][sports_posts.sandbox.Clock.advance] moves it: fully deterministic tests."""

    def __init__(self, start: Optional[datetime] = None) -> None:
        super().__init__()
        start = start or DEFAULT_START
        if start.tzinfo is None:
            start = start.replace(tzinfo=timezone.utc)
        self._now = start.astimezone(timezone.utc)

    def now(self) -> datetime:
        return self._now

    def _shift(self, delta: timedelta) -> None:
        self._now += delta

    @property
    def is_manual(self) -> bool:
        return True
