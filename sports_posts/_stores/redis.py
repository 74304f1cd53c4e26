"""Redis for every store: one runner over a URL or the customer's client, sync and async.

A client made here from a URL has socket and connect timeouts (a frozen or partitioned
server ends a call within them, whatever redis-py's own default); a client passed in keeps
its settings. Lua scripts are registered once per client and redis-py reloads one after a
``NOSCRIPT`` (a restarted server). Every driver failure becomes a ``StoreError`` (or the
store's subclass of it), password scrubbed; a mistyped URL is a ``ParameterError`` at once.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Sequence
from typing import Any, Optional

from .. import _checks
from .._errors import ParameterError
from .errors import StoreError, check_url, describe_url, import_driver, redact_url, translated

__all__ = ["Redis"]

_SCHEMES = ("redis", "rediss", "unix")


class Redis:
    """Where a store's commands and scripts run: a ``redis://`` URL, a ``redis.Redis`` or a
    ``redis.asyncio.Redis`` (plus, optionally, an ``async_client`` for the async methods).

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
    ) -> None:
        self.owner = owner
        self._error = error
        redis = import_driver("redis", owner)
        redis_asyncio = import_driver("redis.asyncio", owner)
        self._driver, self._driver_async = redis, redis_asyncio
        self.driver_errors: tuple[type[BaseException], ...] = (redis.RedisError,)
        self.socket_timeout = _checks.seconds("socket_timeout", socket_timeout)
        self.connect_timeout = _checks.seconds(
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
        if isinstance(client_or_url, str):
            self.url = check_url(client_or_url, _SCHEMES, owner, parameter)
            try:
                self._client = redis.Redis.from_url(self.url, **self._timeouts)
            except (ValueError, TypeError):  # the driver's message would quote the URL
                raise ParameterError(
                    f"{owner}: not a valid redis URL: {redact_url(self.url)!r}", parameter=parameter
                ) from None
        elif isinstance(client_or_url, redis_asyncio.Redis):
            self._given_async = client_or_url
        elif isinstance(client_or_url, redis.Redis) or callable(getattr(client_or_url, "register_script", None)):
            self._client = client_or_url
        else:
            raise ParameterError(
                f"{owner} needs a redis:// URL, a redis.Redis or a redis.asyncio.Redis, "
                f"not {type(client_or_url).__name__}",
                parameter=parameter,
            )
        self._scripts: dict[tuple[int, str], Any] = {}
        self._scripts_lock = threading.Lock()
        self._by_loop: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        """The store as its URL, password redacted (``'redis://:***@host:port/0'``): every
        store's repr shows it so, as the first argument it was made with."""
        if self.url is not None:
            return repr(redact_url(self.url))
        where = self.where()
        return repr(where if where.startswith("<") else f"redis://{where}")

    def where(self) -> str:
        """Host, port and db for a repr: never a password."""
        if self.url is not None:
            return describe_url(self.url)
        client = self._client if self._client is not None else self._given_async
        try:
            kwargs = client.connection_pool.connection_kwargs
            return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"
        except AttributeError:
            return "<client>"

    def errors(self) -> Any:
        """A context that turns driver failures into this store's typed error."""
        return translated(self.owner, self.engine, self.driver_errors, self.url, self._error)

    def script(self, client: Any, source: str) -> Any:
        """``source`` registered on ``client`` once (redis-py reloads it after a NOSCRIPT)."""
        key = (id(client), source)
        script = self._scripts.get(key)
        if script is None:
            with self._scripts_lock:
                script = self._scripts.get(key)
                if script is None:
                    script = self._scripts[key] = client.register_script(source)
        return script

    # -- sync ----------------------------------------------------------------------------

    @property
    def has_sync(self) -> bool:
        """Whether the sync methods can run (not when given only a redis.asyncio client)."""
        return self._client is not None

    def client(self) -> Any:
        """The sync client."""
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
        from the pool, with that timeout on its socket)."""
        with self.errors():
            client = self.client()
            if timeout is not None and self.url is not None and timeout < self.socket_timeout:
                return self._within(client, max(timeout, 0.001), source, keys, args)
            return self.script(client, source)(keys=list(keys), args=list(args))

    def _within(self, client: Any, timeout: float, source: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        pool = client.connection_pool
        try:
            conn = pool.get_connection()
        except TypeError:  # redis-py before 5.3 names the command
            conn = pool.get_connection("EVALSHA")
        try:
            sock = getattr(conn, "_sock", None)
            if sock is not None:
                sock.settimeout(timeout)
            script = self.script(client, source)
            noscript = self._driver.exceptions.NoScriptError
            try:
                conn.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
                return client.parse_response(conn, "EVALSHA")
            except noscript:  # a restarted server: load it, then run it
                conn.send_command("EVAL", source, len(keys), *keys, *args)
                return client.parse_response(conn, "EVAL")
        except BaseException:
            conn.disconnect()  # a reply may still be on its way: this connection is done
            raise
        finally:
            sock = getattr(conn, "_sock", None)
            if sock is not None:
                sock.settimeout(self.socket_timeout)
            pool.release(conn)

    def close(self) -> None:
        """Close the client made from a URL (a client passed in is the caller's to close)."""
        if self.url is not None and self._client is not None:
            with self.errors():
                self._client.close()

    # -- async ---------------------------------------------------------------------------

    def aclient(self) -> Any:
        """This event loop's async client, or ``None``: use the sync one in a worker thread."""
        if self._given_async is not None:
            return self._given_async
        loop = asyncio.get_running_loop()
        client = self._by_loop.get(loop)
        if client is None:
            if self.url is not None:
                client = self._driver_async.Redis.from_url(self.url, **self._async_timeouts)
            else:
                try:
                    client = self._driver_async.Redis(**dict(self._client.connection_pool.connection_kwargs))
                except Exception:  # a client we cannot mirror (a unix socket, a cluster): offload
                    return None
            self._by_loop[loop] = client
        return client

    async def aexecute(self, source: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """``execute`` on this loop's async client (or the sync one in a worker thread)."""
        client = self.aclient()
        if client is None:
            import anyio.to_thread

            return await anyio.to_thread.run_sync(self.execute, source, keys, args)
        with self.errors():
            return await self.script(client, source)(keys=list(keys), args=list(args))

    async def aclose(self) -> None:
        """Close the sync client made from a URL and this loop's async client made here."""
        self.close()
        client = self._by_loop.pop(asyncio.get_running_loop(), None)
        if client is not None:
            with self.errors():
                await client.aclose()
