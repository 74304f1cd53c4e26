"""The Redis inbox (extra ``redis``): Redis Streams with a consumer group, the Redis docs' own pattern.

Receivers on many machines ``XADD`` a story's key; workers read with ``XREADGROUP``,
acknowledge with ``XACK``, and take over a dead worker's entries with ``XAUTOCLAIM`` once
they have been idle for the lease. A failed entry waits in a sorted set for its backoff;
one failed or delivered too often goes to a dead-letter stream. Each step is one Lua
script, so it is atomic; every key shares one hash tag, so it also runs on Redis Cluster.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, Optional

from ... import _scoped, _utils
from ..._errors import ParameterError
from ..._stores.redis import Name, Redis
from .._store import (
    DEFAULT_LEASE,
    DEFAULT_TTL,
    InboxPolicy,
    check_body,
    check_key,
)
from ._entry import DEFAULT_BACKOFF, InboxEntry, InProgress

if TYPE_CHECKING:
    from ..._stores import RedisTarget

__all__ = ["RedisInbox"]

# ARGV[1] is the injected clock's time, or '' for the server's (one clock for the fleet).
_NOW = """
local function now()
  if ARGV[1] ~= '' then return tonumber(ARGV[1]) end
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
"""

# KEYS: entry, stream, counts. ARGV: now, key, body, delivery id.
_PUT = _NOW + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'body', ARGV[3], 'delivery_id', ARGV[4], 'state', 'pending',
  'attempts', 0, 'deliveries', 0, 'token', '', 'received_at', now(), 'last_error', '')
redis.call('XADD', KEYS[2], '*', 'k', ARGV[2])
redis.call('HINCRBY', KEYS[3], 'pending', 1)
return 1
"""

# KEYS: stream, retry, counts, dead. ARGV: now, group, consumer, limit, lease ms, max deliveries,
# token prefix, entry key prefix.
_TAKE = _NOW + """
local t = now()
local group, consumer, limit = ARGV[2], ARGV[3], tonumber(ARGV[4])
for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', t, 'LIMIT', 0, limit)) do
  redis.call('ZREM', KEYS[2], k)
  redis.call('XADD', KEYS[1], '*', 'k', k)
end
local msgs = {}
-- Entries idle longer than the lease belong to a worker that died (or stalled): take them over.
local stale = redis.call('XAUTOCLAIM', KEYS[1], group, consumer, ARGV[5], '0-0', 'COUNT', limit)
for _, m in ipairs(stale[2]) do table.insert(msgs, m) end
if #msgs < limit then
  local fresh = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', limit - #msgs, 'STREAMS', KEYS[1], '>')
  if fresh then for _, m in ipairs(fresh[1][2]) do table.insert(msgs, m) end end
end
local out = {}
for i, m in ipairs(msgs) do
  local id, k = m[1], m[2][2]
  local ek = ARGV[8] .. k
  local e = redis.call('HMGET', ek, 'state', 'deliveries', 'attempts', 'body', 'delivery_id', 'last_error')
  if e[1] ~= 'pending' and e[1] ~= 'processing' then
    redis.call('XACK', KEYS[1], group, id)  -- a leftover message of a finished entry
    redis.call('XDEL', KEYS[1], id)
  elseif tonumber(e[2]) >= tonumber(ARGV[6]) then
    local why = 'leased ' .. e[2] .. ' times without an outcome (workers died)'
    local dead_id = redis.call('XADD', KEYS[4], '*', 'k', k, 'error', why)
    redis.call('HSET', ek, 'state', 'dead', 'token', '', 'last_error', why, 'dead_id', dead_id)
    redis.call('HINCRBY', KEYS[3], e[1], -1)
    redis.call('HINCRBY', KEYS[3], 'dead', 1)
    redis.call('XACK', KEYS[1], group, id)
    redis.call('XDEL', KEYS[1], id)
  else
    local token = ARGV[7] .. ':' .. id
    redis.call('HSET', ek, 'state', 'processing', 'token', token, 'stream_id', id, 'deliveries', tonumber(e[2]) + 1)
    if e[1] == 'pending' then
      redis.call('HINCRBY', KEYS[3], 'pending', -1)
      redis.call('HINCRBY', KEYS[3], 'processing', 1)
    end
    table.insert(out, {k, e[4], e[5], e[3], 'processing', e[6], token})
  end
end
return out
"""

