"""``CallBudget``: one per-minute rate and one monthly cap shared by every client and poller
of an account, on Redis (one Lua script) or PostgreSQL (one ``UPDATE ... RETURNING``).

A draw is made right before a request is sent; a refused draw raises
``BudgetExhaustedError`` and nothing is sent. Both windows follow the store's clock (Redis
``TIME``, PostgreSQL ``now()``), never a machine's, so skewed clocks across a fleet share one
minute and one month. The month is the calendar month in UTC, the sandbox's billing cycle.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Generator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from ._errors import ParameterError, SportsPostsError
from ._stores import runner_for
from ._telemetry import budget_drawn, budget_refused
from ._utils import Done, advance

if TYPE_CHECKING:
    from ._stores import StoreTarget
    from .models.account import AccountInformation

__all__ = ["BudgetDraw", "BudgetExhaustedError", "BudgetStatus", "CallBudget"]

log = logging.getLogger("sports_posts.budget")

# The calendar month (YYYYMM) of a unix time, in Lua (Redis has no os.date): Hinnant's
# civil_from_days.
LUA_MONTH_OF = """
local function month_of(secs)
  local z = math.floor(secs / 86400) + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y * 100 + m
end
"""
# The store's time, its minute and month, and the counts of KEYS[1] in those windows.
_LUA_NOW = LUA_MONTH_OF + """
local t = redis.call('TIME')
local secs = tonumber(t[1])
local now_ms = secs * 1000 + math.floor(tonumber(t[2]) / 1000)
local month = month_of(secs)
local minute = math.floor(secs / 60)
local h = redis.call('HMGET', KEYS[1], 'minute', 'minute_used', 'month', 'month_used')
local mu = 0
if tonumber(h[1]) == minute then mu = tonumber(h[2]) end
local mo = 0
if tonumber(h[3]) == month then mo = tonumber(h[4]) end
"""

# KEYS[1] = budget hash; ARGV = per_minute, per_month (-1: no bound).
# Returns {granted, server time in ms, month as YYYYMM, minute used, month used}.
_REDIS_DRAW = _LUA_NOW + """
local per_minute, per_month = tonumber(ARGV[1]), tonumber(ARGV[2])
local granted = 1
if (per_minute >= 0 and mu >= per_minute) or (per_month >= 0 and mo >= per_month) then granted = 0 end
mu, mo = mu + granted, mo + granted
redis.call('HSET', KEYS[1], 'minute', minute, 'minute_used', mu, 'month', month, 'month_used', mo,
           'per_minute', ARGV[1], 'per_month', ARGV[2])
redis.call('PEXPIRE', KEYS[1], 40 * 86400 * 1000)
return {granted, now_ms, month, mu, mo}
"""

# What the counters are now, without drawing: {server time in ms, month as YYYYMM, minute
# used, month used, and the bounds the last draw was made with (-1: none; -2: none stored)}.
_REDIS_STATUS = _LUA_NOW + """
local bounds = redis.call('HMGET', KEYS[1], 'per_minute', 'per_month')
return {now_ms, month, mu, mo, tonumber(bounds[1]) or -2, tonumber(bounds[2]) or -2}
"""

# ARGV[1] = calls the account has used this month (from GET /account/information).
_REDIS_SEED = _LUA_NOW + """
mo = math.max(mo, tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'minute', minute, 'minute_used', mu, 'month', month, 'month_used', mo)
redis.call('PEXPIRE', KEYS[1], 40 * 86400 * 1000)
return {1, now_ms, month, mu, mo}
"""

# The row as it would be if it were new: the windows of the server's now() (its clock, not
# a machine's), with INITIAL as the counters. ON CONFLICT turns it into an update of the key.
_PG_UPSERT = """
INSERT INTO sports_posts_budget AS b (key, minute, month, at_ms, minute_used, month_used, granted, per_minute, per_month)
SELECT %(key)s, floor(extract(epoch FROM now()) / 60)::bigint,
       to_char(now() AT TIME ZONE 'UTC', 'YYYYMM')::integer,
       (extract(epoch FROM now()) * 1000)::bigint, {initial}, true, {bounds}
