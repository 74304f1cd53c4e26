"""The webhook receiver's inbox worker: a thread that drains the inbox through the handler engine."""

from __future__ import annotations

import functools
import logging
import threading
import time
from concurrent.futures import as_completed
from concurrent.futures import wait as wait_futures
from typing import Callable, Optional

from .._errors import WebhookPayloadError
from ._engine import HandlerEngine
from ._store import lease_of
from .events import parse_event
from .inbox._entry import InboxEntry
from .inbox._protocol import Inbox

__all__ = ["InboxWorker"]

logger: logging.Logger = logging.getLogger("sports_posts.webhooks")

BATCH_WAIT = 1.0
"""Seconds the worker waits for a batch's handlers to end before recording the successes it
has (in one call); later ones are recorded as each ends."""


class InboxWorker:
    """Takes the inbox's due entries, runs the handler on each (``engine``), and records the
    outcome while the entry's lease lasts; ``ensure_started`` runs that in a daemon thread
    every ``poll_interval`` seconds or when ``wake`` is set, until ``stopping`` is set."""

    def __init__(
        self,
        inbox: Inbox,
        engine: HandlerEngine,
        *,
        poll_interval: float,
        start_worker: bool,
        stopping: threading.Event,
        wake: threading.Event,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inbox = inbox
        self._engine = engine
        self._poll_interval, self._start_worker = poll_interval, start_worker
        self._stopping, self._wake, self._clock = stopping, wake, clock
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self.resume = False  # started before a fork: the child starts its own thread on its first request

    def after_fork(self, stopping: threading.Event, wake: threading.Event) -> None:
        """In a forked child: the parent's worker thread does not run here. A worker started
        before the fork is started again in the child by its first request (or ``start``),
        not by the fork itself: a child that never receives starts no thread."""
        self._stopping, self._wake = stopping, wake
        self._lock = threading.Lock()
        self.resume = self._thread is not None and not stopping.is_set()
        self._thread = None

    def run_once(self, limit: int = 16) -> int:
        """Process the entries that are due now; returns how many were taken."""
        # The entries' leases start now: their outcomes may be recorded until they lapse.
        until = self._clock() + lease_of(self.inbox)
        entries = self.inbox.take_due(limit)
        if len(entries) <= 1:
            self._record_done([entry for entry in entries if self._process_entry(entry, until)], until)
            return len(entries)
        futures = {self._engine.executor().submit(self._process_entry, e, until): e for e in entries}
        # The successes of the handlers that end within BATCH_WAIT are recorded together; a
        # handler still running then is recorded on its own when it ends, so that a slow one
        # holds back no other entry's outcome (which its lease would otherwise run out on).
        ended, running = wait_futures(futures, timeout=BATCH_WAIT)
        self._record_done([entry for future, entry in futures.items() if future in ended and future.result()],
                          until)
        for future in as_completed(running):
            if future.result():
                self._record_done([futures[future]], until)
        return len(entries)

    def _process_entry(self, entry: InboxEntry, until: float) -> bool:
        """Run the handler on ``entry``; a failure is recorded here, a success is returned
        (True) for ``_record_done`` to record with the rest of its batch."""
        inbox, record = self.inbox, self._engine.record
        try:
            event = parse_event(entry.body, entry.delivery_id)
        except WebhookPayloadError as exc:  # verified when stored; only a model change gets here
            logger.error("inbox entry %s no longer parses: %s", entry.key, exc)
            reason = str(exc)
            record("mark_failed", entry.key, until, lambda: inbox.mark_failed(entry, reason, permanent=True))
            return False
        try:
            self._engine.call_handler(event)
        except Exception as exc:
            logger.exception("webhook handler failed for %s (attempt %d)", entry.key, entry.attempts + 1)
            error = f"{type(exc).__name__}: {exc}"
            record("mark_failed", entry.key, until, lambda: inbox.mark_failed(entry, error))
            return False
        return True

    def _record_done(self, entries: list[InboxEntry], until: float) -> None:
        """Record the batch's successes: in one call where the inbox records a batch at once
        (``mark_done_many``, each entry's lease checked on its own), else one by one. A worker
        that dies first leaves them to be taken again when their leases lapse."""
        inbox, record = self.inbox, self._engine.record
        many = getattr(inbox, "mark_done_many", None)
        if many is not None and len(entries) > 1:
            keys = f"{len(entries)} entries ({entries[0].key}, ...)"
            record("mark_done", keys, until, lambda: many(entries))
            return
        for entry in entries:
            record("mark_done", entry.key, until, functools.partial(inbox.mark_done, entry))

    def ensure_started(self) -> None:
        """Start the worker thread unless it runs (or ``start_worker=False`` leaves draining to the caller)."""
        if not self._start_worker:
            return
        with self._lock:
            self.resume = False
            if self._thread is not None and self._thread.is_alive():
                return
            self._stopping.clear()
            self._thread = threading.Thread(target=self._loop, name="sports-posts-inbox", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stopping.is_set():
            self._wake.clear()
            try:
                taken = self.run_once()
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

    def join(self, timeout: Optional[float]) -> None:
        """Wait for the worker thread to end (after ``stopping`` was set)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
