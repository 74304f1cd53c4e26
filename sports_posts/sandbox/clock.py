"""The sandbox clock: real time or manual time, moved forward by tests instead of sleeping."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import Callable, Optional

from .._errors import ParameterError

__all__ = ["DEFAULT_START", "EARLIEST", "LATEST", "Clock", "ManualClock", "SystemClock"]

DEFAULT_START = datetime(2026, 1, 15, 18, 0, 0, tzinfo=timezone.utc)
"""Where a ``ManualClock`` starts unless told otherwise (a fixed instant keeps seeds reproducible)."""
EARLIEST = datetime(2011, 1, 1, tzinfo=timezone.utc)
"""The earliest start: post ids count milliseconds from late 2010, as the platform's do."""
LATEST = datetime(9999, 1, 1, tzinfo=timezone.utc)
"""The clock never passes this: every window, billing month and retry schedule computed from
sandbox time (hours, weeks at most) then stays inside the calendar."""


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
        if not seconds >= 0:  # also NaN
            raise ParameterError("the sandbox clock only moves forward")
        with self._lock:
            try:
                delta = timedelta(seconds=seconds)
                beyond = self.now() + delta > LATEST
            except OverflowError:
                beyond = True
            if beyond:
                raise ParameterError(f"the sandbox clock cannot pass {LATEST.date().isoformat()}")
            self._shift(delta)
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
        if not EARLIEST <= self._now <= LATEST:
            raise ParameterError(f"a manual clock starts between {EARLIEST.date()} and {LATEST.date()}")

    def now(self) -> datetime:
        return self._now

    def _shift(self, delta: timedelta) -> None:
        self._now += delta

    @property
    def is_manual(self) -> bool:
        return True
