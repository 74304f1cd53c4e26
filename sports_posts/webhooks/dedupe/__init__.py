"""Dedupe stores: process each story once although the service retries a delivery up to 6 times.

A key is claimed (``processing``) for a short *lease*, then completed (``done``) for a long
*ttl*. The lease is what makes a claim held by a worker that died expire, so that a later
retry is processed; the ttl outlives the whole retry horizon (spec 6.5: about 31 minutes
over 6 attempts; the default keeps keys for 48 hours, so a dashboard re-send is caught too).

Each store remembers the token of the claims it made, so a worker whose lease expired
cannot complete or release a claim that another worker now holds.
"""

from __future__ import annotations

import itertools
import logging
import os
import sqlite3
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from typing_extensions import Protocol, runtime_checkable

from .. import _checks
from .._errors import ParameterError
from .._stores.redis import Name, Redis
from .._stores.sqlite import thread_connection, typed_errors
from .errors import StoreDataLostError

if TYPE_CHECKING:
    from os import PathLike

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_TTL",
    "AsyncDedupeStore",
    "DedupeStore",
    "MemoryDedupeStore",
    "RedisDedupeStore",
    "SQLiteDedupeStore",
]

logger: logging.Logger = logging.getLogger("sports_posts.webhooks")

DEFAULT_TTL = 48 * 3600.0
"""Seconds a completed key is remembered: far beyond the ~31 minute retry horizon."""
DEFAULT_LEASE = 300.0
"""Seconds a claim survives without ``complete``/``release``: a dead worker's claim then lapses.

Shorter than the gaps between the later retries (4, 8, 16 minutes), so a retry after a crash
is still processed; longer than a receiver needs between claim and answer.
"""

Clock = Callable[[], float]


@runtime_checkable
class DedupeStore(Protocol):
    """What [`WebhookReceiver`][sports_posts.webhooks.WebhookReceiver] needs from a store; write your own against this."""

    def claim(self, key: str) -> bool:
        """Atomically claim ``key``; true only for the first claimant (or after its lease lapsed)."""
        ...

    def complete(self, key: str) -> None:
        """Mark ``key`` done: every later claim fails until the ttl passes."""
        ...

    def release(self, key: str) -> None:
        """Free a claim whose processing failed, so that the next retry is processed."""
        ...

    def is_complete(self, key: str) -> bool:
        """Whether ``key`` is done (as opposed to claimed and still in flight)."""
        ...


@runtime_checkable
class AsyncDedupeStore(Protocol):
    """A store with a native async path: ``WebhookReceiver.handle_async`` awaits these
    instead of sending the sync methods to a thread. Stores whose I/O blocks (SQLite) leave
    them out and are offloaded."""

    async def aclaim(self, key: str) -> bool: ...

    async def acomplete(self, key: str) -> None: ...

    async def arelease(self, key: str) -> None: ...

    async def ais_complete(self, key: str) -> bool: ...


class _Tokens:
    """Claim tokens unique across processes and hosts: one random prefix per store, then a
    counter (a uuid4 per claim costs a system call on the hot path)."""

    def __init__(self) -> None:
        self._prefix = uuid.uuid4().hex[:16]
        self._counter = itertools.count(1)

    def __call__(self) -> str:
        return f"{self._prefix}{next(self._counter):x}"


MAX_TTL = 366 * 86400.0
"""The longest ``ttl``/``retention``: a year; a lease is at most a day (``_checks.ONE_DAY``)."""


def _check_durations(ttl: float, lease: float, *, ttl_name: str = "ttl") -> tuple[float, float]:
    """A store's memory and lease in seconds: finite, above 0, bounded (nan, inf refused)."""
    return _checks.seconds(ttl_name, ttl, maximum=MAX_TTL), _checks.seconds("lease", lease)


