"""The webhook receiver: it reads a request, drives the decision of ``_decision.py`` against
the dedupe store, and hands the event to the handler engine or the inbox; adapters move bytes.

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
import functools
import logging
import threading
import time
import weakref
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional, Union

from .. import _scoped, _utils
from .._errors import ParameterError
from .._vocabulary import WebhookHeaders, header_names_or_default
from . import _decision as decision
from ._common import secret_keys
from ._decision import WebhookResponse
from ._engine import MAX_WORKERS_LIMIT, HandlerEngine
from ._inbox_worker import InboxWorker
from ._traced import delivered, delivery_started, traced_delivery
from .dedupe._protocol import DedupeStore
from .dedupe.memory import MemoryDedupeStore
from .events import (
    DEFAULT_CLOCK_SKEW,
    DEFAULT_TOLERANCE,
    WebhookEvent,
    check_replay_window,
)
from .filters import SubscriptionFilter
from .inbox._protocol import Inbox
from .signature import Headers, Payload, Secret, signature_and_delivery

_response = decision.response

__all__ = ["DEFAULT_HANDLER_TIMEOUT", "Handler", "WebhookReceiver", "WebhookResponse"]

logger: logging.Logger = logging.getLogger("sports_posts.webhooks")

Handler = Callable[[WebhookEvent], Union[None, Awaitable[None]]]
"""``def handler(event)`` or ``async def handler(event)``; raise to have the event retried."""

DEFAULT_HANDLER_TIMEOUT = 8.0
"""Seconds an answer may take without an inbox, handler included: under the service's 10."""

_clock = time.monotonic  # the leases' clock (a test moves it by hand: the engine reads it through here)


def _pause(stopping: threading.Event, seconds: float) -> bool:
    """Wait ``seconds`` between two attempts to record an outcome; true when the receiver is closing."""
    return stopping.wait(seconds)


