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

from .._errors import ParameterError
from ._sqlite import thread_connection

if TYPE_CHECKING:
    from os import PathLike

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_TTL",
    "DedupeStore",
    "MemoryDedupeStore",
    "RedisDedupeStore",
    "SQLiteDedupeStore",
]

logger = logging.getLogger("sports_posts.webhooks")

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


class _Tokens:
    """Claim tokens unique across processes and hosts: one random prefix per store, then a
    counter (a uuid4 per claim costs a system call on the hot path)."""

    def __init__(self) -> None:
        self._prefix = uuid.uuid4().hex[:16]
        self._counter = itertools.count(1)

    def __call__(self) -> str:
        return f"{self._prefix}{next(self._counter):x}"


def _check_durations(ttl: float, lease: float) -> tuple[float, float]:
    for name, value in (("ttl", ttl), ("lease", lease)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ParameterError(f"{name} must be a positive number of seconds", parameter=name)
    return float(ttl), float(lease)


class MemoryDedupeStore:
    """In-process store for one worker process and tests; forgets everything on restart."""

    def __init__(
        self, *, ttl: float = DEFAULT_TTL, lease: float = DEFAULT_LEASE, clock: Clock = time.time
    ) -> None:
        self.ttl, self.lease = _check_durations(ttl, lease)
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[str, float]] = {}  # key -> (token or "", expires_at)
        self._tokens = itertools.count(1)
        self._next_sweep = 0.0

    def __repr__(self) -> str:
        return f"MemoryDedupeStore(ttl={self.ttl:g}, lease={self.lease:g}, keys={len(self._entries)})"

    def claim(self, key: str) -> bool:
        now = self._clock()
        with self._lock:
            self._sweep(now)
            entry = self._entries.get(key)
            if entry is not None and entry[1] > now:
                return False
            # A per-store counter is as unique as a uuid inside one process, and no syscall.
            self._entries[key] = (str(next(self._tokens)), now + self.lease)
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

    def _sweep(self, now: float) -> None:
        if now < self._next_sweep:
            return
        self._next_sweep = now + min(self.lease, 60.0)
        for key in [k for k, (_, expires) in self._entries.items() if expires <= now]:
            del self._entries[key]


class SQLiteDedupeStore:
    """A store in one SQLite file (WAL): survives a restart, shared by threads and processes.

    Every operation is a single statement, so it is atomic across processes; one connection
    is opened per thread and per process (a forked child opens its own).
    """

    def __init__(
        self,
        path: Union[str, PathLike[str]],
        *,
        ttl: float = DEFAULT_TTL,
        lease: float = DEFAULT_LEASE,
        clock: Clock = time.time,
        busy_timeout: float = 30.0,
    ) -> None:
        self.ttl, self.lease = _check_durations(ttl, lease)
        self.path = os.fspath(path)
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

    def release(self, key: str) -> None:
        token = self._pop_token(key)
        conn = self._connect()
        if token is None:
            conn.execute("DELETE FROM webhook_claims WHERE key = ? AND token != ''", (key,))
        else:
            conn.execute("DELETE FROM webhook_claims WHERE key = ? AND token = ?", (key, token))

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


# Value of a key: "p:<token>" while claimed, "d" once done. Scripts keep each step atomic.
_COMPLETE = """
local v = redis.call('GET', KEYS[1])
if ARGV[1] ~= '' and v ~= false and v ~= 'p:' .. ARGV[1] and v ~= 'd' then
  redis.call('SET', KEYS[1], 'd', 'PX', ARGV[2])
  return 0
end
redis.call('SET', KEYS[1], 'd', 'PX', ARGV[2])
return 1
"""
_RELEASE = """
local v = redis.call('GET', KEYS[1])
if v == false or v == 'd' then return 0 end
if ARGV[1] == '' or v == 'p:' .. ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisDedupeStore:
    """A store in Redis (extra ``redis``): ``SET NX PX`` claims, shared by every host of a fleet.

    Expiry is Redis's own, so lease and ttl need no clock here. ``client_or_url`` is a
    ``redis.Redis`` client or a ``redis://`` URL.
    """

    def __init__(
        self,
        client_or_url: Any,
        *,
        prefix: str = "sports_posts:webhooks:",
        ttl: float = DEFAULT_TTL,
        lease: float = DEFAULT_LEASE,
    ) -> None:
        self.ttl, self.lease = _check_durations(ttl, lease)
        if isinstance(client_or_url, str):
            try:
                import redis
            except ImportError:  # pragma: no cover - the extra is installed in CI
                raise ParameterError(
                    "RedisDedupeStore needs the redis extra: pip install 'sports-posts[redis]'",
                    parameter="client_or_url",
                ) from None
            self._client: Any = redis.Redis.from_url(client_or_url)
        else:
            self._client = client_or_url
        self.prefix = prefix
        self._tokens: dict[str, str] = {}
        self._new_token = _Tokens()
        self._tokens_lock = threading.Lock()
        self._complete = self._client.register_script(_COMPLETE)
        self._release = self._client.register_script(_RELEASE)

    def __repr__(self) -> str:
        # Only host, port and db: a URL may carry a password.
        kwargs: dict[str, Any] = {}
        try:
            kwargs = dict(self._client.connection_pool.connection_kwargs)
        except AttributeError:
            pass
        where = f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"
        return f"RedisDedupeStore({where!r}, prefix={self.prefix!r}, ttl={self.ttl:g}, lease={self.lease:g})"

    def _key(self, key: str) -> str:
        return self.prefix + key

    def claim(self, key: str) -> bool:
        token = self._new_token()
        ok = self._client.set(self._key(key), "p:" + token, nx=True, px=int(self.lease * 1000))
        if ok:
            with self._tokens_lock:
                self._tokens[key] = token
        return bool(ok)

    def claim_many(self, keys: list[str]) -> list[bool]:
        """Claim several keys in one round trip (a pipeline of ``SET NX PX``); each result is
        what [`claim`][sports_posts.webhooks.DedupeStore.claim] would have answered for that key. For batch consumers such as an
        inbox drain; not atomic across keys, which ``claim`` never was either."""
        tokens = [self._new_token() for _ in keys]
        pipe = self._client.pipeline(transaction=False)
        for key, token in zip(keys, tokens):
            pipe.set(self._key(key), "p:" + token, nx=True, px=int(self.lease * 1000))
        results = [bool(ok) for ok in pipe.execute()]
        with self._tokens_lock:
            for key, token, ok in zip(keys, tokens, results):
                if ok:
                    self._tokens[key] = token
        return results

    def complete(self, key: str) -> None:
        with self._tokens_lock:
            token = self._tokens.pop(key, "")
        fresh = self._complete(keys=[self._key(key)], args=[token, int(self.ttl * 1000)])
        if not fresh:
            logger.warning("completed %s after its lease lapsed; another worker may process it too", key)

    def release(self, key: str) -> None:
        with self._tokens_lock:
            token = self._tokens.pop(key, "")
        self._release(keys=[self._key(key)], args=[token])

    def is_complete(self, key: str) -> bool:
        value = self._client.get(self._key(key))
        return value in (b"d", "d")

    def close(self) -> None:
        """Close the client's connections."""
        self._client.close()