class MemoryDedupeStore:
    """In-process store for one worker process and tests; forgets everything on restart."""

    def __init__(
        self, *, ttl: float = DEFAULT_TTL, lease: float = DEFAULT_LEASE, clock: Clock = time.time
    ) -> None:
        self.ttl: float
        self.lease: float
        self.ttl, self.lease = _check_durations(ttl, lease)
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[str, float]] = {}  # key -> ("p" or "", expires_at)
        self._next_sweep = 0.0

    def __repr__(self) -> str:
        return f"MemoryDedupeStore(ttl={self.ttl:g}, lease={self.lease:g}, keys={len(self._entries)})"

    def claim(self, key: str) -> bool:
        now = self._clock()
        with self._lock:
            if now >= self._next_sweep:
                self._sweep(now)
            entry = self._entries.get(key)
            if entry is not None and entry[1] > now:
                return False
            # "p" marks a claim in flight ("" a done key); release() compares nothing more,
            # so a per-claim token would cost without protecting anything here.
            self._entries[key] = ("p", now + self.lease)
            return True

    def complete(self, key: str) -> None:
        with self._lock:
            self._entries[key] = ("", self._clock() + self.ttl)

    def release(self, key: str) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0]:  # only a claim in flight, never a done key
                del self._entries[key]

    def is_complete(self, key: str) -> bool:
        with self._lock:
            entry = self._entries.get(key)
            return entry is not None and entry[0] == "" and entry[1] > self._clock()

    # Memory never blocks: the async path is the sync one, without a thread hop.

    async def aclaim(self, key: str) -> bool:
        """``claim``, for ``WebhookReceiver.handle_async``."""
        return self.claim(key)

    async def acomplete(self, key: str) -> None:
        """``complete``, for ``WebhookReceiver.handle_async``."""
        self.complete(key)

    async def arelease(self, key: str) -> None:
        """``release``, for ``WebhookReceiver.handle_async``."""
        self.release(key)

    async def ais_complete(self, key: str) -> bool:
        """``is_complete``, for ``WebhookReceiver.handle_async``."""
        return self.is_complete(key)

    def _sweep(self, now: float) -> None:
        self._next_sweep = now + min(self.lease, 60.0)
        for key in [k for k, (_, expires) in self._entries.items() if expires <= now]:
            del self._entries[key]


class SQLiteDedupeStore:
    """A store in one SQLite file (WAL): survives a restart, shared by threads and processes.

    Every operation is a single statement, so it is atomic across processes; one connection
    is opened per thread and per process (a forked child opens its own).
    """

    @typed_errors
    def __init__(
        self,
        path: Union[str, PathLike[str]],
        *,
        ttl: float = DEFAULT_TTL,
        lease: float = DEFAULT_LEASE,
        clock: Clock = time.time,
        busy_timeout: float = 30.0,
    ) -> None:
        self.ttl: float
        self.lease: float
        self.ttl, self.lease = _check_durations(ttl, lease)
        _checks.seconds("busy_timeout", busy_timeout)
        self.path: str = os.fspath(path)
        if self.path == ":memory:":
            raise ParameterError(
                "SQLiteDedupeStore needs a file shared by its connections; use MemoryDedupeStore",
                parameter="path",
            )
        self._clock = clock
        self._busy_timeout = busy_timeout
        self._local = threading.local()
        self._tokens: dict[str, str] = {}
        self._new_token = _Tokens()
        self._tokens_lock = threading.Lock()
        self._claims_since_sweep = 0
        with self._connect() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS webhook_claims ("
                " key TEXT PRIMARY KEY, token TEXT NOT NULL, expires_at REAL NOT NULL)"
            )

    def __repr__(self) -> str:
        return f"SQLiteDedupeStore({self.path!r}, ttl={self.ttl:g}, lease={self.lease:g})"

    def _connect(self) -> sqlite3.Connection:
        return thread_connection(self._local, self.path, self._busy_timeout, "NORMAL")

    @typed_errors
    def claim(self, key: str) -> bool:
        now = self._clock()
        token = self._new_token()
        conn = self._connect()
        # One UPSERT: inserts a new claim, or takes over one whose lease or ttl has passed.
        cursor = conn.execute(
            "INSERT INTO webhook_claims (key, token, expires_at) VALUES (?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at"
            " WHERE webhook_claims.expires_at <= ?",
            (key, token, now + self.lease, now),
        )
        claimed = cursor.rowcount == 1
        if claimed:
            with self._tokens_lock:
                self._tokens[key] = token
            self._maybe_sweep(conn, now)
        return claimed

    @typed_errors
    def complete(self, key: str) -> None:
        token = self._pop_token(key)
        expires = self._clock() + self.ttl
        conn = self._connect()
        if token is None:
            conn.execute(
                "INSERT INTO webhook_claims (key, token, expires_at) VALUES (?, '', ?)"
                " ON CONFLICT (key) DO UPDATE SET token = '', expires_at = excluded.expires_at",
                (key, expires),
            )
            return
        cursor = conn.execute(
            "UPDATE webhook_claims SET token = '', expires_at = ? WHERE key = ? AND token = ?",
            (expires, key, token),
        )
        if cursor.rowcount == 0:
            logger.warning("completed %s after its lease lapsed; another worker may process it too", key)
            conn.execute(
                "INSERT INTO webhook_claims (key, token, expires_at) VALUES (?, '', ?)"
                " ON CONFLICT (key) DO UPDATE SET token = '', expires_at = excluded.expires_at",
                (key, expires),
            )

    @typed_errors
    def release(self, key: str) -> None:
        token = self._pop_token(key)
        conn = self._connect()
        if token is None:
            conn.execute("DELETE FROM webhook_claims WHERE key = ? AND token != ''", (key,))
        else:
            conn.execute("DELETE FROM webhook_claims WHERE key = ? AND token = ?", (key, token))

    @typed_errors
    def is_complete(self, key: str) -> bool:
        row = self._connect().execute(
            "SELECT 1 FROM webhook_claims WHERE key = ? AND token = '' AND expires_at > ?",
            (key, self._clock()),
        ).fetchone()
        return row is not None

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        conn: Optional[sqlite3.Connection] = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _pop_token(self, key: str) -> Optional[str]:
        with self._tokens_lock:
            return self._tokens.pop(key, None)

    def _maybe_sweep(self, conn: sqlite3.Connection, now: float) -> None:
        self._claims_since_sweep += 1
        if self._claims_since_sweep >= 1000:
            self._claims_since_sweep = 0
            conn.execute("DELETE FROM webhook_claims WHERE expires_at <= ?", (now,))


