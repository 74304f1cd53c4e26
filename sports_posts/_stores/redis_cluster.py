"""A Redis Cluster failover as a store call meets it, in one place for the sync and the async
calls: which errors say the call never ran, and how long it is tried again.

While a master is dead and its replica not yet promoted (``cluster-node-timeout`` plus an
election: about 2 s with 1000 ms), the slot map every client and every node holds still
names the dead master: a call for its slots is refused (nothing sent), and once the nodes
mark it failed, they answer ``CLUSTERDOWN`` for every slot (nothing run). redis-py's cluster
client re-reads the slot map on each of these errors, from any node it knows; it does not
wait for the promotion. So a call is tried again, with a short backoff, while its error says
it never ran, until the store's ``connect_timeout`` (the bound on reaching a server) has
passed since it began; then the last error is the caller's (a 503, a ``StoreError``). An
error after the call may have been sent (a connection lost while reading, a timeout) is never
tried again: a script could run twice, and the dedupe store's and the inbox's exactly-once
rests on each script running once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, Callable, Optional, TypeVar

__all__ = ["Reach", "never_ran"]

T = TypeVar("T")

FIRST_PAUSE = 0.05
"""Seconds before the first try again; each pause doubles, up to ``MAX_PAUSE``."""
MAX_PAUSE = 0.25


def never_ran(exc: BaseException, exceptions: Any) -> bool:
    """Whether ``exc`` (from redis-py, ``exceptions`` its ``redis.exceptions``) says the
    command never reached a server that could run it:

    - a connection refused (only a connect is refused: nothing was sent);
    - ``CLUSTERDOWN`` / ``MASTERDOWN`` (the node refused to run it) or a slot no node serves
      in the client's map (nothing sent);
    - a refresh of the slot map that reached no node (redis-py's ``RedisClusterException``
      caused by a connection error), when the error that started it never ran either.
    """
    if isinstance(exc, (exceptions.ClusterDownError, exceptions.SlotNotCoveredError)):
        return True
    if isinstance(exc, exceptions.ConnectionError):
        return isinstance(exc.__context__, ConnectionRefusedError)
    if type(exc) is exceptions.RedisClusterException:
        started = exc.__context__  # what the client was handling when its refresh failed
        return isinstance(exc.__cause__, (exceptions.ConnectionError, exceptions.TimeoutError)) and (
            started is None or started is exc.__cause__ or never_ran(started, exceptions))
    return False


class Reach:
    """One store call's tries: ``pause(exc)`` is how long to wait before the next, or raises
    ``exc`` when it may have run, the server is no cluster, or ``seconds`` have passed."""

    __slots__ = ("cluster", "deadline", "exceptions", "next_pause", "retried")

    def __init__(self, cluster: Optional[bool], seconds: float, exceptions: Any) -> None:
        self.cluster = cluster
        self.deadline = time.monotonic() + seconds
        self.exceptions = exceptions
        self.next_pause = FIRST_PAUSE
        self.retried = False
        """Whether a try failed and another followed (the cluster's map may have changed)."""

    def pause(self, exc: BaseException) -> float:
        if not (self.cluster and never_ran(exc, self.exceptions)):
            raise exc
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise exc
        pause = min(self.next_pause, left)
        self.retried = True
        self.next_pause = min(self.next_pause * 2, MAX_PAUSE)
        return pause

    def run(self, call: Callable[[], T]) -> T:
        """``call()``, tried again while the cluster cannot serve it yet (see the module)."""
        while True:
            try:
                return call()
            except (self.exceptions.RedisError, self.exceptions.RedisClusterException) as exc:
                pause = self.pause(exc)
            time.sleep(pause)

    async def arun(self, call: Callable[[], Awaitable[T]]) -> T:
        """``run`` for a coroutine function, pausing without blocking the event loop."""
        while True:
            try:
                return await call()
            except (self.exceptions.RedisError, self.exceptions.RedisClusterException) as exc:
                pause = self.pause(exc)
            await asyncio.sleep(pause)
