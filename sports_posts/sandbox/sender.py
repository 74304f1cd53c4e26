"""The webhook sender: subscriptions, signing (spec 6.2), delivery with retries (6.5), a delivery log.

Signing is implemented here with ``hmac`` on purpose, independently of
``sports_posts.webhooks``, so each cross-checks the other. Retry delays and the request
timeout are multiplied by ``time_scale``; retries fall due on the sandbox clock, so a test
with a manual clock makes them due by advancing it (or calls ``WebhookSender.drain``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Callable, Optional

from typing_extensions import TypedDict, Unpack

from .._errors import ParameterError
from .._vocabulary import DEFAULT_HEADER_NAMES, WebhookHeaders, header_names_or_default
from ._deadline import AnswerError, DeadlineExceeded, post_within
from .clock import Clock
from .world import isoformat

__all__ = [
    "BACKOFF_SECONDS",
    "EVENT_KINDS",
    "MAX_ATTEMPTS",
    "Delivery",
    "DeliveryAttempt",
    "Subscription",
    "SubscriptionFilters",
    "SubscriptionOptions",
    "WebhookSender",
    "sign",
]

EVENT_KINDS = ("breaking_news", "breaking_news.update")
MAX_ATTEMPTS = 6
BACKOFF_SECONDS = (60.0, 120.0, 240.0, 480.0, 960.0)
"""Waits before attempts 2..6: about 1, 2, 4, 8, 16 minutes (spec 6.5), times ``time_scale``."""
TIMEOUT_SECONDS = 10.0

_STATUS_SYNONYMS = {"confirmed": "verified"}


class SubscriptionFilters(TypedDict, total=False):
    """The four filter groups of spec 6.4; a group left out or empty matches everything."""

    leagues: Optional[Sequence[str]]
    news_types: Optional[Sequence[str]]
    news_statuses: Optional[Sequence[str]]
    news_origins: Optional[Sequence[str]]


class SubscriptionOptions(SubscriptionFilters, total=False):
    """The filters plus ``header_names``: the names its deliveries use instead of the sender's."""

    header_names: Optional[WebhookHeaders]


def sign(body: bytes, secret: str) -> str:
    """``sha256=<hex>``: HMAC-SHA256 of the raw body keyed with the signing secret (spec 6.2).

    The standard library's HMAC, not the SDK's ``sign_payload``: the emulated service signs
    independently of the code that verifies, so a fault in one is not mirrored in the other.
    """
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def _norm(values: Optional[Sequence[str]], synonyms: Optional[dict[str, str]] = None) -> frozenset[str]:
    synonyms = synonyms or {}
    return frozenset(synonyms.get(v.strip().lower(), v.strip().lower()) for v in values or () if v.strip())


@dataclass(eq=False)
class Subscription:
    """A registered target URL with its signing secret and the four filter groups of spec 6.4."""

    id: str
    url: str
    secret: str = field(repr=False)
    leagues: frozenset[str] = frozenset()
    news_types: frozenset[str] = frozenset()
    news_statuses: frozenset[str] = frozenset()
    news_origins: frozenset[str] = frozenset()
    active: bool = True
    header_names: WebhookHeaders = DEFAULT_HEADER_NAMES
    """The names its deliveries carry the event, delivery id and signature under (spec 6.2's by
    default; others emulate a proxy or white-label deployment that renames them)."""

    def matches(self, data: dict[str, Any]) -> bool:
        """Empty group matches all, OR within a group, AND across groups (confirmed counts as verified)."""
        def ok(group: frozenset[str], value: Any, synonyms: Optional[dict[str, str]] = None) -> bool:
            if not group:
                return True
            text = str(value or "").lower()
            return (synonyms or {}).get(text, text) in group

        return (
            ok(self.leagues, data.get("league"))
            and ok(self.news_types, data.get("news_type"))
            and ok(self.news_statuses, data.get("news_status"), _STATUS_SYNONYMS)
            and ok(self.news_origins, data.get("news_origin"))
        )

    def to_public(self) -> dict[str, Any]:
        """The subscription without its secret."""
        return {
            "id": self.id, "url": self.url, "active": self.active,
            "leagues": sorted(v.upper() for v in self.leagues), "news_types": sorted(self.news_types),
            "news_statuses": sorted(self.news_statuses), "news_origins": sorted(self.news_origins),
            "header_names": self.header_names.as_dict(),
        }


