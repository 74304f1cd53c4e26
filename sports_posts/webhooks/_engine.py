"""The webhook receiver's handler engine: the thread pool, per-thread event loops and tasks
that run handlers, the notices a waiting retry reads, and the completion retry.

``WebhookReceiver`` (``receiver.py``) decides and answers; this engine runs what it hands on,
with or without an inbox (``_inbox_worker.py`` drains the inbox through it).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import threading
import time
from collections.abc import Awaitable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import wait as wait_futures
from typing import Any, Callable, Optional, Union

from .. import _scoped
from . import _decision as decision
from ._decision import WebhookResponse
from ._store import lease_of
from .dedupe._protocol import AsyncDedupeStore, DedupeStore
from .dedupe.memory import MemoryDedupeStore
from .errors import StoreDataLostError, StoreUnavailableError
from .events import WebhookEvent

__all__ = ["COMPLETION_BACKOFF", "MAX_WORKERS_LIMIT", "HandlerEngine", "Pause", "is_async_callable"]

logger: logging.Logger = logging.getLogger("sports_posts.webhooks")

_response = decision.response

MAX_WORKERS_LIMIT = 1024
"""The most handler threads a receiver starts: more is a typo, not a pool size."""

COMPLETION_BACKOFF: tuple[float, ...] = (0.1, 0.5, 1.0, 2.0, 5.0)
"""Seconds between attempts to record a handler's outcome while the store is out; the last
repeats. The attempts go on while the entry (or claim) is still this worker's: its lease."""

Pause = Callable[[threading.Event, float], bool]
"""Wait the seconds given between two attempts to record an outcome; true when closing."""


