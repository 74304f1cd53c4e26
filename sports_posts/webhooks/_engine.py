"""The webhook receiver's handler engine: the thread pool, per-thread event loops and tasks
that run handlers, the notices a waiting retry reads, and the completion retry.

``WebhookReceiver`` (``receiver.py``) decides and answers; this engine runs what it hands on,
with or without an inbox (``_inbox_worker.py`` drains the inbox through it).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import sys
import threading
import time
from collections.abc import Awaitable, Coroutine, Generator
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
        self.tasks: set[asyncio.Future[bool]] = set()  # handler tasks, and handlers waiting on a request's task
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
        """The handler before the answer, under ``handle_async``: a sync one in the pool; an
        async one as an eager task (3.12 on) or on the request's own task (before)."""
        loop = asyncio.get_running_loop()
        if self.is_async and not _EAGER_TASKS:
            return await self._arun_on_this_task(loop, event, key, started)
        running: asyncio.Future[bool]
        try:
            if self.is_async:
                task = _start_task(loop, self._run_async(event, key))
                if task.done():  # an eager start ran a handler that never awaited to the end
                    return decision.handled(task.result(), event, key)
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
                running = task
            else:
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

    async def _arun_on_this_task(
        self, loop: asyncio.AbstractEventLoop, event: WebhookEvent, key: str, started: float
    ) -> WebhookResponse:
        """An ``async def`` handler where asyncio has no eager tasks (Python 3.9 to 3.11): it
        runs on the request's own task, in a context of its own, so that one that never waits
        answers without a task or a trip through the event loop. If it is still running at
        ``handler_timeout`` it goes on as a task of its own (keeping its claim) and the answer
        is 503, as from 3.12 on."""
        run = _OnThisTask(self._run_async(event, key), loop, started + self._handler_timeout, self.tasks)
        succeeded = await run
        if run.detached is not None:
            self.tasks.add(run.detached)
            run.detached.add_done_callback(self.tasks.discard)
            return decision.overran(event, key, self._handler_timeout)
        return decision.handled(succeeded, event, key)

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

    async def _run_async(self, event: WebhookEvent, key: str) -> bool:
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
            self.notify_settled()
            return False
        if self.memory_store:
            self.safely(self.store.complete, key)
        else:
            try:
                await self.astore("complete", key)
            except Exception:
                logger.warning("dedupe store failed on complete for %s; trying again in the background", key,
                               exc_info=True)
                self.complete(key, first_failed=True)
        self.notify_settled()
        return True

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
"""Whether asyncio starts a task eagerly (``eager_start``); before, handlers run on the request's task."""


def _start_task(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, bool]) -> asyncio.Task[bool]:
    """A task that runs at once up to its first real suspension (Python 3.12's eager start),
    so a handler that never waits answers without a trip through the event loop."""
    if sys.version_info >= (3, 12):  # a check type checkers read, so 3.9 to 3.11 pass too
        return asyncio.Task(coro, loop=loop, eager_start=True)
    else:  # an else (not code after the if) is what type checkers skip on the newer Pythons
        return loop.create_task(coro)