def _seconds(name: str, value: object, *, below: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < below:
        raise ParameterError(f"{name} must be between 0 and {below:g} seconds", parameter=name)
    return float(value)


def _executor_of(receiver: weakref.ref[WebhookReceiver]) -> ThreadPoolExecutor:
    """The receiver's handler threads (held weakly: the engine's threads may outlive it)."""
    owner = receiver()
    if owner is None:
        raise RuntimeError("the webhook receiver is gone")
    return owner._engine.pool()


def _after_fork(receiver: weakref.ref[WebhookReceiver]) -> None:
    owner = receiver()
    if owner is not None:
        owner._after_fork()


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

    One receiver serves many threads and tasks at once, and survives a fork (gunicorn
    ``--preload``, Celery prefork): a child makes its own thread pool, locks and events, and
    starts its inbox worker again on its first request if it had been started.
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
        self.store: DedupeStore = store if store is not None else MemoryDedupeStore()
        self.inbox = inbox
        self.filter = filter
        max_workers = _utils.positive_int("max_workers", max_workers, maximum=MAX_WORKERS_LIMIT)
        poll_interval = _utils.seconds("poll_interval", poll_interval)  # None or -1 killed or spun the worker
        start_worker = _utils.flag("start_worker", start_worker)
        self._in_flight_wait = _seconds("in_flight_wait", in_flight_wait, below=10)
        self._handler_timeout = _seconds("handler_timeout", handler_timeout, below=10)
        if self._handler_timeout == 0:
            raise ParameterError("handler_timeout must be more than 0 seconds", parameter="handler_timeout")
        self._tolerance, self._clock_skew = check_replay_window(tolerance, clock_skew)
        self._check_memory_outlives_tolerance()
        self._clock = clock
        self._wake = threading.Event()
        self._stopping = threading.Event()
        # The module's _clock and _pause are read at each call, so that a test's patch is seen.
        self._engine = HandlerEngine(
            handler, self.store, max_workers=max_workers, handler_timeout=self._handler_timeout,
            stopping=self._stopping, clock=lambda: _clock(), pause=lambda stopping, seconds: _pause(stopping, seconds),
            executor=functools.partial(_executor_of, weakref.ref(self)),
        )
        self._worker: Optional[InboxWorker] = None
        if inbox is not None:
            self._worker = InboxWorker(
                inbox, self._engine, poll_interval=poll_interval, start_worker=start_worker,
                stopping=self._stopping, wake=self._wake, clock=lambda: _clock(),
            )
        self._last_read: tuple[object, Optional[str]] = (None, None)  # headers, delivery id
        # A store outage logs one line as it starts and one as it ends, not a traceback a request.
        self._store_outage = decision.Outage(f"the dedupe store {self.store!r}", time.monotonic)
        self._inbox_outage = decision.Outage(f"the inbox {inbox!r}", time.monotonic)
        # A forked child remakes what belongs to the parent's threads (held weakly: the
        # handle must not keep the receiver alive).
        self._fork_handle = _scoped.on_fork(functools.partial(_after_fork, weakref.ref(self)))

    def _after_fork(self) -> None:
        """In a forked child (gunicorn ``--preload``, Celery prefork, ``os.fork``): new events,
        locks and conditions (a parent's thread may have held one at the fork), no parent
        futures or tasks, and a thread pool of its own on first use. The inbox worker, if it
        was started, starts again on the child's first request or ``start``. The parent's
        threads and pool are not touched."""
        stopping, wake = threading.Event(), threading.Event()
        if self._stopping.is_set():  # a closed receiver stays closed
            stopping.set()
        self._stopping, self._wake = stopping, wake
        self._engine.after_fork(stopping)
        self._store_outage.after_fork()
        self._inbox_outage.after_fork()
        if self._worker is not None:
            self._worker.after_fork(stopping, wake)

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
        handler = self._engine.handler
        name = getattr(handler, "__qualname__", type(handler).__name__)
        return (
            f"WebhookReceiver(secret='***', handler={name}, store={self.store!r}, "
            f"inbox={self.inbox!r}, header_names={self.header_names!r})"
        )

    # -- deciding ---------------------------------------------------------------------

    def _verify(
        self, body: Payload, headers: Headers
    ) -> tuple[Optional[WebhookResponse], Optional[WebhookEvent], float]:
        """The head of ``handle`` and ``handle_async``: read and verify the request; the answer
        when it ends here, else the event still to be claimed; and when the request started."""
        worker = self._worker
        if worker is not None and worker.resume:  # started before a fork: this child's first request
            self._resume_worker(worker)
        signature, delivery_id = signature_and_delivery(headers, self.header_names)
        self._last_read = (headers, delivery_id)
        started = time.monotonic()
        response, event = decision.verify(
            body, signature, delivery_id, secret=self._secret, header_names=self.header_names,
            tolerance=self._tolerance, clock_skew=self._clock_skew, now=self._clock(), filter=self.filter,
        )
        return response, event, started

    @traced_delivery(_delivery_id)
    def handle(self, body: Payload, headers: Headers) -> WebhookResponse:
        """Decide and produce the answer for one request (running the handler first when
        there is no inbox); never raises."""
        response, event, started = self._verify(body, headers)
        if event is None:
            assert response is not None
            return response
        refused = self._drive_claim(event, started)
        if refused is not None:
            return refused
        if self.inbox is not None:
            return self._enqueue(body, event, event.dedupe_key)
        return self._engine.run_inline(event, event.dedupe_key, started)

    async def handle_async(self, body: Payload, headers: Headers) -> WebhookResponse:
        """``handle`` for asyncio apps: stores with an async path are awaited on the loop,
        blocking ones (SQLite, the inbox) run in a thread; async handlers start at once."""
        # One coroutine for the usual request (memory store, async handler): its telemetry,
        # the claim and the handler's task are driven from here, not through a wrapper each.
        traced = delivery_started()
        response, event, started = self._verify(body, headers)  # CPU only: no reason to leave the loop
        if event is not None:
            engine = self._engine
            if engine.memory_store:  # a plain call: no coroutine, and no claim steps unless refused
                try:
                    claimed: Union[bool, Exception] = self.store.claim(event.dedupe_key)
                except Exception as exc:
                    claimed = exc
                if claimed is True:
                    self._store_outage.answered()
                    response = None
                else:
                    response = await self._adrive_claim(event, started, claimed)
            else:
                response = await self._adrive_claim(event, started)
            if response is None:
                if self.inbox is not None:
                    loop = asyncio.get_running_loop()
                    response = await loop.run_in_executor(None, self._enqueue, body, event, event.dedupe_key)
                elif engine.is_async:
                    response = await engine.arun_task(event, event.dedupe_key, started)
                else:
                    response = await engine.arun_inline(event, event.dedupe_key, started)
        assert response is not None
        delivered(self, response, _delivery_id, headers, traced)
        return response

    def _claimed(self, outcome: Union[str, Exception], event: WebhookEvent) -> Optional[WebhookResponse]:
        """The end of a claim, for both drivers: None when this request has the story, else
        the answer (503 when the store failed, 200 when it is done, 409 when still in flight)."""
        if isinstance(outcome, Exception):
            return decision.store_failed(event.dedupe_key, event, outcome, self._store_outage)
        self._store_outage.answered()
        if outcome != "claimed":
            return decision.not_claimed(outcome, event)
        return None

    def _drive_claim(self, event: WebhookEvent, started: float) -> Optional[WebhookResponse]:
        """Claim the event's story (``decision.claim_steps``) on this thread: None when this
        request has it, else the answer."""
        steps, key = decision.claim_steps(started + self._in_flight_wait, time.monotonic), event.dedupe_key
        answer: Any = None
        try:
            while True:
                operation, seconds = steps.send(answer)
                if operation == "wait":
                    self._engine.wait_settled(seconds)
                    answer = None
                else:
                    answer = getattr(self.store, operation)(key)
        except StopIteration as stop:
            return self._claimed(str(stop.value), event)
        except Exception as exc:
            return self._claimed(exc, event)

    async def _adrive_claim(
        self, event: WebhookEvent, started: float, first: Union[bool, Exception, None] = None
    ) -> Optional[WebhookResponse]:
        """``_drive_claim`` on the loop: the memory store's calls are made directly, without a
        coroutine each; a store with an async path is awaited, the others run in a thread.
        ``first``: the answer of the first claim, already made by the caller."""
        steps, key = decision.claim_steps(started + self._in_flight_wait, time.monotonic), event.dedupe_key
        engine, direct = self._engine, self._engine.memory_store
        answer: Any = None
        try:
            if first is not None:
                steps.send(None)  # the first step is that claim
                if isinstance(first, Exception):
                    raise first
                answer = first
            while True:
                operation, seconds = steps.send(answer)
                if operation == "wait":
                    await asyncio.sleep(seconds)
                    answer = None
                elif direct:
                    answer = getattr(self.store, operation)(key)
                else:
                    answer = await engine.astore(operation, key)
        except StopIteration as stop:
            return self._claimed(str(stop.value), event)
        except Exception as exc:
            return self._claimed(exc, event)

    @staticmethod
    def _resume_worker(worker: InboxWorker) -> None:
        try:
            worker.ensure_started()
        except Exception:  # the rows wait in the inbox: start() or the next request tries again
            logger.exception("could not start the inbox worker again after a fork")

    def _enqueue(self, body: Payload, event: WebhookEvent, key: str) -> WebhookResponse:
        """Inbox mode: commit the event, then acknowledge; the worker runs the handler."""
        assert self.inbox is not None
        try:
            raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
            self.inbox.put(key, raw, event.delivery_id)
        except Exception as exc:
            self._inbox_outage.failed(key, exc)
            self._engine.safely(self.store.release, key)
            return _response(503, "inbox_unavailable", event)
        self._inbox_outage.answered()
        self._engine.safely(self.store.complete, key)  # the inbox owns it now, with its own retries
        logger.info("webhook %s stored in the inbox (delivery %s)", key, event.delivery_id)
        self._wake.set()
        try:
            self._ensure_worker()
        except Exception:  # stored durably: start() or run_inbox_once() drains it later
            logger.exception("could not start the inbox worker; %s waits in the inbox", key)
        return _response(202, "accepted", event)

    # -- the inbox worker and the lifecycle ---------------------------------------------

    def run_inbox_once(self, limit: int = 16) -> int:
        """Process the inbox rows that are due now; returns how many were taken. For tests and cron."""
        if self._worker is None:
            raise ParameterError("this receiver has no inbox", parameter="inbox")
        return self._worker.run_once(limit)

    def start(self) -> None:
        """Start the inbox worker thread (a no-op without an inbox); it drains leftovers first."""
        self._ensure_worker()

    def _ensure_worker(self) -> None:
        if self._worker is not None:
            self._worker.ensure_started()

    def wait_idle(self, timeout: Optional[float] = None) -> bool:
        """Wait until every dispatched sync handler has finished; false on timeout."""
        return self._engine.wait_idle(timeout)

    async def wait_idle_async(self, timeout: Optional[float] = None) -> bool:
        """Wait for async handler tasks and sync handlers alike; false on timeout."""
        return await self._engine.wait_idle_async(timeout)

    def close(self, timeout: Optional[float] = 30.0) -> None:
        """Stop the inbox worker and wait for the handlers already dispatched."""
        self._stopping.set()
        self._wake.set()
        if self._worker is not None:
            self._worker.join(timeout)
        self.wait_idle(timeout)
        self._engine.shutdown()

    async def aclose(self, timeout: Optional[float] = 30.0) -> None:
        """[`close`][sports_posts.webhooks.WebhookReceiver.close] for asyncio apps: also waits for the async handler tasks."""
        await self.wait_idle_async(timeout)
        await asyncio.get_running_loop().run_in_executor(None, self.close, timeout)

    def __enter__(self) -> WebhookReceiver:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