# KEYS: entry, stream, counts, done. ARGV: now, group, token, retention seconds, key.
_DONE = _NOW + """
local e = redis.call('HMGET', KEYS[1], 'state', 'token', 'stream_id')
if e[1] ~= 'processing' or e[2] ~= ARGV[3] then return 0 end  -- fenced: the lease moved on
redis.call('XACK', KEYS[2], ARGV[2], e[3])
redis.call('XDEL', KEYS[2], e[3])
redis.call('HSET', KEYS[1], 'state', 'done', 'body', '', 'token', '', 'last_error', '')
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('PEXPIRE', KEYS[1], math.floor(tonumber(ARGV[4]) * 1000))
redis.call('HINCRBY', KEYS[3], 'processing', -1)
redis.call('ZADD', KEYS[4], now() + tonumber(ARGV[4]), ARGV[5])
return 1
"""

# KEYS: entry, stream, counts, retry, dead. ARGV: now, group, token, key, error, permanent,
# max attempts, backoff seconds...
_FAIL = _NOW + """
local e = redis.call('HMGET', KEYS[1], 'state', 'token', 'stream_id', 'attempts')
if e[1] ~= 'processing' or e[2] ~= ARGV[3] then return '' end
local attempts = tonumber(e[4]) + 1
redis.call('XACK', KEYS[2], ARGV[2], e[3])
redis.call('XDEL', KEYS[2], e[3])
redis.call('HINCRBY', KEYS[3], 'processing', -1)
if ARGV[6] == '1' or attempts >= tonumber(ARGV[7]) then
  local dead_id = redis.call('XADD', KEYS[5], '*', 'k', ARGV[4], 'error', ARGV[5])
  redis.call('HSET', KEYS[1], 'state', 'dead', 'attempts', attempts, 'last_error', ARGV[5], 'token', '', 'dead_id', dead_id)
  redis.call('HINCRBY', KEYS[3], 'dead', 1)
  return 'dead'
end
local delay = tonumber(ARGV[math.min(7 + attempts, #ARGV)])
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', attempts, 'last_error', ARGV[5], 'token', '')
redis.call('ZADD', KEYS[4], now() + delay, ARGV[4])
redis.call('HINCRBY', KEYS[3], 'pending', 1)
return 'pending'
"""

# KEYS: entry, stream, counts, dead. ARGV: now, key.
_REQUEUE = _NOW + """
local e = redis.call('HMGET', KEYS[1], 'state', 'dead_id')
if e[1] ~= 'dead' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', 0, 'deliveries', 0)
redis.call('XADD', KEYS[2], '*', 'k', ARGV[2])
if e[2] then redis.call('XDEL', KEYS[4], e[2]) end
redis.call('HINCRBY', KEYS[3], 'dead', -1)
redis.call('HINCRBY', KEYS[3], 'pending', 1)
return 1
"""

# KEYS: counts, dead. ARGV: entry key prefix. Deletes every dead entry and the dead-letter stream.
_PURGE = """
local n = 0
for _, m in ipairs(redis.call('XRANGE', KEYS[2], '-', '+')) do
  local ek = ARGV[1] .. m[2][2]
  if redis.call('HGET', ek, 'state') == 'dead' then
    redis.call('DEL', ek)
    n = n + 1
  end
end
redis.call('DEL', KEYS[2])
if n > 0 then redis.call('HINCRBY', KEYS[1], 'dead', 0 - n) end
return n
"""

# KEYS: stream. ARGV: now, group, limit, entry key prefix, lease seconds.
# Returns {key, consumer, lease seconds left, attempts, deliveries} per entry a worker holds.
_ACTIVE = _NOW + """
local t = now()
local ok, held = pcall(redis.call, 'XPENDING', KEYS[1], ARGV[2], '-', '+', tonumber(ARGV[3]))
local out = {}
if not ok then return out end
for _, p in ipairs(held) do
  local m = redis.call('XRANGE', KEYS[1], p[1], p[1])
  if m[1] then
    local k = m[1][2][2]
    local e = redis.call('HMGET', ARGV[4] .. k, 'state', 'attempts', 'deliveries')
    if e[1] == 'processing' then
      local left = tonumber(ARGV[5]) - tonumber(p[3]) / 1000
      table.insert(out, {k, p[2], tostring(left), e[2] or '0', e[3] or '0'})
    end
  end
end
return out
"""

