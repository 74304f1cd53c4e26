"""``Lease``: at most one live poller per feed in the whole fleet, on Redis or PostgreSQL.

A lease is not a lock: a paused process can wake up after its lease expired and another
took over. So every lease taken comes with a fencing token, a number that only grows, and
the checkpoint refuses a save carrying a token lower than one it has seen (Kleppmann, "How
to do distributed locking"). Expiry follows the store's clock (Redis ``PX``, PostgreSQL
``clock_timestamp()``), never a machine's.

On PostgreSQL a lease *row* (holder, expiry, token) is used rather than an advisory lock:
an advisory lock belongs to a session, so a paused process keeps it for as long as its
connection lives (no expiry, no takeover), and a transaction-mode pooler breaks it.
"""

from __future__ import annotations

import functools
import os
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional

from .. import _scoped, _telemetry
from .._errors import ParameterError
from .._stores import runner_for
from .._stores.redis import Name
from ._state import CheckpointError

if TYPE_CHECKING:
    from .._stores import StoreTarget

__all__ = ["FEED_KEY", "Lease", "LeaseLostError", "LeaseStatus", "checked_key", "fenced_out"]

FEED_KEY = "sports_posts:poll"
"""The default key of a ``Lease`` and of the Redis and PostgreSQL checkpoints: one per feed."""


class LeaseLostError(CheckpointError):
    """This poller no longer holds its lease (or its fencing token is older than the one the
    checkpoint has seen): another poller took the feed over, or the store could not say
    (``store_failed``: it was unreachable when the lease was due for renewal, so this poller
    cannot prove it still holds it). It stopped before delivering or saving anything; the
    batch it held, if any, is delivered again by the next holder."""

    store_failed: bool = False
    """True when the store failed rather than another poller taking the lease: a worker
    logs "the store is down" rather than "another worker took over"."""


def checked_key(key: object, owner: str, error: Callable[[str], Exception]) -> str:
    """``key``, once known to name a lease or a checkpoint: a non-empty string."""
    if not isinstance(key, str) or not key:
        raise error(f"{owner}: key must be a non-empty string")
    return key


def fenced_out(token: int) -> str:
    """Why a fenced checkpoint refused a save or a fence (the words of every store)."""
    return (
        f"fencing token {token} is older than the one stored: another poller took the lease "
        "over, so this one must not save (its batch is delivered again by the new holder)"
    )


# KEYS[1] = lease, KEYS[2] = fencing counter (never expires, so tokens only grow);
# ARGV[1] = holder, ARGV[2] = ttl in ms. SET NX PX takes a free lease atomically.
_REDIS_ACQUIRE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return tonumber(redis.call('GET', KEYS[2]) or '0')
end
return 0
"""
# Compare-and-pexpire: only the holder extends, and only a lease that has not expired.
_REDIS_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""
# Compare-and-delete: a holder never frees a lease another poller has taken since.
_REDIS_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# Who holds the lease, for how many more ms (-2: free), and the last token handed out.
_REDIS_STATUS = """
return {redis.call('GET', KEYS[1]) or '', redis.call('PTTL', KEYS[1]), tonumber(redis.call('GET', KEYS[2]) or '0')}
"""
# Free the lease whoever holds it; the fencing counter stays, so the next token is higher.
_REDIS_FORCE_RELEASE = """
return redis.call('DEL', KEYS[1])
"""

_PG_EXPIRY = "clock_timestamp() + %(ttl_ms)s * interval '1 millisecond'"
# Take a free or expired lease (a new token), or extend our own live one (the same token).
_PG_ACQUIRE = f"""
INSERT INTO sports_posts_leases AS l (key, holder, expires_at, token)
VALUES (%(key)s, %(holder)s, {_PG_EXPIRY}, 1)
ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at,
    token = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at > clock_timestamp()
                 THEN l.token ELSE l.token + 1 END
