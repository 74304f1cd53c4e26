"""The call flow, without I/O: ``exchange_flow`` (and ``call_flow``) builds each attempt's
request, reads the answer through a ``BodyReader``, turns it into a model or a typed error,
and asks the retry policy (tenacity's) whether and how long to wait. The sync and async
clients in ``_client.py`` drive it by sending and sleeping.
"""

from __future__ import annotations

import email.utils
import logging
import os
import random
import ssl
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Generic, Optional, Protocol, TypeVar, Union

from pydantic_core import ValidationError

from ._config import ClientConfig, RetryEvent
from ._decoders import BodyReader
from ._errors import (
    APIConnectionError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    SportsPostsError,
    status_error_from_response,
)
from ._http import URL, Headers, Request, Response, Stack
from ._redact import Keeper, kept_request, redact, redact_body, redacted_headers
from ._request import APICall, RequestBuilder, attempt_seconds, build_request

if TYPE_CHECKING:
    from tenacity import RetryCallState, Retrying

__all__ = [
    "CallCounter",
    "Outcome",
    "RawResponse",
    "Send",
    "Step",
    "call_flow",
    "exchange_flow",
    "parse_http_date",
    "retry_policy",
]

T = TypeVar("T")
log = logging.getLogger("sports_posts")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 60.0
"""A ``Retry-After`` longer than this is not slept: a monthly quota will not recover in
seconds, so the 429 is raised at once with ``.retry_after`` for the caller to decide."""
BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 8.0


def parse_answer(call: APICall[T], status: int, body: bytes, keep: Callable[[], Response]) -> T:
    """The model of a 2xx answer's ``body``, or the typed error of any other answer.

    ``keep`` makes the answer as errors hold it, only when one is raised: a call that
    succeeds never copies its answer. ``body`` must already be redacted (``redact_body``).
    """
    if not 200 <= status < 300:
        response = keep()
        raise status_error_from_response(
            response, retry_after=parse_retry_after(response.headers.get("retry-after"))
        )
    try:
        return call.parse(body)
    except ValidationError as exc:
        raise response_validation_error(exc, keep()) from None
    except (ValueError, TypeError) as exc:  # a parser of ours refusing the shape
        response = keep()
        raise APIResponseValidationError(
            f"{call.method} {call.path}: unexpected body: {exc}", response=response, body=_text(response)
        ) from None


def response_validation_error(exc: ValidationError, response: Response) -> APIResponseValidationError:
    """Name the first offending field of a 2xx body that does not match the spec."""
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0] if errors else {"type": "", "loc": (), "msg": str(exc), "input": None}
    where = ".".join(str(part) for part in first.get("loc", ()))
    if first.get("type") == "json_invalid":
        message = f"the {response.status_code} answer's body is not valid JSON: {first.get('msg')}"
        where_field: Optional[str] = None
    else:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        message = f"unexpected value in the answer's body at {where or '<root>'}: {first.get('msg')}{more}"
        where_field = where or None
    return APIResponseValidationError(message, response=response, body=_text(response), field=where_field)


def _text(response: Response) -> str:
    return response.content.decode("utf-8", "replace")


