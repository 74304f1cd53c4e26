"""``RetryWaits``: the waits a client's retries ask for, recorded instead of slept."""

from __future__ import annotations

from typing import Callable, Optional

__all__ = ["RetryWaits"]


class RetryWaits:
    """The ``sleep=`` of a client under test: each wait between retries is recorded in
    ``waits`` and returns at once (then ``on_wait``, if given, is told of it: a sandbox's
    ``advance``, say, so that its manual clock moves on by the wait).

    ``SportsPosts(..., sleep=waits.sleep)``; ``AsyncSportsPosts(..., sleep=waits.async_sleep)``.
    """

    def __init__(self, on_wait: Optional[Callable[[float], object]] = None) -> None:
        self.waits: list[float] = []
        """The seconds of each wait, in order."""
        self.on_wait = on_wait

    def sleep(self, seconds: float) -> None:
        """Record a wait of ``seconds`` (the sync client's ``sleep=``)."""
        self.waits.append(seconds)
        if self.on_wait is not None:
            self.on_wait(seconds)

    async def async_sleep(self, seconds: float) -> None:
        """Record a wait of ``seconds`` (the async client's ``sleep=``)."""
        self.sleep(seconds)

    def __repr__(self) -> str:
        return f"RetryWaits({self.waits!r})"
