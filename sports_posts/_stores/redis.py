"""Redis for every store: one runner over a URL or the customer's client, sync and async, on a
single server, a Redis Cluster or a Sentinel-managed master.

A ``redis://`` URL of a cluster node is recognised on first use (``INFO cluster``) and served
by a ``RedisCluster`` client; ``redis+cluster://`` says so up front and
``redis+sentinel://host:port[,host:port...]/service[/db]`` asks the sentinels for the master.
On a cluster, the keys one script touches share a hash tag: a ``Name`` (prefix plus rest)
becomes ``{prefix}rest`` unless its prefix already has a tag; on a single server and behind
Sentinel names are ``prefix + rest``, as they always were, so no key moves.

Connections come from redis-py's pools: each command (a script, a pipeline) takes one for
itself and gives it back, so no connection serves two calls in flight. The sync client is
shared by every thread; its pool notices a fork by pid and starts empty in the child, without
closing the parent's sockets. An asyncio client is bound to its event loop: one is made per
loop (``_scoped.PerLoop``: a second ``asyncio.run`` gets its own, and the first's is closed
when its loop ends, as ``asyncio.run`` and ``async_to_sync`` end a loop) and none crosses a
fork (a child makes its own; a customer's asyncio client has its pool emptied in the child,
as redis-py does for a sync pool).

A client made here from a URL has socket and connect timeouts (a frozen or partitioned
server ends a call within them, whatever redis-py's own default); a client passed in keeps
its settings. Lua scripts are registered once per client and redis-py reloads one after a
``NOSCRIPT`` (a restarted server). On a cluster, a failover is followed with no restart: a
call whose error says it never ran (a refused connection, ``CLUSTERDOWN``) is tried again on
the slot map the client re-read, with backoff, until the cluster has promoted the replica or
``connect_timeout`` has passed (``redis_cluster.Reach``, one rule for sync and async calls);
and every client made from the URL starts from every node the runner has seen, so that a new
client (another event loop's) finds the cluster when the node the URL names is dead. Every
driver failure becomes a ``StoreError`` (or the store's subclass of it), password scrubbed;
a mistyped URL is a ``ParameterError`` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
import weakref
from collections.abc import Awaitable, Iterator, Sequence
from typing import Any, Callable, Optional, TypeVar

from .. import _scoped, _utils
from .._errors import ParameterError
from .errors import (
    SCHEMES,
    StoreError,
    check_url,
    describe_url,
    import_driver,
    redact_url,
    scrub,
    store_repr,
    translated,
)
from .redis_cluster import Reach
from .redis_sentinel import sentinel_url, with_sentinels

__all__ = ["DEFAULT_MAX_CONNECTIONS", "Name", "Redis", "has_hash_tag", "tagged"]

T = TypeVar("T")

_SCHEMES = SCHEMES["redis"]  # the store layer's one table of URL schemes
_CLUSTER = tuple(scheme for scheme in _SCHEMES if scheme.endswith("+cluster"))
_SENTINEL = tuple(scheme for scheme in _SCHEMES if scheme.endswith("+sentinel"))


def has_hash_tag(name: str) -> bool:
    """Whether Redis Cluster hashes ``name`` by a ``{tag}`` (a non-empty one) rather than whole."""
    start = name.find("{")
    return start >= 0 and name.find("}", start + 1) > start + 1


def tagged(prefix: str, cluster: bool) -> str:
    """``prefix`` as the start of a key: on a cluster, wrapped in a hash tag unless it has one,
    so that every key made from it lands in one slot."""
    return "{" + prefix + "}" if cluster and not has_hash_tag(prefix) else prefix


class Name(str):
    """A key ``prefix + rest`` whose prefix takes a hash tag on Redis Cluster (``{prefix}rest``).

    As a plain string it is the single-server name, the one every store has always used.
    """

    prefix: str
    rest: str

    def __new__(cls, prefix: str, rest: str = "") -> Name:
        name = super().__new__(cls, prefix + rest)
        name.prefix, name.rest = prefix, rest
        return name

    def on(self, cluster: bool) -> str:
        """The key's name on a cluster (``True``) or elsewhere."""
        return tagged(self.prefix, cluster) + self.rest