def parse_http_date(value: object) -> Optional[datetime]:
    """An HTTP date header (IMF-fixdate, or the obsolete forms the parser knows) as an aware
    UTC datetime; ``None`` for anything else, never an exception."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):  # 3.9 raises TypeError on junk
        return None
    if when.tzinfo is None:  # "-0000": UTC by RFC 5322 3.3
        when = when.replace(tzinfo=timezone.utc)
    try:
        return when.astimezone(timezone.utc)
    except (ValueError, OverflowError):  # year 1 or 9999 pushed out of range by its offset
        return None


def parse_retry_after(value: Optional[str], *, now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` in seconds, from either of its forms (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        when = parse_http_date(value)
        if when is None:
            return None
        current = datetime.fromtimestamp(time.time() if now is None else now, timezone.utc)
        seconds = (when - current).total_seconds()
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        return None
    return max(0.0, seconds)


def retried_by_the_client(exc: BaseException) -> bool:
    """Connection errors, timeouts, 429 and 5xx gateway errors; nothing that spends quota
    for certain failure, nor a connection error the next attempt would meet again."""
    if isinstance(exc, APIConnectionError):
        return exc._retryable
    return isinstance(exc, APIStatusError) and exc.status_code in RETRY_STATUSES


def added_jitter(base: float, initial: float, rand: float) -> float:
    """The base plus up to ``initial`` at random (the client's jitter)."""
    return base + rand * initial


def equal_jitter(base: float, initial: float, rand: float) -> float:
    """Half the base plus up to half of it at random (the poller's jitter)."""
    return base / 2 + rand * base / 2


@dataclass(frozen=True)
class RetryPolicy:
    """Whether a failed call is asked again, and how long to wait first: the one rule of the
    client (``CLIENT_RETRY``, which tenacity asks) and of the poller (its own instance, in
    ``polling/_algorithm.py``); their differences are these fields.

    The wait after the n-th failure in a row is the server's ``Retry-After`` when it gave
    one, else a back-off of ``initial x 2^(n-1)`` capped at ``cap``, with jitter."""

    retried: Callable[[BaseException], bool] = retried_by_the_client
    """Which errors are retried at all (before ``Retry-After`` is looked at)."""
    initial: float = BACKOFF_INITIAL
    """The first back-off's base, in seconds; it doubles with each failure in a row."""
    cap: float = BACKOFF_MAX
    """The longest back-off."""
    quota_cap: Optional[float] = None
    """The longest back-off after a 429 that names no time (a spent quota); ``None``: ``cap``."""
    jitter: Callable[[float, float, float], float] = added_jitter
    """The wait of a back-off from its base, ``initial`` and a draw of ``rand`` (never past
    the cap): ``added_jitter`` or ``equal_jitter``."""
    rand: Callable[[], float] = random.random
    """The jitter source, a float in [0, 1)."""
    retry_after_from: tuple[type[APIStatusError], ...] = (APIStatusError,)
    """The answers whose ``Retry-After`` sets the wait; the others back off."""
    max_retry_after: float = MAX_RETRY_AFTER
    """The longest ``Retry-After`` waited."""
    on_long_retry_after: Optional[Callable[[float], None]] = None
    """Told of a longer ``Retry-After``, which is then waited as ``max_retry_after``;
    ``None``: such an answer is not retried (it is raised, with its ``.retry_after``)."""
    at_least_backoff: bool = False
    """Never wait less than the back-off, whatever ``Retry-After`` says (so that a repeated
    ``Retry-After: 0`` cannot spin)."""

    def retries(self, exc: BaseException) -> bool:
        """Whether ``exc`` is worth asking again (no jitter is drawn)."""
        if not self.retried(exc):
            return False
        retry_after = self._retry_after(exc)
        return (
            retry_after is None
            or retry_after <= self.max_retry_after
            or self.on_long_retry_after is not None
        )

    def wait(self, exc: BaseException, failures: int) -> float:
        """Seconds to wait before asking again after ``exc``, which ``retries``; ``failures``
        is how many failures in a row came before it (0 for the first)."""
        retry_after = self._retry_after(exc)
        if retry_after is None:
            quota = isinstance(exc, APIStatusError) and exc.status_code == 429
            return self.backoff(failures, quota=quota)
        if retry_after > self.max_retry_after and self.on_long_retry_after is not None:
            self.on_long_retry_after(retry_after)
        seconds = min(retry_after, self.max_retry_after)
        return max(seconds, self.backoff(failures)) if self.at_least_backoff else seconds

    def backoff(self, failures: int, *, quota: bool = False) -> float:
        """The back-off after ``failures`` earlier failures in a row, with jitter."""
        cap = self.quota_cap if quota and self.quota_cap is not None else self.cap
        base = min(cap, self.initial * 2.0 ** min(max(failures, 0), 30))
        return min(cap, self.jitter(base, self.initial, self.rand()))

    def _retry_after(self, exc: BaseException) -> Optional[float]:
        return exc.retry_after if isinstance(exc, self.retry_after_from) else None


CLIENT_RETRY = RetryPolicy()
"""The client's policy: 0.5 s, 1 s, 2 s, ... up to 8 s, each plus up to 0.5 s at random;
a ``Retry-After`` of up to a minute is waited, a longer one raised."""


def backoff(attempt: int) -> float:
    """The client's back-off after failed attempt ``attempt`` (1-based)."""
    return CLIENT_RETRY.backoff(attempt - 1)


def retry_wait(state: RetryCallState) -> float:
    """The server's ``Retry-After`` when it gave one, else capped exponential backoff."""
    exc = state.outcome.exception() if state.outcome is not None else None
    if exc is None:
        return backoff(state.attempt_number)
    return CLIENT_RETRY.wait(exc, state.attempt_number - 1)


def retry_policy(max_retries: int) -> Retrying:
    """The client's retry policy on tenacity: tenacity decides whether a failed attempt is
    retried and how long to wait first (asking ``CLIENT_RETRY``); ``call_flow`` only asks
    it, so both clients share it. Tenacity is imported here, at a call's first failure: a
    program whose calls succeed never loads it."""
    from tenacity import Retrying, retry_if_exception, stop_after_attempt

    return Retrying(
        stop=stop_after_attempt(max_retries + 1),
        wait=retry_wait,
        retry=retry_if_exception(CLIENT_RETRY.retries),
        reraise=True,
    )


class CallCounter:
    """Requests sent by a client and every client derived from it by ``with_options``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self, n: int = 1) -> None:
        with self._lock:
            self.value += n


@dataclass(frozen=True)
class Send:
    """Send ``request`` and read its answer through ``reader`` (which holds the bounds)."""

    request: Request
    reader: BodyReader


Step = Union[Send, float]
"""What a call flow asks its driver for: send this request, or sleep this many seconds."""
Outcome = Union[Response, Exception, None]
"""What the driver answers: the response (its body read through the reader and closed),
the transport error of its HTTP library or the bound crossed instead, or nothing (after a
sleep)."""


def transport_error(exc: Exception, request: Request, stack: Stack, secret: str = "") -> APIConnectionError:
    """A transport failure as the SDK's typed error (the message names no secret; whatever
    the library quotes of the server's answer is redacted). A failure no retry can mend
    (``permanent_failure``) says so and is not retried."""
    where = f"{request.method} {request.url.copy_with(query=None)}"
    if isinstance(exc, stack.TimeoutException):
        return APITimeoutError(f"{where} timed out ({type(exc).__name__})", request=kept_request(request, secret))
    why = permanent_failure(exc, stack)
    detail = redact(f"{type(exc).__name__}: {exc}", secret)
    error = APIConnectionError(
        f"{where} failed: {detail}" + (f" (not retried: {why})" if why else ""),
        request=kept_request(request, secret),
    )
    if why:
        error._retryable = False
    return error


class Redirects(Protocol):
    """What a client says about redirects: whether it follows them, and how many."""

    @property
    def follow_redirects(self) -> bool: ...

    @property
    def max_redirects(self) -> int: ...


def redirect_hop(response: Response, history: list[Response], client: Redirects, config: ClientConfig) -> Optional[Request]:
    """The next request of a redirect the client would follow, or ``None`` (not a
    redirect, or a client that follows none: the SDK's own pools).

    The shells send with ``follow_redirects=False`` and follow hop by hop, so that each
    target is seen before it is sent: one carrying the key is refused (an
    ``APIConnectionError``, not retried), and a loop ends in the library's
    ``TooManyRedirects`` after ``max_redirects`` hops, as the library's own loop would.
    ``response`` goes into ``history``; the caller closes it."""
    hop = response.next_request
    if hop is None or not client.follow_redirects:
        return None
    history.append(response)
    if len(history) > client.max_redirects:
        raise config.stack.module.TooManyRedirects("Exceeded maximum allowed redirects.", request=hop)
    if config.api_key and config.api_key in str(hop.url):
        where = f"{hop.method} {redact(str(hop.url.copy_with(query=None)), config.api_key)}"
        error = APIConnectionError(
            f"a redirect to {where} was refused: its address carries the API key (not retried)",
            request=kept_request(hop, config.api_key),
        )
        error._retryable = False
        raise error
    return hop


_TRANSIENT_TLS = (ssl.SSLEOFError, ssl.SSLZeroReturnError, ssl.SSLWantReadError, ssl.SSLWantWriteError,
                  ssl.SSLSyscallError)
"""TLS errors of a connection cut mid-handshake: a new connection may well succeed."""


def permanent_failure(exc: BaseException, stack: Stack) -> Optional[str]:
    """Why a transport error cannot recover on a retry, or ``None`` when it may: a redirect
    loop, a URL or request the library cannot send, or a TLS failure (a certificate or a
    protocol the two ends do not share), which the next attempt would meet again."""
    module: Any = stack.module
    if isinstance(exc, module.TooManyRedirects):
        return "the redirects never end (a loop, or more than the client's max_redirects)"
    if isinstance(exc, (module.UnsupportedProtocol, module.InvalidURL, module.LocalProtocolError)):
        return "the HTTP library cannot send this request (an unsupported or invalid URL)"
    cause: Optional[BaseException] = exc
    for _ in range(8):  # the library's error, its httpcore error, the ssl error
        if cause is None:
            break
        if isinstance(cause, ssl.SSLError) and not isinstance(cause, _TRANSIENT_TLS):
            return "TLS failed (a certificate refused, or no protocol both ends speak)"
        cause = cause.__cause__ or cause.__context__
    return None


def _earliest(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return b if a is None else a if b is None else min(a, b)


def _retry_state(max_retries: int) -> tuple[Retrying, RetryCallState]:
    """The retry policy and the state of one call, begun."""
    from tenacity import RetryCallState

    retrying = retry_policy(max_retries)
    retrying.begin()
    return retrying, RetryCallState(retrying, fn=None, args=(), kwargs={})


def _wait_of(decision: object) -> float:
    """The seconds of tenacity's decision to sleep (any other decision is a bug)."""
    from tenacity import DoSleep

    if not isinstance(decision, DoSleep):  # pragma: no cover - tenacity's contract
        raise RuntimeError(f"unexpected retry decision {decision!r}")
    return float(decision)


def new_call_id() -> str:
    """The SDK's own id of one call (all its attempts): ``sp_`` and 24 hex digits."""
    return "sp_" + os.urandom(12).hex()


def answered_request_id(error: SportsPostsError) -> Optional[str]:
    """The ``X-Request-Id`` of the answer an error holds, when a gateway added one."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("x-request-id") if headers is not None else None
    return value[:200] if isinstance(value, str) and value and value.isprintable() else None


def _tell_on_retry(hook: Callable[[RetryEvent], None], event: RetryEvent) -> None:
    """Call the caller's ``on_retry``: a hook that raises is logged, and the retry goes on."""
    try:
        hook(event)
    except Exception:
        log.warning("on_retry raised; the retry goes on", exc_info=True)


def exchange_flow(
    config: ClientConfig,
    call: APICall[T],
    counter: CallCounter,
    client: Optional[RequestBuilder] = None,
    clock: Callable[[], float] = time.monotonic,
) -> Generator[Step, Outcome, tuple[T, Callable[[], Response]]]:
    """One call from its first attempt to its answer, without I/O.

    It yields each request to send (the driver answers with the response, read through
    the step's reader, or the error it got instead) and each wait before a retry (the
    driver sleeps, then answers ``None``), and returns the parsed model with a maker of the
    answer as kept (key redacted; built only if asked), or raises the typed error. Each
    attempt must finish within the timeout, and the whole call within ``total_timeout``: a
    wait that would cross it is not slept. A call that succeeds at once never builds the retry machinery.
    """
    started = clock()
    call_id = new_call_id()  # in every error's request_id (unless the answer names its own) and log line
    overall = None if config.total_timeout is None else started + config.total_timeout
    budget = attempt_seconds(call.options.timeout or config.timeout)
    retrying: Optional[Retrying] = None
    state: Optional[RetryCallState] = None
    while True:
        now = clock()
        deadline = _earliest(None if budget is None else now + budget, overall)
        request = build_request(config, call, client, remaining=None if deadline is None else deadline - now)
        reader = BodyReader(config.max_response_bytes, deadline, clock, request, overlap=len(config.api_key))
        try:
            if deadline is not None and deadline <= now:
                raise reader.timed_out()
            counter.add()
            if log.isEnabledFor(logging.DEBUG):
                # the key redacted anywhere: a caller's cookie jar may hold an echo of it
                log.debug("%s", redact(f"request {request.method} {request.url} "
                                        f"headers={redacted_headers(request.headers)}", config.api_key))
            outcome = yield Send(request, reader)
            if isinstance(outcome, SportsPostsError):
                raise outcome
            if isinstance(outcome, Exception):
                if isinstance(outcome, config.stack.module.TooManyRedirects):  # every hop reached the server
                    counter.add(int(getattr(client, "max_redirects", 0)))
                raise transport_error(outcome, request, config.stack, config.api_key) from None
            if outcome is None:  # pragma: no cover - a driver bug, not a server's
                raise RuntimeError("call_flow: the driver answered a request with nothing")
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "response %s %s -> %d in %.1f ms",
                    request.method, request.url.copy_with(query=None), outcome.status_code,
                    (clock() - now) * 1000,
                )
            if outcome.history:  # redirects a caller's client followed: requests sent too
                counter.add(len(outcome.history))
            body = reader.trim(redact_body(reader.body(), config.api_key))
            keep = Keeper(outcome, body, request, config.api_key)
            return parse_answer(call, outcome.status_code, body, keep), keep
        except SportsPostsError as exc:
            exc.request_id = answered_request_id(exc) or call_id
            last: SportsPostsError = exc
            if retrying is None or state is None:
                retrying, state = _retry_state(config.max_retries)
            state.set_exception((type(exc), exc, exc.__traceback__))
        decision = retrying.iter(state)  # raises the error when it is not to be retried
        wait = _wait_of(decision)
        if overall is not None and clock() + wait >= overall:
            log.info("not retrying: a wait of %.2fs would pass total_timeout (attempt %d failed: %s)",
                     wait, state.attempt_number, last)
            raise last
        log.info("retrying in %.2fs (attempt %d failed: %s) [%s]", wait, state.attempt_number, last, last.request_id)
        if config.on_retry is not None:
            _tell_on_retry(config.on_retry, RetryEvent(
                state.attempt_number, last, getattr(last, "status_code", None), wait, last.request_id or call_id))
        state.prepare_for_next_attempt()
        yield wait


def call_flow(
    config: ClientConfig,
    call: APICall[T],
    counter: CallCounter,
    client: Optional[RequestBuilder] = None,
    clock: Callable[[], float] = time.monotonic,
) -> Generator[Step, Outcome, T]:
    """``exchange_flow`` without the kept answer: the parsed model alone."""
    parsed, _ = yield from exchange_flow(config, call, counter, client, clock)
    return parsed


class RawResponse(Generic[T]):
    """An answer as received, from ``client.with_raw_response``: status, headers (the
    key redacted wherever it was echoed), the request as sent (Authorization redacted),
    and ``parse`` for what the plain method returns."""

    def __init__(self, response: Response, parsed: T) -> None:
        self.http_response = response
        self._parsed = parsed

    @property
    def status_code(self) -> int:
        return self.http_response.status_code

    @property
    def headers(self) -> Headers:
        """Every response header: rate-limit and usage headers included."""
        return self.http_response.headers

    @property
    def http_request(self) -> Request:
        return self.http_response.request

    @property
    def url(self) -> URL:
        return self.http_response.request.url

    @property
    def content(self) -> bytes:
        """The decoded body."""
        return self.http_response.content

    def parse(self) -> T:
        """What the method returns without ``with_raw_response`` (a page, a model)."""
        return self._parsed

    def __repr__(self) -> str:
        return f"<RawResponse [{self.status_code}] {self.http_request.method} {self.url.copy_with(query=None)}>"