# Value of a key: "p:<token>" while claimed, "d" once done. Every script first checks the
# store's marker key (KEYS[1]), so that each step and the check are one atomic statement:
# ARGV[1] is the marker value this store saw before ('' on its first call, which writes
# ARGV[2] when the marker is absent). A marker missing or replaced means Redis lost its data.
_MARKER = """
local m = redis.call('GET', KEYS[1])
if m == false then
  if ARGV[1] ~= '' then return {-1, ''} end
  m = ARGV[2]
  redis.call('SET', KEYS[1], m)
elseif ARGV[1] ~= '' and m ~= ARGV[1] then
  return {-1, m}
end
"""
_CLAIM = _MARKER + """
if redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ARGV[4]) then return {1, m} end
return {0, m}
"""
_COMPLETE = _MARKER + """
local v = redis.call('GET', KEYS[2])
redis.call('SET', KEYS[2], 'd', 'PX', ARGV[4])
if ARGV[3] ~= '' and v ~= false and v ~= 'p:' .. ARGV[3] and v ~= 'd' then return {0, m} end
return {1, m}
"""
_RELEASE = _MARKER + """
local v = redis.call('GET', KEYS[2])
if v == false or v == 'd' then return {0, m} end
if ARGV[3] == '' or v == 'p:' .. ARGV[3] then return {redis.call('DEL', KEYS[2]), m} end
return {0, m}
"""
_IS_COMPLETE = _MARKER + """
if redis.call('GET', KEYS[2]) == 'd' then return {1, m} end
return {0, m}
"""
_SCRIPTS = {"claim": _CLAIM, "complete": _COMPLETE, "release": _RELEASE, "is_complete": _IS_COMPLETE}