class _LoopClient:
    """One event loop's asyncio client (``None``: the sync one runs in a worker thread) and
    the scripts registered on it, closed together when the loop ends."""

    __slots__ = ("client", "scripts")

    def __init__(self, client: Any) -> None:
        self.client = client
        self.scripts: dict[tuple[int, str], Any] = {}

    async def aclose(self) -> None:
        """Close the client made for the loop (``PerLoop`` runs this when the loop ends)."""
        for made in with_sentinels(self.client) if self.client is not None else []:
            await made.aclose()


DEFAULT_MAX_CONNECTIONS = 100
"""Connections a client made from a URL opens at most, per process and per event loop: calls
in flight beyond them wait for one (within the call's connect timeout) rather than fail."""


class Redis:
    """Where a store's commands and scripts run: a ``redis://`` (``redis+cluster://``,
    ``redis+sentinel://``) URL, a ``redis.Redis`` (a Sentinel's ``master_for`` included), a
    ``redis.cluster.RedisCluster``, or their ``redis.asyncio`` twins (plus, optionally, an
    ``async_client`` for the async methods).

    The async methods use the async client given, else one per event loop made from the
    URL or from the sync client's settings (a redis.asyncio client is bound to its loop),
    else the sync client in a worker thread. An async client alone cannot serve the sync
    methods (a ``ParameterError`` says so).
    """

    engine = "redis"

    def __init__(
        self,
        owner: str,
        client_or_url: Any,
        *,
        socket_timeout: float = 10.0,
        connect_timeout: Optional[float] = None,
        async_client: Any = None,
        error: type[StoreError] = StoreError,
        parameter: str = "client_or_url",
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        self.owner = owner
        self.max_connections = _utils.positive_int("max_connections", max_connections)
        self._error = error
        redis = import_driver("redis", owner)
        redis_asyncio = import_driver("redis.asyncio", owner)
        self._driver, self._driver_async = redis, redis_asyncio
        # RedisClusterException (a slot no node serves, keys of several slots) is no RedisError.
        self.driver_errors: tuple[type[BaseException], ...] = (
            redis.RedisError, redis.exceptions.RedisClusterException)
        self.socket_timeout = _utils.seconds("socket_timeout", socket_timeout)
        self.connect_timeout = _utils.seconds(
            "connect_timeout", socket_timeout if connect_timeout is None else connect_timeout
        )
        # No client-side retries on a client made here: redis-py's default retries a timeout
        # with backoff (the bound would be several timeouts) and may run a script twice. A
        # pooled connection a restart left dead is replaced when it is next taken anyway.
        no_backoff = import_driver("redis.backoff", owner).NoBackoff
        self._timeouts = {"socket_timeout": self.socket_timeout,
                          "socket_connect_timeout": self.connect_timeout,
                          "retry": import_driver("redis.retry", owner).Retry(no_backoff(), 0)}
        self._async_timeouts = {**self._timeouts,
                                "retry": import_driver("redis.asyncio.retry", owner).Retry(no_backoff(), 0)}
        self.url: Optional[str] = None
        self._client: Any = None
        self._given_async: Any = async_client
        self._sentinel: Optional[tuple[list[tuple[str, int]], str, dict[str, Any]]] = None
        self.cluster: Optional[bool] = False
        """Whether the server is a Redis Cluster; ``None`` until a ``redis://`` URL's first call."""
        self._nodes: tuple[tuple[str, int], ...] = ()  # every cluster node a client made here has seen
        self._mode_lock = threading.Lock()
        cluster_types = (import_driver("redis.cluster", owner).RedisCluster,
                         import_driver("redis.asyncio.cluster", owner).RedisCluster)
        if isinstance(client_or_url, str):
            scheme = client_or_url.split(":", 1)[0].lower()
            if scheme in _SENTINEL:
                self.url = client_or_url
                self._sentinel = sentinel_url(client_or_url, owner, parameter)
                self._client = self._sentinel_master(sync=True)
            else:
                self.url = check_url(client_or_url, _SCHEMES, owner, parameter)
                try:
                    if scheme in _CLUSTER:
                        # Made on the first sync call (a RedisCluster connects as it is made);
                        # a plain client of the same URL checks its syntax now, without I/O.
                        self.cluster = True
                        redis.Redis.from_url(self._base_url(), **self._timeouts).close()
                    else:
                        self.cluster = None if scheme != "unix" else False
                        self._client = self._pooled(redis, self.url)
                except (ValueError, TypeError):  # the driver's message would quote the URL
                    raise ParameterError(
                        f"{owner}: not a valid redis URL: {redact_url(self.url)!r}", parameter=parameter
                    ) from None
        elif isinstance(client_or_url, (redis_asyncio.Redis, cluster_types[1])):
            self._given_async = client_or_url
            self.cluster = isinstance(client_or_url, cluster_types[1])
        elif isinstance(client_or_url, (redis.Redis, cluster_types[0])) or callable(
            getattr(client_or_url, "register_script", None)
        ):
            self._client = client_or_url
            self.cluster = isinstance(client_or_url, cluster_types[0])
        else:
            raise ParameterError(
                f"{owner} needs a redis:// URL, a redis.Redis, a redis.cluster.RedisCluster or their "
                f"redis.asyncio twins, not {type(client_or_url).__name__}",
                parameter=parameter,
            )
        if self._client is None and isinstance(async_client, cluster_types[1]):
            self.cluster = True
        self._scripts: dict[tuple[int, str], Any] = {}
        self._scripts_lock = threading.Lock()
        # This loop's asyncio client (made from the URL or mirrored from the sync client).
        self._by_loop: _scoped.PerLoop[_LoopClient] = _scoped.PerLoop(self._new_aclient, close=_LoopClient.aclose)
        # The loop a customer's asyncio client last ran on: its pooled connections belong to it.
        self._given_loop: Optional[weakref.ref[asyncio.AbstractEventLoop]] = None
        self._fork_handle = _scoped.on_fork(functools.partial(_after_fork, weakref.ref(self)))

    def _after_fork(self) -> None:
        """In a forked child: locks made anew (a parent's thread may have held one); the
        per-loop clients are dropped by ``PerLoop`` and the sync pool resets itself by pid.
        A customer's asyncio client is emptied of the parent's connections (not closed: the
        parent still uses them), as redis-py does for a sync pool in a child."""
        self._mode_lock = threading.Lock()
        self._scripts_lock = threading.Lock()
        self._given_loop = None
        self._reset_given()

    def _reset_given(self) -> None:
        """Empty the customer's asyncio client's pool without closing its connections (their
        loop is closed, or they are the parent's): it opens new ones on the next call."""
        pool = getattr(self._given_async, "connection_pool", None)
        reset = getattr(pool, "reset", None)
        if callable(reset):
            reset()

    def _follow_loop(self) -> None:
        """A customer's asyncio client used on a new loop after its last one closed
        (``asyncio.run`` twice, ``async_to_sync``): its pooled connections belong to the closed
        loop and would fail (``Event loop is closed``), so the pool starts empty. A client in
        use on another loop that is still open is left as it is (redis-py's rule: one loop)."""
        loop = asyncio.get_running_loop()
        ref = self._given_loop
        last = ref() if ref is not None else None
        if last is loop:
            return
        if ref is not None and (last is None or last.is_closed()):
            self._reset_given()
        self._given_loop = weakref.ref(loop)

    def __repr__(self) -> str:
        """The store as its URL, password redacted (``'redis://:***@host:port/0'``): every
        store's repr shows it so, as the first argument it was made with."""
        return store_repr(self.url, self.where, "redis")

    def where(self) -> str:
        """Host, port and db for a repr (a Sentinel's service, a cluster's node): never a password."""
        if self._sentinel is not None:
            hosts, service, settings = self._sentinel
            return f"sentinel {','.join(f'{h}:{p}' for h, p in hosts)}/{service}/{settings.get('db', 0)}"
        if self.url is not None:
            where = describe_url(self.url)
            return f"cluster {where}" if self.cluster else where
        client = self._client if self._client is not None else self._given_async
        try:
            pool = client.connection_pool
            name = getattr(pool, "service_name", None)
            if name is not None:
                return f"sentinel {name}/{pool.connection_kwargs.get('db', 0)}"
            kwargs = pool.connection_kwargs
            return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"
        except AttributeError:
            pass
        try:
            node = client.get_default_node()
            return f"cluster {node.host}:{node.port}"
        except Exception:
            return "<client>"

    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """A context that turns driver failures into this store's typed error."""
        exceptions = self._driver.exceptions
        redirected = (exceptions.AskError, exceptions.ClusterCrossSlotError)  # MovedError is an AskError
        with translated(self.owner, self.engine, self.driver_errors, self.url, self._error):
            try:
                yield
            except redirected as exc:
                if self.cluster:
                    raise
                # A client of one node of a cluster: say what to pass instead.
                raise self._error(scrub(
                    f"{self.owner}: redis failed ({type(exc).__name__}: {exc}): this is a Redis Cluster; "
                    "pass a redis.cluster.RedisCluster client or the node's redis:// URL",
                    self.url), engine=self.engine) from None

    def retrying(self, client: Any, call: Callable[[], T]) -> T:
        """``call()`` on ``client``; on a cluster, tried again while its error says it never
        ran (a dead master refused the connection, the nodes answer ``CLUSTERDOWN`` until
        its replica is promoted), within ``connect_timeout`` (``redis_cluster.Reach``). The
        cluster client re-reads its slot map on each such error, so the call reaches the
        promoted replica once there is one. Any other error (a timeout, a connection lost
        after sending: the script may have run) is the caller's at once."""
        reach = Reach(self.cluster, self.connect_timeout, self._driver.exceptions)
        answer = reach.run(call)
        self._learn(client, reach.retried)
        return answer

    async def aretrying(self, client: Any, call: Callable[[], Awaitable[T]]) -> T:
        """``retrying`` for a call on an asyncio client (its pauses do not block the loop)."""
        reach = Reach(self.cluster, self.connect_timeout, self._driver.exceptions)
        answer = await reach.arun(call)
        self._learn(client, reach.retried)
        return answer

    def _learn(self, client: Any, changed: bool) -> None:
        """Note the nodes of a cluster client made from the URL (``get_nodes``), first when
        it has answered and again after a failover: the next client made here (another
        event loop's, or after ``close``) starts from all of them, not from the URL's one."""
        if self.url is None or not self.cluster or (self._nodes and not changed):
            return
        try:
            seen = [(str(node.host), int(node.port)) for node in client.get_nodes()]
        except (AttributeError, TypeError, ValueError):  # a stand-in client
            return
        self._nodes = tuple(dict.fromkeys([*self._nodes, *seen]))

    # -- which server: a single one, a cluster, a Sentinel's master ----------------------

    def _base_url(self) -> str:
        """The URL with a ``redis://`` or ``rediss://`` scheme, as redis-py parses it."""
        assert self.url is not None
        scheme, rest = self.url.split(":", 1)
        return ("rediss" if scheme.lower().startswith("rediss") else "redis") + ":" + rest

    def _pooled(self, module: Any, url: str) -> Any:
        """A client of ``module`` (``redis`` or ``redis.asyncio``) on a bounded, blocking pool:
        at most ``max_connections`` per process (per event loop for asyncio), one per call in
        flight; a call beyond them waits up to ``connect_timeout`` for one to come back, then
        fails as any unreachable store does. redis-py's default pool raises at once past 100
        connections (``MaxConnectionsError``), which failed the 101st concurrent delivery."""
        timeouts = self._timeouts if module is self._driver else self._async_timeouts
        pool = module.BlockingConnectionPool.from_url(
            url, max_connections=self.max_connections, timeout=self.connect_timeout, **timeouts)
        return module.Redis.from_pool(pool)  # the client owns the pool: closing it closes the pool

    def _cluster_from_url(self, *, sync: bool) -> Any:
        """A ``RedisCluster`` (sync or asyncio) made from the URL, with this runner's bounds,
        starting from the URL's node and every node a client made here has seen (redis-py
        then keeps every node it discovers: ``dynamic_startup_nodes``, its default)."""
        module = import_driver("redis.cluster" if sync else "redis.asyncio.cluster", self.owner)
        known = [module.ClusterNode(host, port) for host, port in self._nodes]
        client = module.RedisCluster.from_url(
            self._base_url(), startup_nodes=known, **(self._timeouts if sync else self._async_timeouts))
        if sync:  # a sync client has read the slot map as it was made; an asyncio one on its first call
            self._learn(client, True)
        return client

    def _sentinel_master(self, *, sync: bool) -> Any:
        """The Sentinel-managed master client (sync or asyncio) of a ``redis+sentinel://`` URL:
        each new connection asks the sentinels where the master is, so a failover is followed."""
        assert self._sentinel is not None
        hosts, service, settings = self._sentinel
        settings = dict(settings)
        timeouts = self._timeouts if sync else self._async_timeouts
        # The sentinels' own connections get the master's no-retry policy (redis-py's default
        # retries each sentinel with backoff: a call on refusing sentinels took seconds, on a
        # frozen one many times its socket timeout) and share its bounds: each sentinel is
        # asked at most once, with 1/n of each timeout, so asking all n costs at most one
        # connect_timeout + socket_timeout, and a whole call at most twice that.
        share = 1 / len(hosts)
        sentinel_kwargs: dict[str, Any] = {
            **timeouts,
            "socket_timeout": self.socket_timeout * share,
            "socket_connect_timeout": self.connect_timeout * share,
        }
        password = settings.pop("sentinel_password", None)
        if password is not None:
            sentinel_kwargs["password"] = password
        module = import_driver("redis.sentinel" if sync else "redis.asyncio.sentinel", self.owner)
        sentinel = module.Sentinel(hosts, sentinel_kwargs=sentinel_kwargs, **timeouts)
        return sentinel.master_for(service, **timeouts, **settings)

    def _use_cluster(self, cluster: bool) -> None:
        with self._mode_lock:
            if self.cluster is not None:
                return
            if cluster:  # the cluster client is made by the next sync call; the plain one is dropped
                self._client = None  # (not closed: another thread may be finishing its INFO on it)
            self.cluster = cluster

    def _cluster_enabled(self, info: Any) -> bool:
        try:
            return bool(int(info.get("cluster_enabled", 0) or 0))
        except (AttributeError, TypeError, ValueError):
            return False

    def ready(self) -> bool:
        """Whether the server is a cluster, asking it once for a ``redis://`` URL (``INFO cluster``)."""
        if self.cluster is None:
            with self.errors():
                try:
                    info = self._client.info("cluster")
                except self._driver.exceptions.ResponseError:  # INFO refused (an ACL): not a cluster
                    info = {}
            self._use_cluster(self._cluster_enabled(info))
        return bool(self.cluster)

    async def aready(self) -> bool:
        """``ready`` from an event loop (asking on a short-lived asyncio connection)."""
        if self.cluster is None:
            assert self.url is not None
            probe = self._driver_async.Redis.from_url(self.url, **self._async_timeouts)
            try:
                with self.errors():
                    try:
                        info = await probe.info("cluster")
                    except self._driver.exceptions.ResponseError:
                        info = {}
            finally:
                with contextlib.suppress(Exception):
                    await probe.aclose()
            self._use_cluster(self._cluster_enabled(info))
        return bool(self.cluster)

    def names(self, items: Sequence[Any]) -> list[Any]:
        """``items`` with each ``Name`` spelled for this server (the mode must be known)."""
        cluster = bool(self.cluster)
        return [item.on(cluster) if isinstance(item, Name) else item for item in items]

    def script(self, client: Any, source: str) -> Any:
        """``source`` registered on ``client`` once (redis-py reloads it after a NOSCRIPT).

        A loop's own client keeps its scripts beside it, so that both are dropped with the
        loop: a cache here would keep every closed loop's client, and its connections, alive."""
        mine = self._by_loop.peek()
        scripts = mine.scripts if mine is not None and mine.client is client else self._scripts
        key = (id(client), source)
        script = scripts.get(key)
        if script is None:
            with self._scripts_lock:
                script = scripts.get(key)
                if script is None:
                    script = scripts[key] = client.register_script(source)
        return script

    # -- sync ----------------------------------------------------------------------------

    @property
    def has_sync(self) -> bool:
        """Whether the sync methods can run (not when given only a redis.asyncio client)."""
        return self._client is not None or self.url is not None

    def client(self) -> Any:
        """The sync client (a cluster's made here on first use, inside the error translation)."""
        if self._client is None and self.url is not None and self.cluster:
            with self._mode_lock, self.errors():
                if self._client is None:
                    self._client = self._cluster_from_url(sync=True)
        if self._client is None:
            raise ParameterError(
                f"{self.owner} was given a redis.asyncio client: use its async methods; pass a "
                "redis.Redis or a URL for the sync ones",
                parameter="client_or_url",
            )
        return self._client

    def execute(
        self, source: str, keys: Sequence[str], args: Sequence[Any], *, timeout: Optional[float] = None
    ) -> Any:
        """Run a Lua script (atomic on the server) and return its reply. ``timeout``
        (seconds) shortens this call's bound below the socket timeout, on a client made
        here (redis-py has no per-command timeout: the call gets a connection of its own
        from the pool and waits for its reply up to ``timeout``)."""
        with self.errors():
            self.ready()
            client = self.client()
            keys, args = self.names(keys), self.names(args)
            if timeout is not None and self.url is not None and not self.cluster and timeout < self.socket_timeout:
                return self._within(client, max(timeout, 0.001), source, keys, args)
            script = self.script(client, source)
            return self.retrying(client, lambda: script(keys=keys, args=args))

    def exists(self, keys: Sequence[Any]) -> bool:
        """Whether any of ``keys`` exists, each spelled for this server (a node's URL is
        recognised as a cluster's first): read-only, one ``EXISTS`` a key, since a cluster
        may hold them on several slots."""
        with self.errors():
            self.ready()
            client = self.client()
            names = self.names(keys)
            return bool(self.retrying(client, lambda: any(client.exists(key) for key in names)))

    def _within(self, client: Any, timeout: float, source: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """The script on a connection of its own, its reply awaited up to ``timeout`` (the
        connection's public ``can_read``; the socket timeout still bounds a reply begun)."""
        deadline = time.monotonic() + timeout
        pool = client.connection_pool
        try:
            conn = pool.get_connection()
        except TypeError:  # redis-py before 5.3 names the command
            conn = pool.get_connection("EVALSHA")

        def reply(command: str) -> Any:
            if not conn.can_read(timeout=max(0.0, deadline - time.monotonic())):
                raise self._driver.exceptions.TimeoutError(f"no reply within {timeout:g} s")
            return client.parse_response(conn, command)

        try:
            script = self.script(client, source)
            try:
                conn.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
                return reply("EVALSHA")
            except self._driver.exceptions.NoScriptError:  # a restarted server: load it, then run it
                conn.send_command("EVAL", source, len(keys), *keys, *args)
                return reply("EVAL")
        except BaseException:
            conn.disconnect()  # a reply may still be on its way: this connection is done
            raise
        finally:
            pool.release(conn)

    def close(self) -> None:
        """Close the client made from a URL (a client passed in is the caller's to close)."""
        if self.url is not None and self._client is not None:
            with self.errors():
                for made in with_sentinels(self._client):
                    made.close()

    # -- async ---------------------------------------------------------------------------

    def aclient(self) -> Any:
        """This event loop's async client, or ``None``: use the sync one in a worker thread."""
        if self._given_async is not None:
            self._follow_loop()
            return self._given_async
        return self._by_loop.get().client

    def _new_aclient(self) -> _LoopClient:
        """An asyncio client for the running loop (``PerLoop`` calls it once per loop)."""
        if self._sentinel is not None:
            return _LoopClient(self._sentinel_master(sync=False))
        if self.url is not None:
            if self.cluster is None:
                raise RuntimeError("aready() first")  # pragma: no cover - every caller does
            return _LoopClient(self._cluster_from_url(sync=False) if self.cluster
                               else self._pooled(self._driver_async, self.url))
        return _LoopClient(self._mirror())

    def _mirror(self) -> Any:
        """An asyncio client with the customer's sync client's settings, or ``None`` (offload)."""
        if self.cluster:
            return None  # a cluster client's nodes are its own: run it in a worker thread
        try:
            pool = self._client.connection_pool
            kwargs = dict(pool.connection_kwargs)
            manager = getattr(pool, "sentinel_manager", None)
            if manager is not None:  # Sentinel-managed: ask the same sentinels for the same service
                for private in ("connection_pool", "connection_class", "retry"):
                    kwargs.pop(private, None)
                hosts = [(s.connection_pool.connection_kwargs["host"], s.connection_pool.connection_kwargs["port"])
                         for s in manager.sentinels]
                sentinel = import_driver("redis.asyncio.sentinel", self.owner).Sentinel(hosts, sentinel_kwargs=dict(manager.sentinel_kwargs))
                return sentinel.master_for(pool.service_name, **kwargs)
            return self._driver_async.Redis(**kwargs)
        except Exception:  # a client we cannot mirror (a unix socket, a custom pool): offload
            return None

    async def aexecute(self, source: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """``execute`` on this loop's async client (or the sync one in a worker thread)."""
        if self.cluster is None:
            await self.aready()
        client = self.aclient()
        if client is None:
            import anyio.to_thread

            return await anyio.to_thread.run_sync(self.execute, source, keys, args)
        with self.errors():
            script, keys, args = self.script(client, source), self.names(keys), self.names(args)
            return await self.aretrying(client, lambda: script(keys=keys, args=args))

    async def aclose(self) -> None:
        """Close the sync client made from a URL and this loop's async client made here."""
        self.close()
        mine = self._by_loop.take()
        if mine is not None:
            with self.errors():
                await mine.aclose()


def _after_fork(runner: weakref.ref[Redis]) -> None:
    owner = runner()
    if owner is not None:
        owner._after_fork()
