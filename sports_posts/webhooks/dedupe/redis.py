"""A dedupe store in Redis (extra ``redis``): ``SET NX PX`` claims, shared by every host of a fleet."""

from __future__ import annotations

import logging
import threading
import uuid
from typing import TYPE_CHECKING, Any, Callable, Optional

from ... import _scoped
from ..._stores.redis import Name, Redis
from .._store import DEFAULT_LEASE, DEFAULT_TTL, ClaimStatus, ClaimTokens, check_ttl_and_lease
from ..errors import StoreDataLostError

if TYPE_CHECKING:
    from ..._stores import AsyncRedisClient, RedisTarget

logger: logging.Logger = logging.getLogger("sports_posts.webhooks")

Clock = Callable[[], float]

__all__ = ["RedisDedupeStore"]


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
# A claim as it stands, read only (no marker written): {value or false, milliseconds left}.
_STATUS = """
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}
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
        client_or_url: RedisTarget,
        *,
        prefix: str = "sports_posts:webhooks:",
        ttl: float = DEFAULT_TTL,
        lease: float = DEFAULT_LEASE,
        async_client: Optional[AsyncRedisClient] = None,
        socket_timeout: float = 10.0,
    ) -> None:
        self.ttl: float
        self.lease: float
        self.ttl, self.lease = check_ttl_and_lease(ttl, lease)
        self._redis = Redis("RedisDedupeStore", client_or_url, socket_timeout=socket_timeout,
                            async_client=async_client)
        self.prefix = prefix
        self._marker = prefix + "__marker__"
        self._candidate = uuid.uuid4().hex  # the marker value this store writes when it is absent
        self._epoch = ""  # the marker value seen; '' until the first call
        self._tokens: dict[str, str] = {}
        self._new_token = ClaimTokens()
        self._tokens_lock = _scoped.PerProcess(threading.Lock)  # a parent's thread may hold it at a fork

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
            with self._tokens_lock.get():
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
            with self._tokens_lock.get():
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

    def claim_status(self, key: str) -> ClaimStatus:
        """The story's claim as it stands (``sports-posts claim status``); reads, changes nothing."""
        value, left = self._redis.execute(_STATUS, [Name(self.prefix, key)], [])
        if isinstance(value, bytes):
            value = value.decode()
        expires_in = int(left) / 1000 if left is not None and int(left) >= 0 else None
        if not value:
            return ClaimStatus(key, "none")
        return ClaimStatus(key, "done" if value == "d" else "claimed", expires_in)

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