class RedisDedupeStore:
    """A store in Redis (extra ``redis``): ``SET NX PX`` claims, shared by every host of a fleet.

    Expiry is Redis's own, so lease and ttl need no clock here. ``client_or_url`` is a
    ``redis://`` URL (``redis+cluster://``, ``redis+sentinel://`` too) or a client: a
    ``redis.Redis`` (a Sentinel's ``master_for`` included) or a ``redis.cluster.RedisCluster``. ``aclaim`` and its siblings use
    ``redis.asyncio`` (``async_client``, or one made from the URL or the client's settings),
    so ``WebhookReceiver.handle_async`` makes no thread hop. A client made here from a URL
    has ``socket_timeout`` (seconds) as its socket and connect timeouts.

    A marker key (``<prefix>__marker__``, no expiry) is written on first use; each operation
    checks it in the same script. When it is gone or replaced, Redis lost its data (restarted
    without persistence, flushed, evicted) and completed stories would be processed again:
    operations raise ``StoreDataLostError`` instead, until ``acknowledge_data_loss``.
    Every Redis failure is a ``StoreError`` (a ``StoreUnavailableError``), never a raw
    ``redis`` exception.
    """

    def __init__(
        self,
        client_or_url: Any,
        *,
        prefix: str = "sports_posts:webhooks:",
        ttl: float = DEFAULT_TTL,
        lease: float = DEFAULT_LEASE,
        async_client: Any = None,
        socket_timeout: float = 10.0,
    ) -> None:
        self.ttl: float
        self.lease: float
        self.ttl, self.lease = _check_durations(ttl, lease)
        self._redis = Redis("RedisDedupeStore", client_or_url, socket_timeout=socket_timeout,
                            async_client=async_client)
        self.prefix = prefix
        self._marker = prefix + "__marker__"
        self._candidate = uuid.uuid4().hex  # the marker value this store writes when it is absent
        self._epoch = ""  # the marker value seen; '' until the first call
        self._tokens: dict[str, str] = {}
        self._new_token = _Tokens()
        self._tokens_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RedisDedupeStore({self._redis!r}, prefix={self.prefix!r}, ttl={self.ttl:g}, lease={self.lease:g})"

    def _key(self, key: str) -> str:
        return self.prefix + key

    # -- one step, sync or async: the arguments and the reading of the answer are shared --

    def _args(self, op: str, key: str) -> tuple[list[str], list[Any]]:
        if op == "claim":
            token = self._new_token()
            extra: list[Any] = ["p:" + token, int(self.lease * 1000)]
        elif op in ("complete", "release"):
            with self._tokens_lock:
                token = self._tokens.pop(key, "")
            extra = [token, int(self.ttl * 1000)]
        else:
            extra = ["", 0]
        # One hash tag on a cluster ({prefix}...): the marker and the key share a slot.
        return [Name(self.prefix, "__marker__"), Name(self.prefix, key)], [self._epoch, self._candidate, *extra]

    def _read(self, op: str, key: str, args: list[Any], answer: Any) -> bool:
        code, marker = int(answer[0]), answer[1]
        if code < 0:
            logger.error(
                "Redis lost the dedupe state under %r (marker missing or replaced): refusing %s of %s "
                "rather than processing stories twice", self.prefix, op, key,
            )
            raise StoreDataLostError(
                f"Redis lost the dedupe state under {self.prefix!r} (restarted without persistence, "
                "flushed or evicted); call acknowledge_data_loss() once it is dealt with"
            )
        if not self._epoch:
            self._epoch = marker.decode() if isinstance(marker, bytes) else str(marker)
        if op == "claim" and code:
            with self._tokens_lock:
                self._tokens[key] = args[2][2:]
        if op == "complete" and not code:
            logger.warning("completed %s after its lease lapsed; another worker may process it too", key)
        return bool(code)

    def _call(self, op: str, key: str) -> bool:
        keys, args = self._args(op, key)
        return self._read(op, key, args, self._redis.execute(_SCRIPTS[op], keys, args))

    async def _acall(self, op: str, key: str) -> bool:
        keys, args = self._args(op, key)
        return self._read(op, key, args, await self._redis.aexecute(_SCRIPTS[op], keys, args))

    # -- the store protocol --------------------------------------------------------------

    def claim(self, key: str) -> bool:
        return self._call("claim", key)

    def complete(self, key: str) -> None:
        self._call("complete", key)

    def release(self, key: str) -> None:
        self._call("release", key)

    def is_complete(self, key: str) -> bool:
        return self._call("is_complete", key)

    async def aclaim(self, key: str) -> bool:
        """``claim`` on ``redis.asyncio``."""
        return await self._acall("claim", key)

    async def acomplete(self, key: str) -> None:
        """``complete`` on ``redis.asyncio``."""
        await self._acall("complete", key)

    async def arelease(self, key: str) -> None:
        """``release`` on ``redis.asyncio``."""
        await self._acall("release", key)

    async def ais_complete(self, key: str) -> bool:
        """``is_complete`` on ``redis.asyncio``."""
        return await self._acall("is_complete", key)

    def claim_many(self, keys: list[str]) -> list[bool]:
        """Claim several keys in one round trip (a pipeline of claim scripts); each result is
        what ``claim`` would have answered for that key. For batch consumers such as an
        inbox drain; not atomic across keys, which ``claim`` never was either."""
        if self._redis.ready():  # a cluster's pipeline has no script cache: one call each
            return [self.claim(key) for key in keys]
        calls = [(key, *self._args("claim", key)) for key in keys]
        with self._redis.errors():
            client = self._redis.client()
            script = self._redis.script(client, _CLAIM)
            pipe = client.pipeline(transaction=False)
            for _, call_keys, args in calls:
                script(keys=self._redis.names(call_keys), args=args, client=pipe)
            answers = pipe.execute()
        return [self._read("claim", key, args, answer) for (key, _, args), answer in zip(calls, answers)]

    def acknowledge_data_loss(self) -> None:
        """Accept that Redis lost its data and carry on: the next call writes a new marker
        (or adopts the one another process wrote). Stories completed before the loss may be
        processed again."""
        logger.warning("data loss under %r acknowledged: stories may be processed again", self.prefix)
        self._epoch = ""

    def close(self) -> None:
        """Close the client made from a URL (a client passed in stays open)."""
        self._redis.close()

    async def aclose(self) -> None:
        """Close the ``redis.asyncio`` client of the running loop made by this store."""
        await self._redis.aclose()