# KEYS: stream, retry. ARGV: now, group, entry key prefix. The seconds the oldest due entry
# has waited: the first stream entry the group has not read (since its entry was received, on
# the store's clock), or the oldest retry already due; 0 when none waits.
_LATENCY = _NOW + """
local t = now()
local waited = 0
local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', KEYS[1])
local last = '0-0'
if ok then
  for _, g in ipairs(groups) do
    for i = 1, #g, 2 do
      if g[i] == 'name' and g[i + 1] ~= ARGV[2] then break end
      if g[i] == 'last-delivered-id' then last = g[i + 1] end
    end
  end
end
local first = redis.call('XRANGE', KEYS[1], '(' .. last, '+', 'COUNT', 1)
if first[1] then
  local received = redis.call('HGET', ARGV[3] .. first[1][2][2], 'received_at')
  if received then waited = math.max(waited, t - tonumber(received)) end
end
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', t, 'WITHSCORES', 'LIMIT', 0, 1)
if due[2] then waited = math.max(waited, t - tonumber(due[2])) end
return tostring(waited)
"""

# KEYS: counts, done, retry, stream. ARGV: now, group, lease seconds.
# Returns {pending, processing, dead, done, next due or ''}.
_STATUS = _NOW + """
local t = now()
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', t)
local c = redis.call('HMGET', KEYS[1], 'pending', 'processing', 'dead')
local pending, processing = tonumber(c[1] or 0), tonumber(c[2] or 0)
local due = ''
if pending > redis.call('ZCARD', KEYS[3]) then
  due = tostring(t)  -- an entry waits in the stream: due now
else
  local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  if first[2] then due = first[2] end
end
if processing > 0 then
  local ok, held = pcall(redis.call, 'XPENDING', KEYS[4], ARGV[2], '-', '+', 100)
  if ok then
    for _, p in ipairs(held) do
      local lapse = t + tonumber(ARGV[3]) - tonumber(p[3]) / 1000
      if due == '' or lapse < tonumber(due) then due = tostring(lapse) end
    end
  end
end
return {pending, processing, tonumber(c[3] or 0), redis.call('ZCARD', KEYS[2]), due}
"""

_FIELDS = ("body", "delivery_id", "attempts", "state", "last_error", "token")


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    return value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogateescape")


def _entry(key: str, body: Any, delivery: Any, attempts: Any, state: Any, error: Any, token: Any) -> InboxEntry:
    delivery_text = _text(delivery) if delivery is not None else ""
    error_text = _text(error) if error is not None else ""
    return InboxEntry(
        key, _bytes(body), delivery_text or None, int(attempts or 0), _text(state),
        error_text or None, _text(token) if token is not None else "",
    )


