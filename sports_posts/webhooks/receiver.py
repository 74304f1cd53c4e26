"""The sans-IO webhook receiver: ``handle(body, headers)`` decides the answer; adapters move bytes.

Two modes (spec 6.5: the service waits 10 seconds for a 2xx, then retries 5 times over
about 31 minutes with the same payload, and a 2xx ends its retries):

* Without an inbox the handler runs *before* the answer, within ``handler_timeout``
  (default 8 s, under the service's 10): 202 once it returned, 503 when it raised or
  overran, so that the service retries instead of the event being lost. An overrunning
  handler keeps running and keeps its claim: a retry meanwhile answers 409, then 200 once
  it succeeded, or is processed if it failed.
* With an inbox the event is committed to it, then 202; a worker drains the inbox with its
  own retries, so a slow handler never holds the answer.

Other answers:

* 401: missing or bad signature; 400: a signed body that is not an event of spec 6.3, or
  whose ``sent_at`` is outside the replay window (``tolerance`` back, ``clock_skew`` ahead).
* 200: a duplicate of a story already processed, or an event the filter ignores.
* A retry that finds the story claimed by an attempt still in flight waits for it, up to
  ``in_flight_wait`` seconds: 200 once it completes, or processed here if it failed and
  released its claim.
* 409: still in flight after that wait. Not a 2xx on purpose: if that first attempt then
  fails, the service's next retry is processed instead of lost.
* 503: the dedupe store or inbox is unavailable, or lost its data; the service retries later.
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

from .. import _checks, _telemetry
from .._errors import ParameterError, WebhookPayloadError
from .._webhook_headers import WebhookHeaders, header_names_or_default
from . import _decision as decision
from ._common import secret_keys
from ._decision import WebhookResponse
from ._store import lease_of
from .dedupe import AsyncDedupeStore, DedupeStore
from .dedupe.memory import MemoryDedupeStore
from .errors import StoreDataLostError, StoreUnavailableError
from .events import (
    DEFAULT_CLOCK_SKEW,
    DEFAULT_TOLERANCE,
    WebhookEvent,
    check_replay_window,
    parse_event,
)
from .filters import SubscriptionFilter
from .inbox import Inbox, InboxEntry
from .signature import Headers, Payload, Secret, signature_and_delivery

_response = decision.response

__all__ = ["DEFAULT_HANDLER_TIMEOUT", "Handler", "WebhookReceiver", "WebhookResponse"]

logger: logging.Logger = logging.getLogger("sports_posts.webhooks")

Handler = Callable[[WebhookEvent], Union[None, Awaitable[None]]]
"""``def handler(event)`` or ``async def handler(event)``; raise to have the event retried."""

DEFAULT_HANDLER_TIMEOUT = 8.0
"""Seconds an answer may take without an inbox, handler included: under the service's 10."""
MAX_WORKERS_LIMIT = 1024
"""The most handler threads a receiver starts: more is a typo, not a pool size."""

COMPLETION_BACKOFF: tuple[float, ...] = (0.1, 0.5, 1.0, 2.0, 5.0)
"""Seconds between attempts to record a handler's outcome while the store is out; the last
repeats. The attempts go on while the entry (or claim) is still this worker's: its lease."""


_clock = time.monotonic  # the leases' clock here (a test moves it by hand)


def _pause(stopping: threading.Event, seconds: float) -> bool:
    """Wait ``seconds`` between two attempts to record an outcome; true when the receiver is closing."""
    return stopping.wait(seconds)


