"""The webhook receiver's decision, without threads, event loops or stores (the shape of
gidgethub's ``sansio``): verify the signature, parse the event, check the replay window and
the filter, the claim steps, and the answer for each outcome.

``receiver.py`` is the runner: it reads the headers, drives the claim steps against the
store, runs the handler (a thread pool, per-thread loops, tasks) and the inbox worker. This
module is the webhooks package's internal API for that runner.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Generator
from typing import Any, Callable, Optional

from .._errors import SignatureVerificationError, WebhookPayloadError
from .._vocabulary import WebhookHeaders
from .errors import ReplayedWebhookError, StoreDataLostError
from .events import WebhookEvent, check_sent_at, parse_event
from .filters import SubscriptionFilter
from .signature import Payload, Secret, verify_signature

logger = logging.getLogger("sports_posts.webhooks")

JSON_HEADERS = (("content-type", "application/json"),)

Step = Generator[tuple[str, float], Any, str]
"""What a claim attempt asks its driver to do: ``(store method, 0)`` or ``("wait", seconds)``."""


class WebhookResponse(tuple[int, bytes]):
    """What to answer the service: any framework turns this into its own response.

    A ``(status_code, body)`` pair to type checkers and at run time, so that
    ``status, body = receiver.handle(...)`` gives an ``int`` and ``bytes``; the headers, the
    outcome and the event ride along as attributes. Immutable, like the pair it is.
    """

    headers: tuple[tuple[str, str], ...]
    """The headers to send with the body."""
    outcome: str
    """``accepted``, ``duplicate``, ``in_progress``, ``ignored``, ``invalid_signature``, ..."""
    event: Optional[WebhookEvent]
    """The verified event, when the request carried one."""

    def __new__(
        cls,
        status_code: int,
        body: bytes,
        headers: tuple[tuple[str, str], ...] = JSON_HEADERS,
        outcome: str = "",
        event: Optional[WebhookEvent] = None,
    ) -> WebhookResponse:
        self = super().__new__(cls, (status_code, body))
        attributes = self.__dict__  # set in place: __setattr__ refuses every change
        attributes["headers"] = headers
        attributes["outcome"] = outcome
        attributes["event"] = event
        return self

    @property
    def status_code(self) -> int:
        """The HTTP status."""
        return self[0]

    @property
    def body(self) -> bytes:
        """The body to send (JSON)."""
        return self[1]

    @property
    def status(self) -> int:
        """The HTTP status (same as ``status_code``)."""
        return self[0]

    @property
    def ok(self) -> bool:
        """Whether the service will count this answer as a success (any 2xx)."""
        return 200 <= self[0] < 300

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a WebhookResponse cannot be changed ({name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a WebhookResponse cannot be changed ({name})")

    def __eq__(self, other: object) -> bool:
        """Equal to another answer of the same status, body, headers and outcome (the event
        is not compared), and to the plain ``(status_code, body)`` pair."""
        if isinstance(other, WebhookResponse):
            return (self[0], self[1], self.headers, self.outcome) == (other[0], other[1], other.headers, other.outcome)
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self[0], self[1], self.headers, self.outcome))

    def __repr__(self) -> str:
        return (f"WebhookResponse(status_code={self[0]!r}, body={self[1]!r}, headers={self.headers!r}, "
                f"outcome={self.outcome!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self[0], self[1], self.headers, self.outcome, self.event))


@functools.cache  # a handful of (status, outcome) pairs: encode each once
def _body(status_code: int, outcome: str) -> bytes:
    ok = 200 <= status_code < 300
    return json.dumps({"ok": ok, "status": outcome}, separators=(",", ":")).encode()


def response(status_code: int, outcome: str, event: Optional[WebhookEvent] = None) -> WebhookResponse:
    """The answer ``status_code`` with the body every answer of that ``outcome`` carries."""
    return WebhookResponse(status_code, _body(status_code, outcome), JSON_HEADERS, outcome, event)


@functools.lru_cache(maxsize=64)  # a few fixed messages per header name: bounded all the same
def refusal(status_code: int, outcome: str, error: str) -> WebhookResponse:
    """A refusal that says why in ``error`` (which header is missing, say): no secret, no body."""
    body = json.dumps({"ok": False, "status": outcome, "error": error}, separators=(",", ":"))
    return WebhookResponse(status_code, body.encode(), JSON_HEADERS, outcome)


def _told_sender(exc: SignatureVerificationError, names: WebhookHeaders) -> str:
    """What a 401 tells an unauthenticated sender: the header missing or malformed (about
    its own request), or only that the signature did not verify; never what the receiver's
    operator may have got wrong (a secret, a parsed body), which goes to the log."""
    text = str(exc)
    if text.startswith(("missing ", "empty ", "malformed ")):
        return text
    return f"the {names.signature} signature did not verify"


def verify(
    body: Payload,
    signature: Optional[str],
    delivery_id: Optional[str],
    *,
    secret: Secret,
    header_names: WebhookHeaders,
    tolerance: float,
    clock_skew: float,
    now: float,
    filter: Optional[SubscriptionFilter],
) -> tuple[Optional[WebhookResponse], Optional[WebhookEvent]]:
    """The answer when the request ends here, else the verified event still to be claimed."""
    try:
        verify_signature(body, signature, secret, header_names=header_names)
        event = parse_event(body, delivery_id)
        check_sent_at(event, tolerance, clock_skew, now)
    except ReplayedWebhookError as exc:
        logger.warning("signed webhook outside the replay window rejected (400): %s", exc)
        return response(400, "outside_replay_window"), None
    except SignatureVerificationError as exc:
        logger.warning("webhook rejected (401): %s", exc)  # the operator's hint: here only
        return refusal(401, "invalid_signature", _told_sender(exc, header_names)), None
    except WebhookPayloadError as exc:
        logger.warning("signed webhook body rejected (400): %s", exc)
        return response(400, "invalid_payload"), None
    except Exception:  # a bug must not become a 500 with a traceback for the sender
        logger.exception("webhook could not be verified")
        return response(503, "error"), None
    if filter is not None and not filter.matches(event):
        logger.info("webhook %s (delivery %s) ignored by the filter", event.dedupe_key, event.delivery_id)
        return response(200, "ignored", event), None
    return None, event


def claim_steps(deadline: float, now: Callable[[], float]) -> Step:
    """The whole claim of a key: ``claimed``, ``duplicate``, or ``in_progress`` once
    ``deadline`` (on ``now``'s scale) passed with another attempt still in flight. Yields
    ``(store method, 0)`` or ``("wait", seconds)`` and receives the store's answer; the
    receiver's sync and async drivers run it."""
    if (yield ("claim", 0.0)):  # the usual delivery: one store call decides
        return "claimed"
    while True:
        if (yield ("is_complete", 0.0)):
            return "duplicate"
        remaining = deadline - now()
        if remaining <= 0:
            return "in_progress"
        # A handler of this process settling wakes the sync driver at once; another
        # process's claim is polled, since the store offers nothing to wait on.
        yield ("wait", min(remaining, 0.05))
        if (yield ("claim", 0.0)):
            return "claimed"


class Outage:
    """An outage of a store, as the logs tell it: one line when its first failure is answered
    503 and one when it answers again, with the count of deliveries answered 503 meanwhile;
    nothing in between but DEBUG lines (a 45 s failover used to log 130 tracebacks). The
    traceback of the first failure is kept at DEBUG level."""

    def __init__(self, what: str, clock: Callable[[], float]) -> None:
        self.what, self._clock = what, clock
        self._lock = threading.Lock()
        self._since: Optional[float] = None
        self._count = 0

    def after_fork(self) -> None:
        """A forked child's own lock (the parent's may have been held at the fork)."""
        self._lock = threading.Lock()

    def failed(self, key: str, exc: BaseException) -> None:
        with self._lock:
            first = self._since is None
            if first:
                self._since, self._count = self._clock(), 0
            self._count += 1
        if first:
            logger.error("%s failed (%s: %s): answering 503 until it answers again, so that the service "
                         "retries (first: %s)", self.what, type(exc).__name__, exc, key)
            logger.debug("%s failure", self.what, exc_info=exc)
        else:
            logger.debug("%s still failing (%s): 503 for %s", self.what, type(exc).__name__, key)

    def answered(self) -> None:
        """The store answered: ends an outage (one line), a no-op otherwise."""
        if self._since is None:  # the steady state: one attribute read
            return
        with self._lock:
            since, count, self._since = self._since, self._count, None
        if since is not None:
            logger.warning("%s answers again after %.1f s; %d deliveries were answered 503 meanwhile "
                           "(the service delivers them again)", self.what, self._clock() - since, count)


def store_failed(key: str, event: WebhookEvent, exc: Exception, outage: Optional[Outage] = None) -> WebhookResponse:
    """503 when the dedupe store failed, so that the service retries later."""
    if outage is not None:
        outage.failed(key, exc)
    else:
        logger.exception("dedupe store failed for %s: answering 503 so that it is retried", key)
    lost = isinstance(exc, StoreDataLostError)
    return response(503, "store_data_lost" if lost else "store_unavailable", event)


def not_claimed(outcome: str, event: WebhookEvent) -> WebhookResponse:
    """200 for a story already processed, 409 for one still in flight elsewhere."""
    key, delivery = event.dedupe_key, event.delivery_id
    if outcome == "duplicate":
        logger.info("duplicate webhook %s (delivery %s)", key, delivery)
        return response(200, "duplicate", event)
    logger.info("webhook %s still in flight elsewhere (delivery %s): 409", key, delivery)
    return response(409, "in_progress", event)


def handled(succeeded: bool, event: WebhookEvent, key: str) -> WebhookResponse:
    """202 once the handler returned, 503 when it raised (the claim was released)."""
    if not succeeded:
        return response(503, "handler_failed", event)
    logger.info("webhook %s handled (delivery %s)", key, event.delivery_id)
    return response(202, "accepted", event)


def overran(event: WebhookEvent, key: str, handler_timeout: float) -> WebhookResponse:
    """503 when the handler is still running at ``handler_timeout``: it keeps its claim."""
    logger.error(
        "webhook handler for %s still running after handler_timeout=%g s: answering 503 so that "
        "the service retries (the running handler keeps the claim)", key, handler_timeout,
    )
    return response(503, "handler_timeout", event)