@dataclass
class DeliveryAttempt:
    """One POST to a subscriber: the row of the delivery log."""

    delivery_id: str
    attempt: int
    job_id: str
    subscription_id: str
    url: str
    event: str
    event_id: Optional[str]
    post_id: Optional[str]
    started_at: datetime
    finished_at: Optional[datetime] = None
    status_code: Optional[int] = None
    error: Optional[str] = None
    outcome: str = "in_flight"
    next_attempt_at: Optional[datetime] = None

    def to_public(self) -> dict[str, Any]:
        """The log row as JSON (for the admin route)."""
        return {
            "delivery_id": self.delivery_id, "attempt": self.attempt, "job_id": self.job_id,
            "subscription_id": self.subscription_id, "url": self.url, "event": self.event,
            "event_id": self.event_id, "post_id": self.post_id,
            "started_at": isoformat(self.started_at),
            "finished_at": isoformat(self.finished_at) if self.finished_at else None,
            "status_code": self.status_code, "error": self.error, "outcome": self.outcome,
            "next_attempt_at": isoformat(self.next_attempt_at) if self.next_attempt_at else None,
        }


@dataclass(eq=False)
class Delivery:
    """One event for one subscription: the same body on every attempt until delivered or dead."""

    id: str
    subscription: Subscription
    event: str
    payload: dict[str, Any]
    body: bytes
    next_attempt_at: datetime
    state: str = "pending"
    attempts: list[DeliveryAttempt] = field(default_factory=list)


