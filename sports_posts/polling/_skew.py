"""How far the service's clock is from this machine's, from the ``Date`` header of its answers.

The poller's time bounds (where an empty checkpoint starts, how far the window slides after
a cycle, whether a stored watermark is in the future) are instants of the service's clock,
which stamps ``created_at``. A machine whose clock is off by more than ``lookback`` would
otherwise skip posts (ahead) or refuse a valid checkpoint (behind).

Each answer gives one sample: its ``Date`` (RFC 9110 IMF-fixdate, whole seconds, so the
service's time lay in ``[Date, Date + 1 s)``; ``Date + 0.5 s`` is taken) minus the midpoint of
the round trip on the local clock. The estimate is the median of the last samples, so one
odd answer (a cache, a proxy) moves nothing. No I/O here: the poller feeds it.
"""

from __future__ import annotations

import logging
from collections import deque
from datetime import datetime, timedelta

from .._transport import parse_http_date

__all__ = ["MAX_CORRECTION", "NOISE", "SAMPLES", "WARN_AT", "ClockSkew", "parse_http_date"]

log = logging.getLogger("sports_posts.polling")

SAMPLES = 9
"""Answers the estimate is the median of: a few odd ones are outvoted, and a real change
of skew (a clock stepped by NTP) takes over after five."""
NOISE = timedelta(seconds=2)
"""Estimates closer to zero than this are taken as zero: ``Date`` has a resolution of one
second and the round trip blurs the midpoint, so they are measurement noise, and far below
the 180 s ``lookback`` that absorbs them anyway."""
MAX_CORRECTION = timedelta(hours=14)
"""A sample further off than this is ignored (with a warning), so a server or proxy with a
broken ``Date`` cannot move the poller's time arbitrarily. 14 hours is UTC+14, the widest
time zone: a machine keeping local time as UTC is the largest skew an honest setup shows."""
WARN_AT = timedelta(seconds=30)
"""A skew this large is logged once at WARNING: corrected, but worth fixing (NTP)."""


class ClockSkew:
    """The service's clock minus this machine's, estimated from answers' ``Date`` headers.

    ``offset`` is the estimate (zero until an answer dated it, and within ``NOISE``).
    ``cautious_offset`` is the earlier of it and the newest sample: for bounds where a time
    too late would skip posts, so that a clock stepped forward since the last samples is
    followed at once. The poller adds only its negative part to this machine's clock, so
    no ``Date`` (one forged sample, a median, a proxy's fast clock) can move a bound later
    than the local clock alone would: headers can only make the poller more careful.
    """

    def __init__(
        self, *, samples: int = SAMPLES, max_correction: timedelta = MAX_CORRECTION, warn_at: timedelta = WARN_AT
    ) -> None:
        self._samples: deque[timedelta] = deque(maxlen=samples)
        self._max = max_correction
        self._warn_at = warn_at
        self._warned = False
        self._warned_ignored = False

    def observe(self, date: object, sent: datetime, received: datetime) -> None:
        """Take one answer: its ``Date`` header value (or ``None``) and the local times the
        request was sent and its answer received. Anything unusable is ignored."""
        served = parse_http_date(date)
        if served is None:
            if date is not None:
                log.debug("ignored a Date header that is not an HTTP date: %r", str(date)[:40])
            return
        if received < sent:  # the local clock stepped back during the call
            return
        try:
            sample = served + timedelta(milliseconds=500) - (sent + (received - sent) / 2)
        except OverflowError:
            sample = timedelta.max
        if abs(sample) > self._max:
            level = logging.DEBUG if self._warned_ignored else logging.WARNING
            self._warned_ignored = True
            log.log(
                level,
                "ignored the service's Date header %r: it is more than %s from this machine's "
                "clock (a broken server or proxy, or a clock far off); no correction is made",
                str(date)[:40], self._max,
            )
            return
        self._samples.append(sample)
        offset = self.offset
        if not self._warned and abs(offset) >= self._warn_at:
            self._warned = True
            side = "behind" if offset > timedelta(0) else "ahead of"
            how = (
                "the poller keeps to this machine's clock for its time bounds (a header may "
                "only make them earlier)" if offset > timedelta(0) else "the poller corrects for it"
            )
            log.warning(
                "this machine's clock is %s %s the service's (from its Date header); %s, but "
                "keep the clock synced (NTP)",
                _seconds(abs(offset)), side, how,
            )

    @property
    def max_correction(self) -> timedelta:
        """The largest skew taken from a sample; one further off is ignored."""
        return self._max

    @property
    def known(self) -> bool:
        """Whether any answer dated the service's clock yet."""
        return bool(self._samples)

    @property
    def offset(self) -> timedelta:
        """The median of the recent samples: add it to a local time to get the service's."""
        if not self._samples:
            return timedelta(0)
        ordered = sorted(self._samples)
        return _denoised(ordered[(len(ordered) - 1) // 2])

    @property
    def cautious_offset(self) -> timedelta:
        """The earlier of ``offset`` and the newest sample."""
        if not self._samples:
            return timedelta(0)
        return min(self.offset, _denoised(self._samples[-1]))

    def __repr__(self) -> str:
        return f"ClockSkew(offset={self.offset}, samples={len(self._samples)})"


def _denoised(value: timedelta) -> timedelta:
    return timedelta(0) if abs(value) < NOISE else value


def _seconds(value: timedelta) -> str:
    seconds = value.total_seconds()
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