WHERE l.expires_at <= clock_timestamp() OR l.holder = EXCLUDED.holder
RETURNING token
"""
_PG_RENEW = f"""
UPDATE sports_posts_leases SET expires_at = {_PG_EXPIRY}
WHERE key = %(key)s AND holder = %(holder)s AND expires_at > clock_timestamp()
RETURNING token
"""
# The row stays (with its token) so the next holder's token is still higher.
_PG_RELEASE = """
UPDATE sports_posts_leases SET expires_at = '-infinity'
WHERE key = %(key)s AND holder = %(holder)s
RETURNING token
"""
_PG_STATUS = """
SELECT CASE WHEN expires_at > clock_timestamp() THEN holder END,
       CASE WHEN expires_at > clock_timestamp() THEN extract(epoch FROM expires_at - clock_timestamp()) END,
       token
FROM sports_posts_leases WHERE key = %(key)s
"""
_PG_FORCE_RELEASE = """
UPDATE sports_posts_leases SET expires_at = '-infinity'
WHERE key = %(key)s AND expires_at > clock_timestamp()
RETURNING token
"""


@dataclass(frozen=True)
class LeaseStatus:
    """Who holds a lease now (``Lease.status()``), read without changing anything.

    ``holder`` is the holder's ``Lease.holder`` (``None`` when the lease is free or expired),
    ``token`` the last fencing token handed out (0 if none yet) and ``expires_in`` the
    seconds left of the holder's lease in the store's clock (``None`` when free).
    """

    key: str
    holder: Optional[str]
    token: int
    expires_in: Optional[float]


def _holder_name() -> str:
    import socket  # here, not at import: most pollers run without a lease

    return f"{socket.gethostname()}:{os.getpid()}:{os.urandom(4).hex()}"


def _forked(lease: weakref.ref[Lease]) -> None:
    """In a forked child: another holder, holding nothing (the parent's lease stays the parent's)."""
    owner = lease()
    if owner is not None:
        owner.holder, owner.token = _holder_name(), None


class Lease:
    """One poller per ``key`` across every process that names the same store and key.

    Pass it as ``lease=`` to ``sports_posts.Poller`` or
    ``sports_posts.AsyncPoller`` together with a checkpoint that checks fencing
    tokens (``sports_posts.RedisCheckpoint`` or
    ``sports_posts.polling.PostgresCheckpoint``). ``store`` is a ``redis://`` or
    ``postgresql://`` URL or a client the customer already has. ``ttl`` (seconds) is how long
    a dead holder blocks the feed; the holder renews every ``ttl / 3``. A call to a store
    that froze or went away ends within ``connect_timeout + statement_timeout`` seconds (on
    Redis the second is the socket timeout): 4 s by default, under the default ``ttl / 3``
    (5 s); keep their sum under ``ttl / 3``.
    """

    def __init__(
        self, store: StoreTarget, *, key: str = FEED_KEY, ttl: float = 15.0,
        connect_timeout: float = 2.0, statement_timeout: float = 2.0,
    ) -> None:
        # ``key`` is the checkpoint's key: one lease per feed, as one checkpoint per feed.
        self.key: str = checked_key(key, "Lease", functools.partial(ParameterError, parameter="key"))
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0.1 <= ttl <= 86400:
            raise ParameterError(f"Lease: ttl must be seconds between 0.1 and 86400, got {ttl!r}", parameter="ttl")
        self.ttl: float = float(ttl)
        self.holder: str = _holder_name()
        """This ``Lease``'s name in the store while it holds the lease: host, process id and
        a random suffix (what ``status().holder`` shows, and what logs can print). A forked
        child gets a name of its own: it does not hold its parent's lease."""
        self.token: Optional[int] = None
        """The fencing token of the lease held, ``None`` while not held: the number the
        checkpoint compares, growing with every new holder (log it with the holder)."""
        self._fork_handle = _scoped.on_fork(functools.partial(_forked, weakref.ref(self)))
        self._runner = runner_for(store, owner=f"Lease {key!r}", connect_timeout=connect_timeout,
                                  statement_timeout=statement_timeout)

    def __repr__(self) -> str:
        return f"Lease({self._runner!r}, key={self.key!r}, ttl={self.ttl}, token={self.token})"

    @property
    def renew_every(self) -> float:
        """Seconds between renewals while the poller waits: a third of the TTL, so one
        failed renewal still leaves time for the next before the lease expires."""
        return self.ttl / 3

    def _statement(self, which: str) -> tuple[str, tuple[str, ...], Any]:
        ttl_ms = int(self.ttl * 1000)
        if self._runner.engine == "redis":
            source = {"acquire": _REDIS_ACQUIRE, "renew": _REDIS_RENEW, "release": _REDIS_RELEASE,
                      "status": _REDIS_STATUS, "force_release": _REDIS_FORCE_RELEASE}[which]
            # Beside the checkpoint of the same key, never on it: "<key>:lease" and "<key>:fence"
            # ("{<key>}:lease" and "{<key>}:fence" on a cluster, one slot for the script).
            return source, (Name(self.key, ":lease"), Name(self.key, ":fence")), (self.holder, ttl_ms)
        sql = {"acquire": _PG_ACQUIRE, "renew": _PG_RENEW, "release": _PG_RELEASE,
               "status": _PG_STATUS, "force_release": _PG_FORCE_RELEASE}[which]
        return sql, (), {"key": self.key, "holder": self.holder, "ttl_ms": ttl_ms}

    def _answer(self, which: str, reply: Any) -> Any:
        """The meaning of a store's reply: the token taken, whether a renewal held."""
        if which == "status":
            return self._status(reply)
        if which == "force_release":
            held = bool(reply) if self._runner.engine == "redis" else reply is not None
            if held:
                self.token = None
            return held
        if self._runner.engine == "redis":
            value = int(reply or 0)
        else:
            value = 0 if reply is None else int(reply[0])
        if which == "acquire":
            before, self.token = self.token, value or None  # known before any hook runs
            _telemetry.lease_taken(self.key, before, value)
            return self.token
        if which == "renew":
            if not value:
                self.token = None
                _telemetry.lease_changed(self.key, "lost")
            return bool(value)
        self.token = None
        return None

    def _run(self, which: str) -> Any:
        return self._answer(which, self._runner.execute(*self._statement(which)))

    async def _run_async(self, which: str) -> Any:
        return self._answer(which, await self._runner.aexecute(*self._statement(which)))

    def acquire(self) -> Optional[int]:
        """Take the lease if it is free or expired: its fencing token, or ``None`` while
        another poller holds it."""
        result: Optional[int] = self._run("acquire")
        return result

    async def acquire_async(self) -> Optional[int]:
        result: Optional[int] = await self._run_async("acquire")
        return result

    def renew(self) -> bool:
        """Extend the lease by ``ttl``; ``False`` when it expired or another poller holds it."""
        return bool(self._run("renew"))

    async def renew_async(self) -> bool:
        return bool(await self._run_async("renew"))

    def release(self) -> None:
        """Free the lease at once (a standby takes over without waiting for the TTL)."""
        self._run("release")

    async def release_async(self) -> None:
        await self._run_async("release")

    def _status(self, reply: Any) -> LeaseStatus:
        if self._runner.engine == "redis":
            holder = reply[0].decode("utf-8", "replace") if isinstance(reply[0], bytes) else str(reply[0])
            pttl = int(reply[1])
            free = not holder or pttl < 0
            return LeaseStatus(self.key, None if free else holder, int(reply[2]),
                               None if free else pttl / 1000)
        if reply is None:
            return LeaseStatus(self.key, None, 0, None)
        holder, left, token = reply
        return LeaseStatus(self.key, holder, int(token), None if left is None else float(left))

    def status(self) -> LeaseStatus:
        """Who holds the lease, for how long, and the last fencing token; changes nothing."""
        result: LeaseStatus = self._run("status")
        return result

    async def status_async(self) -> LeaseStatus:
        result: LeaseStatus = await self._run_async("status")
        return result

    def force_release(self) -> bool:
        """Free the lease whoever holds it (an operator's tool): ``True`` if one was held.

        The fencing counter is kept, so the next holder gets a higher token and the old
        holder's saves are refused (``LeaseLostError``) once the new one has fenced.
        """
        return bool(self._run("force_release"))

    async def force_release_async(self) -> bool:
        return bool(await self._run_async("force_release"))

    def close(self) -> None:
        """Close the connection made from a URL."""
        self._runner.close()

    async def aclose(self) -> None:
        await self._runner.aclose()