class WebhookSender:
    """Delivers events on a background thread, retrying on the sandbox clock.

    ``header_names`` are the names a subscription's deliveries use unless it sets its own.
    """

    def __init__(
        self,
        clock: Clock,
        *,
        time_scale: float = 1.0,
        timeout: Optional[float] = None,
        max_attempts: int = MAX_ATTEMPTS,
        header_names: Optional[WebhookHeaders] = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.monotonic = monotonic
        """The real-time clock the answer's deadline is measured on (a test may fake it)."""
        self.header_names: WebhookHeaders = header_names_or_default(header_names)
        self.time_scale = time_scale
        self.timeout: float = timeout if timeout is not None else TIMEOUT_SECONDS * time_scale
        self.max_attempts = max_attempts
        self.subscriptions: dict[str, Subscription] = {}
        self.jobs: list[Delivery] = []
        self.log: list[DeliveryAttempt] = []
        self.event_subscribers: dict[str, set[str]] = {}
        self._cond = threading.Condition()
        self._stopped = True
        self._thread: Optional[threading.Thread] = None
        self._pool: Optional[ThreadPoolExecutor] = None
        self._counter = 0
        clock.add_listener(self._wake)

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Start the scheduler thread and the attempt pool."""
        if not self._stopped:
            return
        self._stopped = False
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="sandbox-webhook")
        self._thread = threading.Thread(target=self._run, name="sandbox-webhook-scheduler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop scheduling; attempts in flight finish (bounded by the timeout)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self._thread = self._pool = None

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    # -- subscriptions and events -------------------------------------------------------

    def subscribe(self, url: str, secret: str, **filters: Unpack[SubscriptionOptions]) -> Subscription:
        """Register ``url`` with its signing secret and filters; returns the subscription.

        ``header_names`` overrides the sender's header names for this subscription.
        """
        if not url.startswith(("http://", "https://")):
            raise ParameterError("the subscription url must be http:// or https://")
        if not secret:
            raise ParameterError("a signing secret is required")
        header_names = filters.get("header_names")
        names = self.header_names if header_names is None else header_names_or_default(header_names)
        with self._cond:
            self._counter += 1
            sub = Subscription(
                id=f"sub_{self._counter:04d}", url=url, secret=secret,
                leagues=_norm(filters.get("leagues")), news_types=_norm(filters.get("news_types")),
                news_statuses=_norm(filters.get("news_statuses"), _STATUS_SYNONYMS),
                news_origins=_norm(filters.get("news_origins")), header_names=names,
            )
            self.subscriptions[sub.id] = sub
            return sub

    def unsubscribe(self, subscription_id: str) -> None:
        """Remove a subscription; deliveries already queued for it still run."""
        with self._cond:
            self.subscriptions.pop(subscription_id, None)

    def emit(self, event: str, data: dict[str, Any], *, only: Optional[set[str]] = None) -> list[Delivery]:
        """Queue ``event`` for each matching subscription (or exactly those in ``only``)."""
        if event not in EVENT_KINDS:
            raise ParameterError(f"unknown event kind {event!r} (known: {', '.join(EVENT_KINDS)})")
        now = self.clock.now()
        payload = {"event": event, "sent_at": isoformat(now), "data": data}
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        queued: list[Delivery] = []
        with self._cond:
            for sub in list(self.subscriptions.values()):
                selected = sub.id in only if only is not None else sub.matches(data)
                if not sub.active or not selected:
                    continue
                self._counter += 1
                job = Delivery(id=f"dlv_{self._counter:05d}", subscription=sub, event=event,
                               payload=payload, body=body, next_attempt_at=now)
                self.jobs.append(job)
                queued.append(job)
            event_id = data.get("event_id")
            if event == "breaking_news" and isinstance(event_id, str):
                self.event_subscribers[event_id] = {job.subscription.id for job in queued}
            self._cond.notify_all()
        return queued

    # -- delivery -----------------------------------------------------------------------

    def _run(self) -> None:
        with self._cond:
            while not self._stopped:
                now = self.clock.now()
                upcoming: Optional[datetime] = None
                # One attempt in flight per subscription, in emit order: a story's update never
                # overtakes its first event at a healthy receiver.
                busy = {job.subscription.id for job in self.jobs if job.state == "in_flight"}
                for job in self.jobs:
                    if job.state != "pending":
                        continue
                    if job.next_attempt_at <= now:
                        if job.subscription.id in busy:
                            continue
                        busy.add(job.subscription.id)
                        job.state = "in_flight"
                        assert self._pool is not None
                        self._pool.submit(self._attempt, job)
                    elif upcoming is None or job.next_attempt_at < upcoming:
                        upcoming = job.next_attempt_at
                wait = 1.0
                if upcoming is not None and not self.clock.is_manual:
                    wait = min(wait, max(0.0, (upcoming - now).total_seconds()))
                self._cond.wait(timeout=wait)

    def _attempt(self, job: Delivery) -> None:
        number = len(job.attempts) + 1
        record = DeliveryAttempt(
            delivery_id=str(uuid.uuid4()), attempt=number, job_id=job.id,
            subscription_id=job.subscription.id, url=job.subscription.url, event=job.event,
            event_id=job.payload["data"].get("event_id"), post_id=job.payload["data"].get("id"),
            started_at=self.clock.now(),
        )
        with self._cond:
            job.attempts.append(record)
            self.log.append(record)
        names = job.subscription.header_names
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "sports-posts-sandbox-webhooks/1.0",
            names.event: job.event,
            names.delivery: record.delivery_id,
            names.signature: sign(job.body, job.subscription.secret),
        }
        ok = False
        try:
            # The timeout covers the whole answer (status line, headers, body), as the service's
            # does: a receiver trickling a 2xx slower than that has failed, and is retried.
            status = post_within(job.subscription.url, job.body, headers, self.timeout,
                                 monotonic=self.monotonic)
            record.status_code = status
            ok = 200 <= status < 300
        except DeadlineExceeded:
            record.error = f"timeout: no complete answer within {self.timeout:g} s"
        except (AnswerError, OSError) as exc:
            record.error = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # the sender thread must survive anything a receiver does
            record.error = f"{type(exc).__name__}: {exc}"
        with self._cond:
            record.finished_at = self.clock.now()
            if ok:
                record.outcome = job.state = "delivered"
            elif number >= self.max_attempts:
                record.outcome = job.state = "dead"
            else:
                record.outcome = "retry_scheduled"
                delay = BACKOFF_SECONDS[min(number - 1, len(BACKOFF_SECONDS) - 1)] * self.time_scale
                try:
                    job.next_attempt_at = record.next_attempt_at = record.finished_at + timedelta(seconds=delay)
                    job.state = "pending"
                except OverflowError:  # a retry scheduled past the calendar's end is never due
                    record.outcome = job.state = "dead"
                    record.error = (record.error or "") + " (no retry: it would fall past the calendar's end)"
            self._cond.notify_all()

    def _settled(self) -> bool:
        now = self.clock.now()
        return all(
            job.state in ("delivered", "dead") or (job.state == "pending" and job.next_attempt_at > now)
            for job in self.jobs
        )

    def wait(self, timeout: float = 10.0) -> None:
        """Block until nothing is in flight or due now (retries due later do not count)."""
        if self._stopped:
            raise RuntimeError("the webhook sender is not running (start the sandbox)")
        with self._cond:
            if not self._cond.wait_for(self._settled, timeout=timeout):
                raise TimeoutError("webhook deliveries did not settle in time")

    def drain(self, timeout: float = 10.0) -> None:
        """Deliver everything, moving the sandbox clock to each retry: every job ends delivered or dead."""
        while True:
            self.wait(timeout)
            with self._cond:
                pending = [job.next_attempt_at for job in self.jobs if job.state == "pending"]
            if not pending:
                return
            self.clock.advance_to(min(pending))