class HandlerEngine:
    """Runs a receiver's handler: sync ones in a thread pool (async ones called from there on
    a per-thread loop), async ones as tasks of the caller's loop, and records their outcome
    in the dedupe store, retrying an outage with backoff (``clock``, ``pause``) while the
    claim is still this receiver's. ``stopping`` is the receiver's: set when it closes."""

    def __init__(
        self,
        handler: Callable[[WebhookEvent], Union[None, Awaitable[None]]],
        store: DedupeStore,
        *,
        max_workers: int,
        handler_timeout: float,
        stopping: threading.Event,
        clock: Callable[[], float] = time.monotonic,
        pause: Pause = lambda stopping, seconds: stopping.wait(seconds),
        executor: Optional[Callable[[], ThreadPoolExecutor]] = None,
    ) -> None:
        # Where handlers are submitted: the pool, unless the receiver stands in front of it.
        self.executor: Callable[[], ThreadPoolExecutor] = executor if executor is not None else self.pool
        self.handler = handler
        self.is_async = is_async_callable(handler)
        self.store = store
        # Stores with a native async path are awaited; the others (SQLite) go to a thread.
        self._async_store = store if isinstance(store, AsyncDedupeStore) else None
        # The memory store's async path is its sync one: called directly, no coroutine per call.
        self.memory_store = type(store) is MemoryDedupeStore
        self._max_workers = max_workers
        self._handler_timeout = handler_timeout
        self._stopping = stopping
        self._clock = clock
        self._pause = pause
        self._settled = threading.Condition()
        self._waiters = 0
        # The handler threads belong to the process that started them: a forked child (gunicorn
        # --preload, Celery prefork) starts its own on first use; the parent's are left alone.
        self._pool: _scoped.PerProcess[ThreadPoolExecutor] = _scoped.PerProcess(self._new_pool)
        self._lock = threading.Lock()
        self._futures: set[Future[bool]] = set()
        self.tasks: set[asyncio.Task[bool]] = set()  # async handlers' tasks still running
        self._loops = threading.local()

    def after_fork(self, stopping: threading.Event) -> None:
        """In a forked child (the receiver calls it from ``_scoped.on_fork``): the parent's
        threads, their futures and tasks, and the loops of its threads do not exist here, and a
        lock or condition may have been held by one of them at the fork; all are made anew.
        The pool is ``PerProcess``: the child starts its own threads on first use."""
        self._stopping = stopping
        self._lock = threading.Lock()
        self._settled = threading.Condition()
        self._waiters = 0
        self._futures = set()
        self.tasks = set()
        self._loops = threading.local()

    def wait_settled(self, seconds: float) -> None:
        """Wait up to ``seconds`` for a handler of this receiver to settle (a retry waiting on its claim)."""
        with self._settled:
            self._waiters += 1
            try:
                self._settled.wait(seconds)
            finally:
                self._waiters -= 1

    async def astore(self, operation: str, key: str) -> Any:
        """A store call from the loop: awaited natively when the store has an async path."""
        if self._async_store is not None:
            return await getattr(self._async_store, "a" + operation)(key)
        return await asyncio.get_running_loop().run_in_executor(None, getattr(self.store, operation), key)

    def notify_settled(self) -> None:
        # Read without the lock: a waiter that starts just after this misses the notice and
        # polls again within 50 ms, which the usual request (nobody waiting) need not pay for.
        if self._waiters:
            with self._settled:
                self._settled.notify_all()

    def pool(self) -> ThreadPoolExecutor:
        """This process's handler threads, started on first use."""
        return self._pool.get()

    def _new_pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(self._max_workers, thread_name_prefix="sports-posts-webhook")

    def _submit(self, event: WebhookEvent, key: str) -> Future[bool]:
        future = self.executor().submit(self._run_sync, event, key)
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future: Future[bool]) -> None:
        with self._lock:
            self._futures.discard(future)

    def _budget(self, started: float) -> float:
        return max(0.0, started + self._handler_timeout - time.monotonic())

    def run_inline(self, event: WebhookEvent, key: str, started: float) -> WebhookResponse:
        try:
            future = self._submit(event, key)
        except Exception:  # no thread could be started, say: the service must retry
            logger.exception("could not run the handler for %s: answering 503", key)
            self.safely(self.store.release, key)
            return _response(503, "error", event)
        try:
            succeeded = future.result(timeout=self._budget(started))
        except FutureTimeout:
            return decision.overran(event, key, self._handler_timeout)
        return decision.handled(succeeded, event, key)

    async def arun_inline(self, event: WebhookEvent, key: str, started: float) -> WebhookResponse:
        """The handler before the answer, under ``handle_async``: a sync one in the pool, an
        async one as a task of this loop (``arun_task``)."""
        if self.is_async:
            return await self.arun_task(event, key, started)
        try:
            running = asyncio.wrap_future(self._submit(event, key))
        except Exception:
            logger.exception("could not run the handler for %s: answering 503", key)
            await self.asafely("release", key)
            return _response(503, "error", event)
        # asyncio.wait, unlike wait_for, leaves an overrunning handler running: it keeps
        # its claim and settles it itself.
        done, _ = await asyncio.wait({running}, timeout=self._budget(started))
        if not done:
            return decision.overran(event, key, self._handler_timeout)
        return decision.handled(running.result(), event, key)

    async def arun_task(self, event: WebhookEvent, key: str, started: float) -> WebhookResponse:
        """An ``async def`` handler as a task of this loop. From Python 3.12 the task starts
        eagerly, so a handler that never waits is done before the answer without a trip through
        the loop; before, it starts on the loop's next turn (the request takes that one turn
        too), and a cancelled request cancels it.
        The request waits on ``answer``, which the task settles as the handler ends (no callback
        and no ``asyncio.wait`` between them) or a timer at ``handler_timeout``; an overrunning
        handler goes on as its task, keeping its claim, and the answer is 503. A handler done
        at once (an eager start) needs neither: ``waiting`` gets the task and ``answer`` only
        once the request waits for it."""
        waiting: list[Any] = []
        try:
            task = _start_task(self._run_answering(event, key, waiting))
        except Exception:
            logger.exception("could not run the handler for %s: answering 503", key)
            await self.asafely("release", key)
            return _response(503, "error", event)
        if task.done():  # an eager start ran a handler that never waited to the end
            return decision.handled(task.result(), event, key)
        self.tasks.add(task)  # until the handler ends (``_run_answering``): no callback to schedule
        waiting.append(task)
        try:
            if not _EAGER_TASKS:
                # One turn of the loop, in which the handler's first step runs before this
                # task's next (both wait in the loop's queue, in that order): a handler that
                # never waits is then done, with no timer and no wake-up through ``answer``.
                await asyncio.sleep(0)
                if task.done():
                    return decision.handled(task.result(), event, key)
            loop = asyncio.get_running_loop()
            answer: asyncio.Future[Optional[bool]] = loop.create_future()
            waiting.append(answer)  # the task, suspended until this request waits, settles it
            timer = loop.call_later(self._budget(started), _settle, answer, None)
            try:
                succeeded = await answer
            finally:
                timer.cancel()
        except asyncio.CancelledError:
            if not task.done() and not _EAGER_TASKS:  # the request was cancelled, not the handler
                await _cancel(task)
                self.tasks.discard(task)  # in case it was cancelled before its first step
            raise
        if succeeded is None:
            return decision.overran(event, key, self._handler_timeout)
        return decision.handled(succeeded, event, key)

    async def _run_answering(self, event: WebhookEvent, key: str, waiting: list[Any]) -> bool:
        """Run the async handler and record its outcome in the store; ``waiting`` is
        ``arun_task``'s: once the request waits, the task (to leave ``tasks`` as it ends) and
        the answer to settle (cancelled when the handler's task was)."""
        try:
            try:
                result = self.handler(event)
                if inspect.isawaitable(result):
                    await result
            except asyncio.CancelledError:  # the app is shutting down: let the next retry have it
                self.safely(self.store.release, key)
                self.notify_settled()
                raise
            except Exception:
                logger.exception("webhook handler failed for %s; released for the next retry", key)
                await self.asafely("release", key)
                succeeded = False
            else:
                succeeded = True
                if self.memory_store:
                    self.safely(self.store.complete, key)
                else:
                    try:
                        await self.astore("complete", key)
                    except Exception:
                        logger.warning("dedupe store failed on complete for %s; trying again in the background",
                                       key, exc_info=True)
                        self.complete(key, first_failed=True)
            self.notify_settled()
        except BaseException:
            if len(waiting) > 1:
                waiting[1].cancel()
            raise
        finally:
            if waiting:
                self.tasks.discard(waiting[0])
        if len(waiting) > 1:
            _settle(waiting[1], succeeded)
        return succeeded

    def call_handler(self, event: WebhookEvent) -> None:
        result = self.handler(event)
        if inspect.isawaitable(result):
            self._thread_loop().run_until_complete(_awaitable(result))

    def _run_sync(self, event: WebhookEvent, key: str) -> bool:
        try:
            self.call_handler(event)
        except Exception:
            logger.exception("webhook handler failed for %s; released for the next retry", key)
            self.safely(self.store.release, key)
            return False
        else:
            self.complete(key)
            return True
        finally:
            self.notify_settled()

    def complete(self, key: str, first_failed: bool = False) -> None:
        """Mark ``key`` done; if the store is out, keep trying in the background (the answer
        does not wait) while the claim is still this receiver's, so that a later retry of
        the story finds it done instead of running the handler again."""
        if not first_failed:
            try:
                self.store.complete(key)
                return
            except Exception:
                logger.warning("dedupe store failed on complete for %s; trying again in the background", key,
                               exc_info=True)
        until = self._clock() + max(0.0, lease_of(self.store) - self._handler_timeout)
        try:
            future = self.executor().submit(self.record, "complete", key, until, lambda: self.store.complete(key))
        except RuntimeError:  # shutting down: the claim lapses and a retry runs the handler
            return
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(self._forget)

    def _thread_loop(self) -> asyncio.AbstractEventLoop:
        """One event loop per worker thread for async handlers called from sync code."""
        loop: Optional[asyncio.AbstractEventLoop] = getattr(self._loops, "loop", None)
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            self._loops.loop = loop
        return loop

    @staticmethod
    def safely(operation: Callable[[str], None], key: str) -> None:
        try:
            operation(key)
        except Exception:
            logger.exception("dedupe store failed on %s for %s", getattr(operation, "__name__", "?"), key)

    async def asafely(self, operation: str, key: str) -> None:
        try:
            await self.astore(operation, key)
        except Exception:
            logger.exception("dedupe store failed on %s for %s", operation, key)

    def record(self, what: str, key: str, until: float, operation: Callable[[], object]) -> bool:
        """Record a handler's outcome, retrying a store outage with backoff until ``until``
        (monotonic: when the entry's or claim's lease lapses), so that a handler that
        succeeded is not run again because the store was briefly out. False when it could
        not be recorded (the entry is taken again once its lease lapses)."""
        for attempt in range(1 << 30):
            try:
                operation()
                return True
            except StoreDataLostError:
                logger.exception("%s of %s not recorded: the store lost its data", what, key)
                return False
            except StoreUnavailableError as exc:
                delay = COMPLETION_BACKOFF[min(attempt, len(COMPLETION_BACKOFF) - 1)]
                if self._clock() + delay >= until:
                    logger.error("%s of %s not recorded before its lease lapsed (%s): it will run again",
                                 what, key, exc)
                    return False
                logger.warning("%s of %s not recorded (%s); trying again in %.1f s", what, key, exc, delay)
                if self._pause(self._stopping, delay):  # closing: one last attempt, then leave it to the lease
                    until = self._clock()
            except Exception:  # not an outage: trying again would fail the same way
                logger.exception("%s of %s failed", what, key)
                return False
        return False  # pragma: no cover - a billion attempts

    def wait_idle(self, timeout: Optional[float] = None) -> bool:
        """Wait until every dispatched sync handler has finished; false on timeout."""
        with self._lock:
            pending = list(self._futures)
        done, not_done = wait_futures(pending, timeout=timeout)
        return not not_done

    async def wait_idle_async(self, timeout: Optional[float] = None) -> bool:
        """Wait for async handler tasks and sync handlers alike; false on timeout."""
        tasks = list(self.tasks)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout)
            if pending:
                return False
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.wait_idle, timeout)

    def shutdown(self) -> None:
        """Stop the thread pool once the handlers already dispatched have ended."""
        pool = self._pool.take()
        if pool is not None:
            pool.shutdown(wait=True)