def _consumer_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class RedisInbox(InboxPolicy):
    """A durable inbox on a Redis stream, shared by receivers and workers on many machines.

    Same interface and states as ``SQLiteInbox``. ``client_or_url`` is a ``redis://``
    URL (``redis+cluster://``, ``redis+sentinel://`` too) or a ``redis.Redis`` /
    ``redis.cluster.RedisCluster`` client or their ``redis.asyncio`` twins (not closed here). Durability
    is Redis's: run it with ``appendonly yes`` (see the fleet docs), or an acknowledged
    event can be lost with the server.
    """

    def __init__(
        self,
        client_or_url: RedisTarget,
        *,
        prefix: str = "{sports_posts:inbox}:",
        group: str = "workers",
        max_attempts: int = 10,
        backoff: Sequence[float] = DEFAULT_BACKOFF,
        lease: float = DEFAULT_LEASE,
        retention: float = DEFAULT_TTL,
        clock: Optional[Callable[[], float]] = None,
        socket_timeout: float = 10.0,
    ) -> None:
        self._set_policy(max_attempts, backoff, retention, lease)
        if not prefix or not group:
            raise ParameterError("prefix and group must be non-empty", parameter="prefix")
        _utils.seconds("socket_timeout", socket_timeout)
        self.prefix: str
        self.group: str
        self.prefix, self.group = prefix, group
        self._clock = clock
        # Bounded: a dead server or a partition ends a call within socket_timeout.
        self._redis = Redis("RedisInbox", client_or_url, socket_timeout=socket_timeout)
        self._errors = self._redis.driver_errors
        self.url: Optional[str] = self._redis.url
        self._group_ready = False
        # A consumer of the group per process: a forked child is another consumer (os.fork,
        # gunicorn --preload, Celery prefork), noticed by _scoped's fork hook.
        self._consumer: _scoped.PerProcess[str] = _scoped.PerProcess(_consumer_name)

    def __repr__(self) -> str:
        return f"RedisInbox({self._redis!r}, prefix={self.prefix!r}, max_attempts={self.max_attempts})"

    # -- names ---------------------------------------------------------------------------

    def _k(self, name: str) -> str:
        return Name(self.prefix, name)

    def _entry_key(self, key: str) -> str:
        return Name(self.prefix, "e:" + key)

    @property
    def consumer(self) -> str:
        """This process's consumer name in the group (host, pid, and a random tail)."""
        return self._consumer.get()

    def _now(self) -> str:
        return "" if self._clock is None else repr(float(self._clock()))

    # -- calls: (script, keys, args) built once, run sync or async ----------------------

    def _put_call(self, key: str, body: bytes, delivery_id: Optional[str]) -> tuple[str, list[str], list[Any]]:
        return _PUT, [self._entry_key(check_key(key)), self._k("stream"), self._k("counts")], [
            self._now(), key, check_body(body), delivery_id or ""]

    def _take_call(self, limit: int) -> tuple[str, list[str], list[Any]]:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ParameterError("limit must be a positive integer", parameter="limit")
        return _TAKE, [self._k("stream"), self._k("retry"), self._k("counts"), self._k("dead")], [
            self._now(), self.group, self.consumer, limit, int(self.lease * 1000), self.max_attempts,
            uuid.uuid4().hex[:12], Name(self.prefix, "e:")]

    def _done_call(self, entry: InboxEntry) -> tuple[str, list[str], list[Any]]:
        return _DONE, [self._entry_key(entry.key), self._k("stream"), self._k("counts"), self._k("done")], [
            self._now(), self.group, entry.token, repr(self.retention), entry.key]

    def _fail_call(self, entry: InboxEntry, error: str, permanent: bool) -> tuple[str, list[str], list[Any]]:
        keys = [self._entry_key(entry.key), self._k("stream"), self._k("counts"), self._k("retry"), self._k("dead")]
        args = [self._now(), self.group, entry.token, entry.key, error[:2000], "1" if permanent else "0",
                self.max_attempts, *(repr(b) for b in self.backoff)]
        return _FAIL, keys, args

    def _requeue_call(self, key: str) -> tuple[str, list[str], list[Any]]:
        return _REQUEUE, [self._entry_key(key), self._k("stream"), self._k("counts"), self._k("dead")], [
            self._now(), key]

    def _purge_call(self) -> tuple[str, list[str], list[Any]]:
        return _PURGE, [self._k("counts"), self._k("dead")], [Name(self.prefix, "e:")]

    def _status_call(self) -> tuple[str, list[str], list[Any]]:
        return _STATUS, [self._k("counts"), self._k("done"), self._k("retry"), self._k("stream")], [
            self._now(), self.group, repr(self.lease)]

    @staticmethod
    def _taken(rows: Any) -> list[InboxEntry]:
        return [_entry(_text(row[0]), *row[1:]) for row in rows or ()]

    @staticmethod
    def _counted(status: Any) -> dict[str, int]:
        return {"pending": int(status[0]), "processing": int(status[1]), "done": int(status[3]),
                "dead": int(status[2])}

    @staticmethod
    def _next(status: Any) -> Optional[float]:
        due = _text(status[4])
        return float(due) if due else None

    def _script(self, client: Any, source: str) -> Any:
        return self._redis.script(client, source)

    def _errors_here(self) -> Any:
        return self._redis.errors()

    def _missing_group(self, exc: BaseException) -> bool:
        return "NOGROUP" in str(exc)

    # -- sync ----------------------------------------------------------------------------

    def _sync(self) -> Any:
        self._redis.ready()
        return self._redis.client()

    def _name(self, name: str) -> str:
        """A key of this inbox spelled for the server (hash-tagged on a cluster)."""
        return str(self._redis.names([name])[0])

    def _ensure_group(self, client: Any) -> None:
        if self._group_ready:
            return
        try:
            client.xgroup_create(self._name(self._k("stream")), self.group, id="0", mkstream=True)
        except self._errors as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._group_ready = True

    def _call(self, call: tuple[str, list[str], list[Any]]) -> Any:
        source, keys, args = call
        with self._errors_here():
            client = self._sync()
            keys, args = self._redis.names(keys), self._redis.names(args)

            def run() -> Any:
                self._ensure_group(client)
                try:
                    return self._script(client, source)(keys=keys, args=args)
                except self._errors as exc:
                    if not self._missing_group(exc):  # the stream was deleted under us: recreate
                        raise
                    self._group_ready = False
                    self._ensure_group(client)
                    return self._script(client, source)(keys=keys, args=args)

            # a call that never ran on a cluster (a failover): again, as every store call
            return self._redis.retrying(client, run)

    def put(self, key: str, body: bytes, delivery_id: Optional[str] = None) -> bool:
        """Store an event (entry hash plus a stream message); false when ``key`` is already stored."""
        return bool(self._call(self._put_call(key, body, delivery_id)))

    def take_due(self, limit: int = 16) -> list[InboxEntry]:
        """Lease up to ``limit`` entries: retries now due, a dead worker's entries, then new ones."""
        return self._taken(self._call(self._take_call(limit)))

    def get(self, key: str) -> Optional[InboxEntry]:
        """The stored entry of ``key``, whatever its state (``done`` ones until ``retention``)."""
        with self._errors_here():
            values = self._sync().hmget(self._name(self._entry_key(key)), list(_FIELDS))
        return None if values[3] is None else _entry(key, *values)

    def mark_done(self, entry: InboxEntry) -> None:
        """Acknowledge (``XACK``) and keep the entry as ``done`` until ``retention`` passes."""
        self._call(self._done_call(entry))

    def mark_failed(self, entry: InboxEntry, error: str, *, permanent: bool = False) -> str:
        """Retry after the backoff, or move to the dead-letter stream; returns the state."""
        state = _text(self._call(self._fail_call(entry, error, permanent)))
        return state or ("dead" if permanent or entry.attempts + 1 >= self.max_attempts else "pending")

    def next_due(self) -> Optional[float]:
        """When the earliest entry falls due (epoch seconds), or ``None``."""
        return self._next(self._call(self._status_call()))

    def counts(self) -> dict[str, int]:
        """Entries per state: ``pending``, ``processing``, ``done``, ``dead``."""
        return self._counted(self._call(self._status_call()))

    def dead(self) -> list[InboxEntry]:
        """The entries of the dead-letter stream, oldest first."""
        with self._errors_here():
            client = self._sync()
            keys = [_text(fields.get(b"k", fields.get("k"))) for _, fields in client.xrange(self._name(self._k("dead")))]
            pipe = client.pipeline(transaction=False)
            for key in keys:
                pipe.hmget(self._name(self._entry_key(key)), list(_FIELDS))
            rows = pipe.execute()
        return [_entry(key, *values) for key, values in zip(keys, rows) if values[3] is not None]

    @property
    def queue(self) -> str:
        """The queue's name in metrics and logs: the same in every process that drains it."""
        return f"redis {self._redis.where()} {self.prefix}"

    def latency(self) -> float:
        """Seconds the oldest due entry has waited for a worker (0 when none waits): the
        queue's latency, as Sidekiq names it."""
        return max(0.0, float(_text(self._call((_LATENCY, [self._k("stream"), self._k("retry")],
                                                 [self._now(), self.group, Name(self.prefix, "e:")])))))

    def in_progress(self, limit: int = 100) -> list[InProgress]:
        """The entries workers hold now (``sports-posts inbox active``): the consumer group's
        pending entries, each with its consumer (``host:pid:...``) and its lease's time left."""
        rows = self._call((_ACTIVE, [self._k("stream")], [
            self._now(), self.group, _utils.positive_int("limit", limit), Name(self.prefix, "e:"), repr(self.lease)]))
        active = [InProgress(_text(r[0]), _text(r[1]), int(r[3]), int(r[4]), float(_text(r[2]))) for r in rows or ()]
        return sorted(active, key=lambda entry: entry.lease_left)

    def requeue(self, key: str) -> bool:
        """Give a dead entry a fresh set of attempts, due now."""
        return bool(self._call(self._requeue_call(key)))

    def purge_dead(self) -> int:
        """Delete every dead entry and the dead-letter stream; returns how many entries."""
        return int(self._call(self._purge_call()))

    def close(self) -> None:
        """Leave the group if nothing is held (workers come and go), and close a client made from a URL."""
        if not self._redis.has_sync:
            return
        if self._group_ready:
            with self._errors_here():
                client = self._redis.client()
                stream = self._name(self._k("stream"))
                if not client.xpending_range(stream, self.group, min="-", max="+", count=1,
                                             consumername=self.consumer):
                    client.xgroup_delconsumer(stream, self.group, self.consumer)
        self._redis.close()

    # -- async ---------------------------------------------------------------------------

    async def _acall(self, call: tuple[str, list[str], list[Any]]) -> Any:
        if self._redis.cluster is None:
            await self._redis.aready()
        client = self._redis.aclient()
        if client is None:  # a sync client that cannot be mirrored (a cluster's): a worker thread
            import anyio.to_thread

            return await anyio.to_thread.run_sync(self._call, call)
        source, keys, args = call
        keys, args = self._redis.names(keys), self._redis.names(args)

        async def run() -> Any:
            for attempt in (1, 2):
                if not self._group_ready:
                    try:
                        await client.xgroup_create(self._name(self._k("stream")), self.group, id="0", mkstream=True)
                    except self._errors as exc:
                        if "BUSYGROUP" not in str(exc):
                            raise
                    self._group_ready = True
                try:
                    return await self._script(client, source)(keys=keys, args=args)
                except self._errors as exc:
                    if attempt == 2 or not self._missing_group(exc):
                        raise
                    self._group_ready = False
            raise AssertionError("unreachable")  # pragma: no cover

        with self._errors_here():  # a call that never ran on a cluster (a failover): again, as the sync one
            return await self._redis.aretrying(client, run)

    async def aput(self, key: str, body: bytes, delivery_id: Optional[str] = None) -> bool:
        """``put`` on an async client."""
        return bool(await self._acall(self._put_call(key, body, delivery_id)))

    async def atake_due(self, limit: int = 16) -> list[InboxEntry]:
        """``take_due`` on an async client."""
        return self._taken(await self._acall(self._take_call(limit)))

    async def amark_done(self, entry: InboxEntry) -> None:
        """``mark_done`` on an async client."""
        await self._acall(self._done_call(entry))

    async def amark_failed(self, entry: InboxEntry, error: str, *, permanent: bool = False) -> str:
        """``mark_failed`` on an async client."""
        state = _text(await self._acall(self._fail_call(entry, error, permanent)))
        return state or ("dead" if permanent or entry.attempts + 1 >= self.max_attempts else "pending")

    async def anext_due(self) -> Optional[float]:
        """``next_due`` on an async client."""
        return self._next(await self._acall(self._status_call()))

    async def acounts(self) -> dict[str, int]:
        """``counts`` on an async client."""
        return self._counted(await self._acall(self._status_call()))

    async def arequeue(self, key: str) -> bool:
        """``requeue`` on an async client."""
        return bool(await self._acall(self._requeue_call(key)))

    async def apurge_dead(self) -> int:
        """``purge_dead`` on an async client."""
        return int(await self._acall(self._purge_call()))

    async def aclose(self) -> None:
        """Close the clients made here (a client you passed stays open)."""
        await self._redis.aclose()