def _seconds(name: str, value: object, *, below: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < below:
        raise ParameterError(f"{name} must be between 0 and {below:g} seconds", parameter=name)
    return float(value)


def _delivery_id(receiver: WebhookReceiver, headers: Headers) -> Optional[str]:
    """The delivery id of a request, for its telemetry span: the one its handling read
    unless another request was read since (the headers are then read again)."""
    last_headers, delivery_id = receiver._last_read
    if last_headers is headers:
        return delivery_id
    return signature_and_delivery(headers, receiver.header_names)[1]


class WebhookReceiver:
    """Verify, de-duplicate and dispatch breaking-news webhooks for any web framework.

    ``store`` de-duplicates across retries (default: a ``MemoryDedupeStore``, which is
    per process; use SQLite or Redis when several processes receive). Without ``inbox`` the
    handler runs before the answer (see the module docstring). With ``inbox`` the event is
    committed before the 2xx and a worker thread drains it with retries, so an event
    acknowledged just before a crash is processed after restart; call ``start`` at
    start-up so that leftovers are drained without waiting for the next request
    (``start_worker=False`` leaves draining to ``run_inbox_once``, from a cron job say).

    A signed delivery sent more than ``tolerance`` seconds ago (default one hour, longer
    than the service's ~31 minutes of retries) or more than ``clock_skew`` seconds ahead is
    refused, so a captured request cannot be replayed once the store has forgotten it: the
    store's ``ttl`` must therefore outlive ``tolerance``. ``clock`` (epoch seconds) is for tests.

    ``header_names`` reads the signature and delivery id under other names than spec 6.2's,
    for a proxy or white-label deployment that renames them (``WebhookHeaders.with_prefix``).
    """

    def __init__(
        self,
        secret: Secret,
        handler: Handler,
        *,
        store: Optional[DedupeStore] = None,
        inbox: Optional[Inbox] = None,
        filter: Optional[SubscriptionFilter] = None,
        max_workers: int = 8,
        poll_interval: float = 2.0,
        start_worker: bool = True,
        in_flight_wait: float = 5.0,
        handler_timeout: float = DEFAULT_HANDLER_TIMEOUT,
        tolerance: float = DEFAULT_TOLERANCE,
        clock_skew: float = DEFAULT_CLOCK_SKEW,
        clock: Callable[[], float] = time.time,
        header_names: Optional[WebhookHeaders] = None,
    ) -> None:
        secret_keys(secret)  # fail at start-up on a bad secret, not on the first request
        # Checked and lower-cased once here, not on every request.
        self.header_names: WebhookHeaders = header_names_or_default(header_names)
        if not callable(handler):
            raise ParameterError("handler must be callable", parameter="handler")
        if store is not None and not isinstance(store, DedupeStore):
            raise ParameterError(
                "store needs claim, complete, release and is_complete", parameter="store"
            )
        self._secret = secret
        self._handler = handler
        self._is_async = _is_async_callable(handler)
        self.store: DedupeStore = store if store is not None else MemoryDedupeStore()
        # Stores with a native async path are awaited; the others (SQLite) go to a thread.
        self._async_store = self.store if isinstance(self.store, AsyncDedupeStore) else None
        # The memory store's async path is its sync one: called directly, no coroutine per call.
        self._memory_store = type(self.store) is MemoryDedupeStore
        self.inbox = inbox
        self.filter = filter
        self._max_workers = _checks.positive_int("max_workers", max_workers, maximum=MAX_WORKERS_LIMIT)
        self._poll_interval = _checks.seconds("poll_interval", poll_interval)  # None or -1 killed or spun the worker
        self._start_worker = _checks.flag("start_worker", start_worker)
        self._in_flight_wait = _seconds("in_flight_wait", in_flight_wait, below=10)
        self._handler_timeout = _seconds("handler_timeout", handler_timeout, below=10)
        if self._handler_timeout == 0:
            raise ParameterError("handler_timeout must be more than 0 seconds", parameter="handler_timeout")
        self._tolerance, self._clock_skew = check_replay_window(tolerance, clock_skew)
        self._check_memory_outlives_tolerance()
        self._clock = clock
        self._settled = threading.Condition()
        self._waiters = 0
        self._pool: Optional[ThreadPoolExecutor] = None
        self._lock = threading.Lock()
        self._futures: set[Future[bool]] = set()
        self._tasks: set[asyncio.Future[bool]] = set()  # handler tasks, and handlers waiting on a request's task
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._worker: Optional[threading.Thread] = None
        self._loops = threading.local()
        self._last_read: tuple[object, Optional[str]] = (None, None)  # headers, delivery id

    def _check_memory_outlives_tolerance(self) -> None:
        """A store that forgets a story before the replay window closes lets a replay through."""
        for owner, name in ((self.store, "ttl"), (self.inbox, "retention")):
            kept = getattr(owner, name, None)
            if isinstance(kept, (int, float)) and not isinstance(kept, bool) and kept <= self._tolerance:
                raise ParameterError(
                    f"the {type(owner).__name__}'s {name} ({kept:g} s) must be longer than the replay "
                    f"tolerance ({self._tolerance:g} s): a replay after it forgot a story would be processed",
                    parameter="tolerance",
                )

    def __repr__(self) -> str:
        name = getattr(self._handler, "__qualname__", type(self._handler).__name__)
        return (
            f"WebhookReceiver(secret='***', handler={name}, store={self.store!r}, "
            f"inbox={self.inbox!r}, header_names={self.header_names!r})"
        )

    # -- deciding ---------------------------------------------------------------------

    @_telemetry.traced_delivery(_delivery_id)
    def handle(self, body: Payload, headers: Headers) -> WebhookResponse:
        """Decide and produce the answer for one request (running the handler first when
        there is no inbox); never raises."""
        signature, delivery_id = signature_and_delivery(headers, self.header_names)
        self._last_read = (headers, delivery_id)
        started = time.monotonic()
        response, event = decision.verify(
            body, signature, delivery_id, secret=self._secret, header_names=self.header_names,
            tolerance=self._tolerance, clock_skew=self._clock_skew, now=self._clock(), filter=self.filter,
        )
        if event is None:
            assert response is not None
            return response
        key = event.dedupe_key
        try:
            claimed = self.store.claim(key)  # the usual delivery: one store call decides
            outcome = "claimed" if claimed else self._drive_claim(self._claim_steps(key, started), key)
        except Exception as exc:
            return decision.store_failed(key, event, exc)
        if outcome != "claimed":
            return decision.not_claimed(outcome, event)
        if self.inbox is not None:
            return self._enqueue(body, event, key)
        return self._run_inline(event, key, started)

    @_telemetry.traced_delivery_async(_delivery_id)
    async def handle_async(self, body: Payload, headers: Headers) -> WebhookResponse:
        """``handle`` for asyncio apps: stores with an async path are awaited on the loop,
        blocking ones (SQLite, the inbox) run in a thread; async handlers start at once."""
        signature, delivery_id = signature_and_delivery(headers, self.header_names)
        self._last_read = (headers, delivery_id)
        started = time.monotonic()
        # CPU only: no reason to leave the loop.
        response, event = decision.verify(
            body, signature, delivery_id, secret=self._secret, header_names=self.header_names,
            tolerance=self._tolerance, clock_skew=self._clock_skew, now=self._clock(), filter=self.filter,
        )
        if event is None:
            assert response is not None
            return response
        key = event.dedupe_key
        try:
            # The usual delivery: one store call decides (the memory store's, without a coroutine).
            claimed = self.store.claim(key) if self._memory_store else await self._astore("claim", key)
            outcome = "claimed" if claimed else await self._adrive_claim(self._claim_steps(key, started), key)
        except Exception as exc:
            return decision.store_failed(key, event, exc)
        if outcome != "claimed":
            return decision.not_claimed(outcome, event)
        if self.inbox is not None:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(None, self._enqueue, body, event, key)
        return await self._arun_inline(event, key, started)

    def _claim_steps(self, key: str, started: float) -> decision.Step:
        return decision.claim_steps(started + self._in_flight_wait)

    def _drive_claim(self, steps: decision.Step, key: str) -> str:
        answer: Any = None
        try:
            while True:
                operation, seconds = steps.send(answer)
                if operation == "wait":
                    with self._settled:
                        self._waiters += 1
                        try:
                            self._settled.wait(seconds)
                        finally:
                            self._waiters -= 1
                    answer = None
                else:
                    answer = getattr(self.store, operation)(key)
        except StopIteration as stop:
            return str(stop.value)

    async def _adrive_claim(self, steps: decision.Step, key: str) -> str:
        answer: Any = None
        try:
            while True:
                operation, seconds = steps.send(answer)
                if operation == "wait":
                    await asyncio.sleep(seconds)
                    answer = None
                else:
                    answer = await self._astore(operation, key)
        except StopIteration as stop:
            return str(stop.value)

    async def _astore(self, operation: str, key: str) -> Any:
        """A store call from the loop: awaited natively when the store has an async path."""
        if self._async_store is not None:
            return await getattr(self._async_store, "a" + operation)(key)
        return await asyncio.get_running_loop().run_in_executor(None, getattr(self.store, operation), key)

    def _enqueue(self, body: Payload, event: WebhookEvent, key: str) -> WebhookResponse:
        """Inbox mode: commit the event, then acknowledge; the worker runs the handler."""
        assert self.inbox is not None
        try:
            raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
            self.inbox.put(key, raw, event.delivery_id)
        except Exception:
            logger.exception("inbox write failed for %s: answering 503 so that it is retried", key)
            self._safely(self.store.release, key)
            return _response(503, "inbox_unavailable", event)
        self._safely(self.store.complete, key)  # the inbox owns it now, with its own retries
        logger.info("webhook %s stored in the inbox (delivery %s)", key, event.delivery_id)
        self._wake.set()
        try:
            self._ensure_worker()
        except Exception:  # stored durably: start() or run_inbox_once() drains it later
            logger.exception("could not start the inbox worker; %s waits in the inbox", key)
        return _response(202, "accepted", event)

    def _notify_settled(self) -> None:
        # Read without the lock: a waiter that starts just after this misses the notice and
        # polls again within 50 ms, which the usual request (nobody waiting) need not pay for.
        if self._waiters:
            with self._settled:
                self._settled.notify_all()

    # -- running the handler before the answer (no inbox) ---------------------------------

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._max_workers, thread_name_prefix="sports-posts-webhook")
            return self._pool

    def _submit(self, event: WebhookEvent, key: str) -> Future[bool]:
        future = self._executor().submit(self._run_sync, event, key)
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future: Future[bool]) -> None:
        with self._lock:
            self._futures.discard(future)

    def _budget(self, started: float) -> float:
        return max(0.0, started + self._handler_timeout - time.monotonic())

    def _run_inline(self, event: WebhookEvent, key: str, started: float) -> WebhookResponse:
        try:
            future = self._submit(event, key)
        except Exception:  # no thread could be started, say: the service must retry
            logger.exception("could not run the handler for %s: answering 503", key)
            self._safely(self.store.release, key)
            return _response(503, "error", event)
        try:
            succeeded = future.result(timeout=self._budget(started))
        except FutureTimeout:
            return decision.overran(event, key, self._handler_timeout)
        return decision.handled(succeeded, event, key)

    async def _arun_inline(self, event: WebhookEvent, key: str, started: float) -> WebhookResponse:
        """The handler before the answer, under ``handle_async``: a sync one in the pool; an
        async one as an eager task (3.12 on) or on the request's own task (before)."""
        loop = asyncio.get_running_loop()
        if self._is_async and not _EAGER_TASKS:
            return await self._arun_on_this_task(loop, event, key, started)
        running: asyncio.Future[bool]
        try:
            if self._is_async:
                task = _start_task(loop, self._run_async(event, key))
                if task.done():  # an eager start ran a handler that never awaited to the end
                    return decision.handled(task.result(), event, key)
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                running = task
            else:
                running = asyncio.wrap_future(self._submit(event, key))
        except Exception:
            logger.exception("could not run the handler for %s: answering 503", key)
            await self._asafely("release", key)
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
        run = _OnThisTask(self._run_async(event, key), loop, started + self._handler_timeout, self._tasks)
        succeeded = await run
        if run.detached is not None:
            self._tasks.add(run.detached)
            run.detached.add_done_callback(self._tasks.discard)
            return decision.overran(event, key, self._handler_timeout)
        return decision.handled(succeeded, event, key)

    def _call_handler(self, event: WebhookEvent) -> None:
        result = self._handler(event)
        if inspect.isawaitable(result):
            self._thread_loop().run_until_complete(_awaitable(result))

    def _run_sync(self, event: WebhookEvent, key: str) -> bool:
        try:
            self._call_handler(event)
        except Exception:
            logger.exception("webhook handler failed for %s; released for the next retry", key)
            self._safely(self.store.release, key)
            return False
        else:
            self._complete(key)
            return True
        finally:
            self._notify_settled()

    def _complete(self, key: str, first_failed: bool = False) -> None:
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
        until = _clock() + max(0.0, lease_of(self.store) - self._handler_timeout)
        try:
            future = self._executor().submit(self._record, "complete", key, until, lambda: self.store.complete(key))
        except RuntimeError:  # shutting down: the claim lapses and a retry runs the handler
            return
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(self._forget)

    async def _run_async(self, event: WebhookEvent, key: str) -> bool:
        try:
            result = self._handler(event)
            if inspect.isawaitable(result):
                await result
        except asyncio.CancelledError:  # the app is shutting down: let the next retry have it
            self._safely(self.store.release, key)
            self._notify_settled()
            raise
        except Exception:
            logger.exception("webhook handler failed for %s; released for the next retry", key)
            await self._asafely("release", key)
            self._notify_settled()
            return False
        if self._memory_store:
            self._safely(self.store.complete, key)
        else:
            try:
                await self._astore("complete", key)
            except Exception:
                logger.warning("dedupe store failed on complete for %s; trying again in the background", key,
                               exc_info=True)
                self._complete(key, first_failed=True)
        self._notify_settled()
        return True

    def _thread_loop(self) -> asyncio.AbstractEventLoop:
        """One event loop per worker thread for async handlers called from sync code."""
        loop: Optional[asyncio.AbstractEventLoop] = getattr(self._loops, "loop", None)
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            self._loops.loop = loop
        return loop

    @staticmethod
    def _safely(operation: Callable[[str], None], key: str) -> None:
        try:
            operation(key)
        except Exception:
            logger.exception("dedupe store failed on %s for %s", getattr(operation, "__name__", "?"), key)

    async def _asafely(self, operation: str, key: str) -> None:
        try:
            await self._astore(operation, key)
        except Exception:
            logger.exception("dedupe store failed on %s for %s", operation, key)

    # -- the inbox worker --------------------------------------------------------------

    def run_inbox_once(self, limit: int = 16) -> int:
        """Process the inbox rows that are due now; returns how many were taken. For tests and cron."""
        if self.inbox is None:
            raise ParameterError("this receiver has no inbox", parameter="inbox")
        # The entries' leases start now: their outcomes may be recorded until they lapse.
        until = _clock() + lease_of(self.inbox)
        entries = self.inbox.take_due(limit)
        if len(entries) <= 1:
            for entry in entries:
                self._process_entry(entry, until)
        else:
            for future in [self._executor().submit(self._process_entry, e, until) for e in entries]:
                future.result()
        return len(entries)

    def _process_entry(self, entry: InboxEntry, until: float) -> None:
        assert self.inbox is not None
        inbox = self.inbox
        try:
            event = parse_event(entry.body, entry.delivery_id)
        except WebhookPayloadError as exc:  # verified when stored; only a model change gets here
            logger.error("inbox entry %s no longer parses: %s", entry.key, exc)
            reason = str(exc)
            self._record("mark_failed", entry.key, until, lambda: inbox.mark_failed(entry, reason, permanent=True))
            return
        try:
            self._call_handler(event)
        except Exception as exc:
            logger.exception("webhook handler failed for %s (attempt %d)", entry.key, entry.attempts + 1)
            error = f"{type(exc).__name__}: {exc}"
            self._record("mark_failed", entry.key, until, lambda: inbox.mark_failed(entry, error))
        else:
            self._record("mark_done", entry.key, until, lambda: inbox.mark_done(entry))

    def _record(self, what: str, key: str, until: float, operation: Callable[[], object]) -> bool:
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
                if _clock() + delay >= until:
                    logger.error("%s of %s not recorded before its lease lapsed (%s): it will run again",
                                 what, key, exc)
                    return False
                logger.warning("%s of %s not recorded (%s); trying again in %.1f s", what, key, exc, delay)
                if _pause(self._stopping, delay):  # closing: one last attempt, then leave it to the lease
                    until = _clock()
            except Exception:  # not an outage: trying again would fail the same way
                logger.exception("%s of %s failed", what, key)
                return False
        return False  # pragma: no cover - a billion attempts

    def start(self) -> None:
        """Start the inbox worker thread (a no-op without an inbox); it drains leftovers first."""
        self._ensure_worker()

    def _ensure_worker(self) -> None:
        if self.inbox is None or not self._start_worker:
            return
        with self._lock:
            if self._worker is not None and self._worker.is_alive():
                return
            self._stopping.clear()
            self._worker = threading.Thread(target=self._worker_loop, name="sports-posts-inbox", daemon=True)
            self._worker.start()

    def _worker_loop(self) -> None:
        assert self.inbox is not None
        while not self._stopping.is_set():
            self._wake.clear()
            try:
                taken = self.run_inbox_once()
            except Exception:
                logger.exception("inbox worker failed; retrying after the poll interval")
                taken = 0
            if taken:
                continue
            wait = self._poll_interval
            try:
                due = self.inbox.next_due()
            except Exception:
                due = None
            if due is not None:
                wait = max(0.0, min(wait, due - time.time()))
            self._wake.wait(wait)

    # -- lifecycle ----------------------------------------------------------------------

    def wait_idle(self, timeout: Optional[float] = None) -> bool:
        """Wait until every dispatched sync handler has finished; false on timeout."""
        with self._lock:
            pending = list(self._futures)
        done, not_done = wait_futures(pending, timeout=timeout)
        return not not_done

    async def wait_idle_async(self, timeout: Optional[float] = None) -> bool:
        """Wait for async handler tasks and sync handlers alike; false on timeout."""
        tasks = list(self._tasks)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout)
            if pending:
                return False
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.wait_idle, timeout)

    def close(self, timeout: Optional[float] = 30.0) -> None:
        """Stop the inbox worker and wait for the handlers already dispatched."""
        self._stopping.set()
        self._wake.set()
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        self.wait_idle(timeout)
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    async def aclose(self, timeout: Optional[float] = 30.0) -> None:
        """[`close`][sports_posts.webhooks.WebhookReceiver.close] for asyncio apps: also waits for the async handler tasks."""
        await self.wait_idle_async(timeout)
        await asyncio.get_running_loop().run_in_executor(None, self.close, timeout)

    def __enter__(self) -> WebhookReceiver:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


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


def _is_async_callable(handler: Any) -> bool:
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)  # noqa: B004 - a class instance with async __call__
    )


async def _awaitable(result: Awaitable[None]) -> None:
    await result