_EAGER_TASKS = sys.version_info >= (3, 12)
"""Whether asyncio starts a task eagerly (``eager_start``, Python 3.12 on)."""


def _start_task(coro: Coroutine[Any, Any, bool]) -> asyncio.Task[bool]:
    """A task of the running loop that, from Python 3.12, runs at once up to its first real
    suspension (an eager start), so a handler that never waits answers without a trip
    through the event loop; before 3.12, a task like any other, started on the loop's next turn."""
    if sys.version_info >= (3, 12):  # a check type checkers read, so 3.9 to 3.11 pass too
        return asyncio.Task(coro, loop=asyncio.get_running_loop(), eager_start=True)
    else:  # an else (not code after the if) is what type checkers skip on the newer Pythons
        return asyncio.get_running_loop().create_task(coro)


def _settle(answer: asyncio.Future[Optional[bool]], value: Optional[bool]) -> None:
    if not answer.done():
        answer.set_result(value)


async def _cancel(running: asyncio.Future[bool]) -> None:
    """Cancel a handler's task, for a request cancelled before Python 3.12 (where the handler
    used to run on the request's own task, which such a cancellation stopped), and wait until
    it has ended: it releases its claim for the next retry as it goes."""
    running.cancel()
    await asyncio.wait({running})


def is_async_callable(handler: Any) -> bool:
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)  # noqa: B004 - a class instance with async __call__
    )


async def _awaitable(result: Awaitable[None]) -> None:
    await result
