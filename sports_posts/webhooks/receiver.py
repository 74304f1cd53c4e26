"""The sans-IO webhook receiver: ``handle(body, headers)`` decides the answer; adapters move bytes.

The answer is decided before the customer's handler runs (spec 6.5: answer 2xx within 10
seconds, process asynchronously). The handler then runs in a thread pool (sync) or as a task
(async). Answers:

* 401: missing or bad signature; 400: a signed body that is not an event of spec 6.3.
* 202: accepted (claimed, and stored when there is an inbox).
* 200: a duplicate of a story already processed, or an event the filter ignores.
* A retry that finds the story claimed by an attempt still in flight waits for it, up to
  ``in_flight_wait`` seconds (well inside the service's 10): 200 once it completes, or
  processed here if it failed and released its claim.
* 409: still in flight after that wait. Not a 2xx on purpose: if that first attempt then
  fails, the service's next retry is processed instead of lost.
* 503: the dedupe store or inbox is unavailable; the service retries later.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
import time
from collections.abc import Awaitable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from .._errors import ParameterError, SignatureVerificationError, WebhookPayloadError
from ._inbox_protocol import Inbox
from .dedupe import DedupeStore, MemoryDedupeStore
from .events import WebhookEvent, construct_event, parse_event
from .filters import SubscriptionFilter
from .inbox import InboxEntry
from .signature import Headers, Payload, Secret, _secret_keys

__all__ = ["Handler", "WebhookReceiver", "WebhookResponse"]

logger = logging.getLogger("sports_posts.webhooks")

Handler = Callable[[WebhookEvent], Union[None, Awaitable[None]]]
"""``def handler(event)`` or ``async def handler(event)``; raise to have the event retried."""

_JSON = (("content-type", "application/json"),)


@dataclass(frozen=True)
class WebhookResponse:
    """What to answer the service: any framework turns this into its own response.

    Unpacks as ``status, body = receiver.handle(...)``.
    """

    status_code: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = _JSON
    outcome: str = ""
    """``accepted``, ``duplicate``, ``in_progress``, ``ignored``, ``invalid_signature``, ..."""
    event: Optional[WebhookEvent] = field(default=None, repr=False, compare=False)

    @property
    def status(self) -> int:
        """The HTTP status (same as ``status_code``)."""
        return self.status_code

    @property
    def ok(self) -> bool:
        """Whether the service will count this answer as a success (any 2xx)."""
        return 200 <= self.status_code < 300

    def __iter__(self) -> Iterator[Any]:
        return iter((self.status_code, self.body))


def _response(status_code: int, outcome: str, event: Optional[WebhookEvent] = None) -> WebhookResponse:
    ok = 200 <= status_code < 300
    body = json.dumps({"ok": ok, "status": outcome}, separators=(",", ":")).encode()
    return WebhookResponse(status_code, body, _JSON, outcome, event)


class WebhookReceiver:
    """Verify, de-duplicate and dispatch breaking-news webhooks for any web framework.

    ``store`` de-duplicates across retries (default: a :class:`MemoryDedupeStore`, which is
    per process; use SQLite or Redis when several processes receive). With ``inbox`` the
    event is committed before the 2xx and a worker thread drains it with retries, so an
    event acknowledged just before a crash is processed after restart; call :meth:`start`
    at start-up so that leftovers are drained without waiting for the next request
    (``start_worker=False`` leaves draining to :meth:`run_inbox_once`, from a cron job say).
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
    ) -> None:
        _secret_keys(secret)  # fail at start-up on a bad secret, not on the first request
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
        self.inbox = inbox
        self.filter = filter
        self._max_workers = max_workers
        self._poll_interval = poll_interval
        self._start_worker = start_worker
        if isinstance(in_flight_wait, bool) or not isinstance(in_flight_wait, (int, float)) or not 0 <= in_flight_wait < 10:
            raise ParameterError("in_flight_wait must be between 0 and 10 seconds", parameter="in_flight_wait")
        self._in_flight_wait = float(in_flight_wait)
        self._settled = threading.Condition()
        self._pool: Optional[ThreadPoolExecutor] = None
        self._lock = threading.Lock()
        self._futures: set[Future[None]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._worker: Optional[threading.Thread] = None
        self._loops = threading.local()

    def __repr__(self) -> str:
        name = getattr(self._handler, "__qualname__", type(self._handler).__name__)
        return (
            f"WebhookReceiver(secret='***', handler={name}, store={self.store!r}, "
            f"inbox={self.inbox!r})"
        )

    # -- deciding ---------------------------------------------------------------------

    def handle(self, body: Payload, headers: Headers) -> WebhookResponse:
        """Decide the answer for one request, then hand the event to the handler; never raises."""
        return self._dispatch(*self._decide(body, headers))

    def _dispatch(self, response: WebhookResponse, key: Optional[str]) -> WebhookResponse:
        """Hand a claimed event to the pool, or wake the inbox worker; 503 if neither can run."""
        try:
            if key is not None and response.event is not None:
                self._dispatch_sync(response.event, key)
            elif response.outcome == "accepted":
                self._wake.set()
                self._ensure_worker()
        except Exception:  # no thread could be started, say: the service must retry
            logger.exception("could not dispatch webhook %s: answering 503", key)
            if key is not None:
                self._safely(self.store.release, key)
            return _response(503, "error", response.event)
        return response

    async def handle_async(self, body: Payload, headers: Headers) -> WebhookResponse:
        """:meth:`handle` for asyncio apps: store I/O runs off the loop, async handlers as tasks."""
        loop = asyncio.get_running_loop()
        response, key = await loop.run_in_executor(None, self._decide, body, headers)
        if key is not None and response.event is not None and self._is_async:
            task = loop.create_task(self._run_async(response.event, key))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return response
        return self._dispatch(response, key)

    def _decide(self, body: Payload, headers: Headers) -> tuple[WebhookResponse, Optional[str]]:
        """The answer, plus the claimed key when the handler still has to run (no inbox)."""
        try:
            event = construct_event(body, headers, self._secret)
        except SignatureVerificationError as exc:
            logger.warning("webhook rejected (401): %s", exc)
            return _response(401, "invalid_signature"), None
        except WebhookPayloadError as exc:
            logger.warning("signed webhook body rejected (400): %s", exc)
            return _response(400, "invalid_payload"), None
        except Exception:  # a bug must not become a 500 with a traceback for the sender
            logger.exception("webhook could not be verified")
            return _response(503, "error"), None
        key = event.dedupe_key
        delivery = event.delivery_id
        if self.filter is not None and not self.filter.matches(event):
            logger.info("webhook %s (delivery %s) ignored by the filter", key, delivery)
            return _response(200, "ignored", event), None
        try:
            outcome = self._claim(key)
            if outcome == "duplicate":
                logger.info("duplicate webhook %s (delivery %s)", key, delivery)
                return _response(200, "duplicate", event), None
            if outcome == "in_progress":
                logger.info("webhook %s still in flight elsewhere (delivery %s): 409", key, delivery)
                return _response(409, "in_progress", event), None
        except Exception:
            logger.exception("dedupe store failed for %s: answering 503 so that it is retried", key)
            return _response(503, "store_unavailable", event), None
        if self.inbox is None:
            logger.info("webhook %s accepted (delivery %s)", key, delivery)
            return _response(202, "accepted", event), key
        try:
            raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
            self.inbox.put(key, raw, delivery)
        except Exception:
            logger.exception("inbox write failed for %s: answering 503 so that it is retried", key)
            self._safely(self.store.release, key)
            return _response(503, "inbox_unavailable", event), None
        self._safely(self.store.complete, key)  # the inbox owns it now, with its own retries
        logger.info("webhook %s stored in the inbox (delivery %s)", key, delivery)
        return _response(202, "accepted", event), None

    def _claim(self, key: str) -> str:
        """``claimed``, ``duplicate``, or ``in_progress`` after waiting for an attempt in flight."""
        deadline = time.monotonic() + self._in_flight_wait
        while True:
            if self.store.claim(key):
                return "claimed"
            if self.store.is_complete(key):
                return "duplicate"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "in_progress"
            # Woken at once when a handler of this process settles; another process's
            # claim is polled, since the store offers nothing to wait on.
            with self._settled:
                self._settled.wait(min(remaining, 0.05))

    def _notify_settled(self) -> None:
        with self._settled:
            self._settled.notify_all()

    # -- running the handler without an inbox ------------------------------------------

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._max_workers, thread_name_prefix="sports-posts-webhook")
            return self._pool

    def _dispatch_sync(self, event: WebhookEvent, key: str) -> None:
        future = self._executor().submit(self._run_sync, event, key)
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future: Future[None]) -> None:
        with self._lock:
            self._futures.discard(future)

    def _call_handler(self, event: WebhookEvent) -> None:
        result = self._handler(event)
        if inspect.isawaitable(result):
            self._thread_loop().run_until_complete(_awaitable(result))

    def _run_sync(self, event: WebhookEvent, key: str) -> None:
        try:
            self._call_handler(event)
        except Exception:
            logger.exception("webhook handler failed for %s; released for the next retry", key)
            self._safely(self.store.release, key)
        else:
            self._safely(self.store.complete, key)
        finally:
            self._notify_settled()

    async def _run_async(self, event: WebhookEvent, key: str) -> None:
        loop = asyncio.get_running_loop()
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
            await loop.run_in_executor(None, self._safely, self.store.release, key)
        else:
            await loop.run_in_executor(None, self._safely, self.store.complete, key)
        self._notify_settled()

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

    # -- the inbox worker --------------------------------------------------------------

    def run_inbox_once(self, limit: int = 16) -> int:
        """Process the inbox rows that are due now; returns how many were taken. For tests and cron."""
        if self.inbox is None:
            raise ParameterError("this receiver has no inbox", parameter="inbox")
        entries = self.inbox.take_due(limit)
        if len(entries) <= 1:
            for entry in entries:
                self._process_entry(entry)
        else:
            for future in [self._executor().submit(self._process_entry, e) for e in entries]:
                future.result()
        return len(entries)

    def _process_entry(self, entry: InboxEntry) -> None:
        assert self.inbox is not None
        try:
            event = parse_event(entry.body, entry.delivery_id)
        except WebhookPayloadError as exc:  # verified when stored; only a model change gets here
            logger.error("inbox entry %s no longer parses: %s", entry.key, exc)
            self.inbox.mark_failed(entry, str(exc), permanent=True)
            return
        try:
            self._call_handler(event)
        except Exception as exc:
            state = self.inbox.mark_failed(entry, f"{type(exc).__name__}: {exc}")
            logger.exception("webhook handler failed for %s (attempt %d): %s", entry.key, entry.attempts + 1, state)
        else:
            self.inbox.mark_done(entry)

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
        """:meth:`close` for asyncio apps: also waits for the async handler tasks."""
        await self.wait_idle_async(timeout)
        await asyncio.get_running_loop().run_in_executor(None, self.close, timeout)

    def __enter__(self) -> WebhookReceiver:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _is_async_callable(handler: Any) -> bool:
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)  # noqa: B004 - a class instance with async __call__
    )


async def _awaitable(result: Awaitable[None]) -> None:
    await result