class _OnThisTask:
    """Await a handler's coroutine on the awaiting task, step by step in the coroutine's own
    context, up to ``deadline`` (``time.monotonic``).

    While the coroutine waits on a future, the task waits on a stand-in that the future's
    completion settles, so that at the deadline the task can stop waiting without touching
    the handler's future: ``detached`` is then a new task that carries the coroutine on from
    where it stopped, and the await gives False. A cancellation of the awaiting task reaches
    the coroutine as a task's would: the future it waits on is cancelled. Only a coroutine
    that waits pays for a stand-in, the deadline's timer and an entry in ``tracked`` (which
    ``wait_idle_async`` waits on)."""

    __slots__ = ("_coro", "_context", "_loop", "_deadline", "_tracked", "_stand_in", "_overran", "detached")

    def __init__(
        self, coro: Coroutine[Any, Any, bool], loop: asyncio.AbstractEventLoop, deadline: float,
        tracked: set[asyncio.Future[bool]],
    ) -> None:
        self._coro = coro
        self._context = contextvars.copy_context()
        self._loop = loop
        self._deadline = deadline
        self._tracked = tracked
        self._stand_in: Optional[asyncio.Future[None]] = None
        self._overran = False
        self.detached: Optional[asyncio.Task[bool]] = None

    def _on_deadline(self) -> None:
        self._overran = True
        stand_in = self._stand_in
        if stand_in is not None and not stand_in.done():
            stand_in.set_result(None)

    def __await__(self) -> Generator[Any, Any, bool]:
        coro, run = self._coro, self._context.run
        step: Callable[[Any], Any] = coro.send
        value: Any = None
        timer: Optional[asyncio.TimerHandle] = None
        running: Optional[asyncio.Future[bool]] = None
        try:
            while True:
                try:
                    waited = run(step, value)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                step, value = coro.send, None
                if timer is None:  # the first wait: from now on the deadline matters
                    timer = self._loop.call_later(max(0.0, self._deadline - time.monotonic()), self._on_deadline)
                    running = self._loop.create_future()
                    self._tracked.add(running)
                if waited is None:  # a bare yield (asyncio.sleep(0)): the loop's turn
                    try:
                        yield None
                    except BaseException as exc:  # this task was cancelled meanwhile
                        step, value = coro.throw, exc
                        continue
                else:
                    problem = _bad_wait(waited, self._loop)
                    if problem is not None:  # what a task throws into a coroutine that yields so
                        step, value = coro.throw, problem
                        continue
                    waited._asyncio_future_blocking = False  # taken, as a task takes it
                    error = yield from self._wait_on(waited)
                    if error is not None:  # cancelled when what it waited on was done already
                        step, value = coro.throw, error
                        continue
                if self._overran:
                    if waited is not None:
                        waited._asyncio_future_blocking = True  # handed on: the new task takes it
                    self.detached = self._loop.create_task(_Resumed(coro, waited, self._context))
                    return False
        finally:
            if timer is not None:
                timer.cancel()
            if running is not None:
                self._tracked.discard(running)
                running.set_result(True)

    def _wait_on(self, waited: asyncio.Future[Any]) -> Generator[Any, Any, Optional[BaseException]]:
        """Wait until ``waited`` is done or the deadline passed, through stand-ins. A
        cancellation of this task cancels ``waited`` and waits for it to be done, as a task
        does; when ``waited`` was done already, the cancellation is returned to be thrown in."""
        while True:
            stand_in: asyncio.Future[None] = self._loop.create_future()
            relay = functools.partial(_settle, stand_in)
            waited.add_done_callback(relay)
            self._stand_in = stand_in
            try:
                yield from stand_in
            except asyncio.CancelledError as exc:  # this task was cancelled
                waited.remove_done_callback(relay)
                if not waited.cancel():
                    return exc
                if waited.done() or self._overran:
                    return None
                continue  # a task being cancelled: wait until it has ended
            finally:
                self._stand_in = None
            if not waited.done():  # the deadline, not the future, woke this task
                waited.remove_done_callback(relay)
            return None


def _bad_wait(waited: Any, loop: asyncio.AbstractEventLoop) -> Optional[RuntimeError]:
    """The error a task gives a coroutine that yielded ``waited``, or None for a future it can wait on."""
    blocking = getattr(waited, "_asyncio_future_blocking", None)
    if blocking is None:
        return RuntimeError(f"Task got bad yield: {waited!r}")
    if not blocking:
        return RuntimeError(f"yield was used instead of yield from in task with {waited!r}")
    get_loop = getattr(waited, "get_loop", None)
    if (get_loop() if get_loop is not None else getattr(waited, "_loop", loop)) is not loop:
        return RuntimeError(f"Task got Future {waited!r} attached to a different loop")
    return None


def _settle(stand_in: asyncio.Future[None], waited: object) -> None:
    if not stand_in.done():
        stand_in.set_result(None)


class _Resumed(Coroutine[Any, Any, bool]):
    """The rest of a coroutine that the request's task started, as the coroutine of a task of
    its own: its first step hands the task what the coroutine waits on (a future, or None for
    a bare yield); each later wake-up, value or exception, goes on to the coroutine, in the
    coroutine's own context. A cancellation before that first step cancels what it waits on,
    as a task already waiting on it would."""

    __slots__ = ("_coro", "_waiting", "_context", "_started")

    def __init__(self, coro: Coroutine[Any, Any, bool], waiting: Any, context: contextvars.Context) -> None:
        self._coro, self._waiting, self._context = coro, waiting, context
        self._started = False

    def send(self, value: Any) -> Any:
        if not self._started:
            self._started = True
            return self._waiting
        return self._context.run(self._coro.send, value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        exc = typ if val is None else val
        if not self._started:
            self._started = True
            waiting = self._waiting
            if isinstance(exc, asyncio.CancelledError) and waiting is not None and waiting.cancel():
                return self._context.run(self._coro.send, None)  # it reads the cancellation itself
        return self._context.run(self._coro.throw, exc)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, Any, bool]:
        """The same steps for an ``await`` (a task drives ``send`` and ``throw`` itself)."""
        value: Any = None
        error: Optional[BaseException] = None
        while True:
            try:
                yielded = self.send(value) if error is None else self.throw(error)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            try:
                value, error = (yield yielded), None
            except GeneratorExit:
                self.close()
                raise
            except BaseException as exc:
                value, error = None, exc


def is_async_callable(handler: Any) -> bool:
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)  # noqa: B004 - a class instance with async __call__
    )


async def _awaitable(result: Awaitable[None]) -> None:
    await result