ON CONFLICT (key) DO UPDATE SET minute = EXCLUDED.minute, month = EXCLUDED.month, at_ms = EXCLUDED.at_ms,
"""
# A stored window other than the current one counts as empty.
_MU = "(CASE WHEN b.minute = EXCLUDED.minute THEN b.minute_used ELSE 0 END)"
_MO = "(CASE WHEN b.month = EXCLUDED.month THEN b.month_used ELSE 0 END)"
_OK = (
    f"((%(per_minute)s::bigint IS NULL OR {_MU} < %(per_minute)s::bigint)"
    f" AND (%(per_month)s::bigint IS NULL OR {_MO} < %(per_month)s::bigint))"
)
_RETURNING = " RETURNING b.granted, b.at_ms, b.month, b.minute_used, b.month_used"

# One statement: a concurrent draw waits for the row lock, and the SET is evaluated on the
# row the other one left, so two draws never both take the last call. The first draw of a
# key inserts the row (every bound is at least 1, so it is granted).
# A draw stores the bounds it was made with (NULL for one not set; -1 for a budget whose
# bounds were never stored, a seed's row), so that an operator's `budget status` shows them.
_PG_DRAW = (
    _PG_UPSERT.format(initial="1, 1", bounds="%(per_minute)s::bigint, %(per_month)s::bigint")
    + f" granted = {_OK}, minute_used = {_MU} + ({_OK})::integer, month_used = {_MO} + ({_OK})::integer,"
    + " per_minute = EXCLUDED.per_minute, per_month = EXCLUDED.per_month"
    + _RETURNING
)
_PG_SEED = (
    _PG_UPSERT.format(initial="0, %(used)s::bigint", bounds="-1, -1")
    + f" granted = true, minute_used = {_MU}, month_used = GREATEST({_MO}, %(used)s::bigint)"
    + _RETURNING
)


_PG_STATUS = """
SELECT (extract(epoch FROM now()) * 1000)::bigint, to_char(now() AT TIME ZONE 'UTC', 'YYYYMM')::integer,
       COALESCE((SELECT CASE WHEN b.minute = floor(extract(epoch FROM now()) / 60)::bigint
                             THEN b.minute_used ELSE 0 END FROM sports_posts_budget b WHERE b.key = %(key)s), 0),
       COALESCE((SELECT CASE WHEN b.month = to_char(now() AT TIME ZONE 'UTC', 'YYYYMM')::integer
                             THEN b.month_used ELSE 0 END FROM sports_posts_budget b WHERE b.key = %(key)s), 0),
       COALESCE((SELECT CASE WHEN b.per_minute IS NULL AND b.per_month IS NULL THEN -2
                             ELSE COALESCE(b.per_minute, -1) END FROM sports_posts_budget b WHERE b.key = %(key)s), -2),
       COALESCE((SELECT CASE WHEN b.per_minute IS NULL AND b.per_month IS NULL THEN -2
                             ELSE COALESCE(b.per_month, -1) END FROM sports_posts_budget b WHERE b.key = %(key)s), -2)
"""


class BudgetExhaustedError(SportsPostsError):
    """A ``CallBudget`` refused a draw: the call was not sent.

    ``bound`` is ``"per_minute"`` or ``"per_month"``, ``limit`` its size, ``retry_after``
    the seconds until it refills and ``refills_at`` when (the store's clock).
    """

    def __init__(self, bound: str, limit: int, retry_after: float, refills_at: datetime) -> None:
        what = "calls per minute" if bound == "per_minute" else "calls this month"
        super().__init__(
            f"call budget spent: {limit} {what} ({bound}={limit}); it refills in "
            f"{retry_after:.1f} s, at {refills_at.isoformat()}. Nothing was sent; raise "
            f"CallBudget({bound}=...) if the account allows more"
        )
        self.bound = bound
        self.limit = limit
        self.retry_after = retry_after
        self.refills_at = refills_at


@dataclass(frozen=True)
class BudgetDraw:
    """What ``CallBudget.try_acquire()`` (and ``seed()``) answered: ``granted`` or not,
    ``now_ms`` the store's clock, ``month`` as ``YYYYMM``, and both counters after the draw."""

    granted: bool
    now_ms: int
    month: int
    minute_used: int
    month_used: int

    def refusal(self, per_minute: Optional[int], per_month: Optional[int]) -> BudgetExhaustedError:
        """The error of a refused draw: the monthly cap when it is spent, else the minute."""
        now = datetime.fromtimestamp(self.now_ms / 1000, timezone.utc)
        if per_month is not None and self.month_used >= per_month:
            year, month = divmod(self.month, 100)
            refills = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc)
            return BudgetExhaustedError("per_month", per_month, (refills - now).total_seconds(), refills)
        assert per_minute is not None  # a draw is refused only by a bound that is set
        refills = datetime.fromtimestamp((self.now_ms // 60000 + 1) * 60, timezone.utc)
        return BudgetExhaustedError("per_minute", per_minute, (refills - now).total_seconds(), refills)


Draw = BudgetDraw
"""The name this class had before it was public."""


@dataclass(frozen=True)
class BudgetStatus:
    """What a ``CallBudget`` has counted, read without drawing (``CallBudget.status()``).

    ``month`` is the store's calendar month in UTC as ``"YYYY-MM"``; ``minute_left`` and
    ``month_left`` are ``None`` for a bound that is not set. ``stored`` is whether the
    store holds the bounds the fleet's last draw was made with (every draw stores them);
    ``stored_per_minute`` / ``stored_per_month`` are those bounds (``None``: not set).
    """

    per_minute: Optional[int]
    per_month: Optional[int]
    minute_used: int
    month_used: int
    minute_left: Optional[int]
    month_left: Optional[int]
    month: str
    stored: bool = False
    stored_per_minute: Optional[int] = None
    stored_per_month: Optional[int] = None


def _positive(name: str, value: object) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"{name}: expected a positive integer or None, got {value!r}", parameter=name)
    return value


class CallBudget:
    """The account's calls, counted once for the whole fleet: pass it as ``budget=`` to
    every ``sports_posts.SportsPosts`` / ``sports_posts.AsyncSportsPosts``.

    ``store`` is a ``redis://`` or ``postgresql://`` URL, or a client the customer already
    has (``redis.Redis``, ``redis.asyncio.Redis``, ``psycopg.Connection``,
    ``psycopg.AsyncConnection``). Every process that names the same ``key`` shares the
    counters, and should pass the same bounds. ``max_wait`` (seconds, default 0) lets a
    client wait that long for the per-minute window to refill rather than raise; the
    monthly cap is never waited for. Pollers always wait, with their own sleep.
    ``connect_timeout`` and ``statement_timeout`` (seconds) bound a draw on a store that
    froze or went away (on Redis the second is the socket timeout); a draw also ends within
    the calling request's ``timeout``/``total_timeout``.
    """

    def __init__(
        self,
        store: StoreTarget,
        *,
        per_minute: Optional[int] = None,
        per_month: Optional[int] = None,
        key: str = "sports_posts:budget",
        max_wait: float = 0.0,
        sleep: Optional[Callable[[float], None]] = None,
        async_sleep: Optional[Callable[[float], Awaitable[None]]] = None,
        connect_timeout: float = 5.0,
        statement_timeout: float = 5.0,
    ) -> None:
        self.per_minute: Optional[int] = _positive("per_minute", per_minute)
        self.per_month: Optional[int] = _positive("per_month", per_month)
        if self.per_minute is None and self.per_month is None:
            raise ParameterError("CallBudget needs per_minute=, per_month= or both", parameter="per_minute")
        if not isinstance(key, str) or not key:
            raise ParameterError("CallBudget: key must be a non-empty string", parameter="key")
        if isinstance(max_wait, bool) or not isinstance(max_wait, (int, float)) or not 0 <= max_wait < float("inf"):
            raise ParameterError(f"max_wait: expected seconds >= 0, got {max_wait!r}", parameter="max_wait")
        self.key = key
        self.max_wait: float = float(max_wait)
        self._sleep = sleep or time.sleep
        self._async_sleep = async_sleep
        self._runner = runner_for(store, owner="CallBudget", connect_timeout=connect_timeout,
                                  statement_timeout=statement_timeout)

    def __repr__(self) -> str:
        return (
            f"CallBudget({self._runner!r}, key={self.key!r}, per_minute={self.per_minute}, "
            f"per_month={self.per_month})"
        )

    # -- the statement of each engine, and what its answer means (no I/O) ----------------

    def _draw_statement(self) -> tuple[str, tuple[str, ...], Any]:
        if self._runner.engine == "redis":
            return _REDIS_DRAW, (self.key,), (_or_minus(self.per_minute), _or_minus(self.per_month))
        return _PG_DRAW, (), {"key": self.key, "per_minute": self.per_minute, "per_month": self.per_month}

    def _seed_statement(self, used: int) -> tuple[str, tuple[str, ...], Any]:
        if self._runner.engine == "redis":
            return _REDIS_SEED, (self.key,), (used,)
        return _PG_SEED, (), {"key": self.key, "used": used}

    def _wait_or_raise(self, draw: BudgetDraw) -> float:
        """Seconds to wait before drawing again (within ``max_wait``), or the refusal raised."""
        refusal = draw.refusal(self.per_minute, self.per_month)
        if refusal.bound == "per_minute" and refusal.retry_after <= self.max_wait:
            log.info("call budget: %s; waiting %.1f s", refusal, refusal.retry_after)
            return refusal.retry_after
        raise budget_refused(self, refusal)

    # -- I/O ---------------------------------------------------------------------------

    def try_acquire(self, *, timeout: Optional[float] = None) -> BudgetDraw:
        """Draw one call if both bounds allow it; the store's answer either way.

        ``timeout`` (seconds) shortens the store call's bound (on PostgreSQL; on Redis the
        socket timeout is the bound): a client passes what is left of its request's time.
        """
        return _draw(self._runner.execute(*self._draw_statement(), timeout=timeout))

    async def try_acquire_async(self) -> BudgetDraw:
        return _draw(await self._runner.aexecute(*self._draw_statement()))

    def _status_statement(self) -> tuple[str, tuple[str, ...], Any]:
        if self._runner.engine == "redis":
            return _REDIS_STATUS, (self.key,), ()
        return _PG_STATUS, (), {"key": self.key}

    def _status(self, row: Any) -> BudgetStatus:
        _, month, minute_used, month_used, stored_minute, stored_month = (int(v) for v in row)
        stored = stored_minute != -2 and (stored_minute, stored_month) != (-1, -1)
        return BudgetStatus(
            per_minute=self.per_minute,
            per_month=self.per_month,
            minute_used=minute_used,
            month_used=month_used,
            minute_left=None if self.per_minute is None else max(0, self.per_minute - minute_used),
            month_left=None if self.per_month is None else max(0, self.per_month - month_used),
            month=f"{month // 100:04d}-{month % 100:02d}",
            stored=stored,
            stored_per_minute=stored_minute if stored and stored_minute >= 0 else None,
            stored_per_month=stored_month if stored and stored_month >= 0 else None,
        )

    def status(self) -> BudgetStatus:
        """The counters of this minute and month, in the store's clock; draws nothing."""
        return self._status(self._runner.execute(*self._status_statement()))

    async def status_async(self) -> BudgetStatus:
        return self._status(await self._runner.aexecute(*self._status_statement()))

    def _acquire_steps(self) -> Generator[Optional[float], Optional[BudgetDraw], None]:
        """The draw and its waits, without I/O: yields ``None`` for a draw (answered with
        the store's ``BudgetDraw``) and seconds to sleep (answered with ``None``)."""
        waited = 0.0
        while True:
            draw = yield None
            assert draw is not None
            budget_drawn(self, draw)
            if draw.granted:
                return
            seconds = self._wait_or_raise(draw)
            if waited + seconds > self.max_wait:
                raise budget_refused(self, draw.refusal(self.per_minute, self.per_month))
            waited += seconds
            yield seconds

    def acquire(self, *, timeout: Optional[float] = None) -> None:
        """Draw one call or raise ``BudgetExhaustedError`` (waiting up to ``max_wait``);
        ``timeout`` as for ``try_acquire``."""
        steps = self._acquire_steps()
        step = advance(steps, None)
        while not isinstance(step, Done):
            # None: draw now; a number: wait that long first (the draw's answer, or None)
            step = advance(steps, self.try_acquire(timeout=timeout) if step is None else self._sleep(step))

    async def acquire_async(self) -> None:
        """``acquire`` for async clients (the wait, if any, is awaited)."""
        import asyncio

        sleep = self._async_sleep or asyncio.sleep
        steps = self._acquire_steps()
        step = advance(steps, None)
        while not isinstance(step, Done):
            if step is None:
                step = advance(steps, await self.try_acquire_async())
            else:
                await sleep(step)
                step = advance(steps, None)

    def seed(self, used: Union[int, AccountInformation]) -> BudgetDraw:
        """Set this month's count to at least ``used``: calls the account spent before the
        budget existed, from ``client.account.information()`` (a free call) or a number."""
        return _draw(self._runner.execute(*self._seed_statement(_used(used))))

    async def seed_async(self, used: Union[int, AccountInformation]) -> BudgetDraw:
        return _draw(await self._runner.aexecute(*self._seed_statement(_used(used))))

    def close(self) -> None:
        """Close the connection made from a URL."""
        self._runner.close()

    async def aclose(self) -> None:
        await self._runner.aclose()


def _or_minus(bound: Optional[int]) -> int:
    return -1 if bound is None else bound


def _used(value: object) -> int:
    usage = getattr(value, "usage", None)
    if usage is not None:
        value = usage.current_calls
        if value is None:
            raise ParameterError("account information has no usage.current_calls to seed from", parameter="used")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParameterError(f"seed: expected calls used (an integer >= 0), got {value!r}", parameter="used")
    return value


def _draw(row: Any) -> BudgetDraw:
    granted, now_ms, month, minute_used, month_used = (int(v) for v in row)
    return BudgetDraw(bool(granted), now_ms, month, minute_used, month_used)

