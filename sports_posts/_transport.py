"""Everything about a call that does no I/O: configuration, request building, response
parsing, error mapping and the retry decision, joined in :func:`call_flow`, a generator
that the sync and async clients in ``_client.py`` drive by sending and sleeping.
"""

from __future__ import annotations

import contextlib
import email.utils
import gc
import logging
import os
import random
import threading
import time
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable, Generic, Literal, Optional, Protocol, TypeVar, Union

from pydantic import ValidationError
from tenacity import DoSleep, RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from ._errors import (
    APIConnectionError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    ParameterError,
    SportsPostsError,
    status_error_from_response,
)
from ._http import (
    URL,
    HTTPError,
    InvalidURL,
    Request,
    Response,
    Timeout,
    TimeoutException,
    stack_version,
)
from ._params import within_url_limit
from ._version import __version__

__all__ = [
    "APICall",
    "AsyncRequester",
    "CallCounter",
    "ClientConfig",
    "Done",
    "Outcome",
    "Step",
    "SyncRequester",
    "advance",
    "build_request",
    "call_flow",
    "parse_response",
    "retry_policy",
]

T = TypeVar("T")
log = logging.getLogger("sports_posts")

AuthScheme = Literal["bearer", "bare"]
DEFAULT_TIMEOUT = Timeout(30.0, connect=10.0)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 60.0
"""A ``Retry-After`` longer than this is not slept: a monthly quota will not recover in
seconds, so the 429 is raised at once with ``.retry_after`` for the caller to decide."""
BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 8.0


@dataclass(frozen=True)
class ClientConfig:
    """A client's resolved settings; the API key is kept out of ``repr``."""

    api_key: str = field(repr=False)
    base_url: str
    auth_scheme: AuthScheme = "bearer"
    timeout: Timeout = field(default_factory=lambda: DEFAULT_TIMEOUT)
    max_retries: int = 2
    default_headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def resolve(
        cls,
        *,
        api_key: Optional[str],
        base_url: Optional[str],
        auth_scheme: str,
        timeout: Union[float, Timeout, None],
        max_retries: int,
        default_headers: Optional[Mapping[str, str]],
    ) -> ClientConfig:
        """Apply the environment defaults of API.md and check every setting."""
        key = api_key if api_key is not None else os.environ.get("SPORTS_POSTS_API_KEY")
        if not key or not isinstance(key, str) or not key.strip():
            raise SportsPostsError(
                "No API key: pass api_key=... or set SPORTS_POSTS_API_KEY "
                "(keys are created in the customer dashboard)."
            )
        if any(c in key for c in "\r\n"):
            raise ParameterError("api_key contains a line break", parameter="api_key")
        url = base_url if base_url is not None else os.environ.get("SPORTS_POSTS_BASE_URL")
        if not url or not isinstance(url, str):
            raise SportsPostsError(
                "No base URL: pass base_url=... or set SPORTS_POSTS_BASE_URL "
                "(it ends in /v1; `sports-posts sandbox` serves one locally)."
            )
        url = url.strip().rstrip("/")
        try:
            parsed = URL(url)
        except (InvalidURL, TypeError, ValueError):
            raise ParameterError(f"base_url is not a URL: {url!r}", parameter="base_url") from None
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ParameterError(
                f"base_url must be an http(s) URL ending in /v1, got {url!r}", parameter="base_url"
            )
        if auth_scheme not in ("bearer", "bare"):
            raise ParameterError(
                f"auth_scheme must be 'bearer' or 'bare', got {auth_scheme!r}", parameter="auth_scheme"
            )
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ParameterError(
                f"max_retries must be an integer >= 0, got {max_retries!r}", parameter="max_retries"
            )
        return cls(
            api_key=key.strip(),
            base_url=url,
            auth_scheme=auth_scheme,  # type: ignore[arg-type]
            timeout=to_timeout(timeout),
            max_retries=max_retries,
            default_headers=dict(default_headers or {}),
        )

    def with_options(
        self, *, timeout: Union[float, Timeout, None, object], max_retries: Optional[int]
    ) -> ClientConfig:
        """A copy with another timeout or retry count (same key, URL and headers)."""
        changes: dict[str, Any] = {}
        if timeout is not _UNSET:
            changes["timeout"] = to_timeout(timeout)  # type: ignore[arg-type]
        if max_retries is not None:
            if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
                raise ParameterError("max_retries must be an integer >= 0", parameter="max_retries")
            changes["max_retries"] = max_retries
        return replace(self, **changes)

    def headers(self) -> dict[str, str]:
        """Headers of every request: the caller's defaults, then ours (ours win)."""
        token = f"Bearer {self.api_key}" if self.auth_scheme == "bearer" else self.api_key
        headers = dict(self.default_headers)
        headers.setdefault("User-Agent", f"sports-posts-python/{__version__} {stack_version()}")
        headers["Accept"] = "application/json"
        headers["Authorization"] = token
        return headers


_UNSET: Any = object()


def to_timeout(timeout: Union[float, Timeout, None]) -> Timeout:
    """A finite timeout: ``None`` would wait forever, so it is refused with a hint."""
    if isinstance(timeout, Timeout):
        return timeout
    if timeout is None:
        raise ParameterError(
            "timeout=None would wait forever; pass seconds (e.g. 30.0), or "
            "Timeout(None) if you really mean no timeout",
            parameter="timeout",
        )
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ParameterError(f"timeout must be a positive number of seconds, got {timeout!r}", parameter="timeout")
    return Timeout(float(timeout), connect=min(float(timeout), 10.0))


@dataclass(frozen=True)
class APICall(Generic[T]):
    """One endpoint call as data: where it goes and how its 2xx body becomes a model."""

    method: str
    path: str
    params: Mapping[str, str]
    parse: Callable[[bytes], T]

    def with_params(self, **changes: str) -> APICall[T]:
        return replace(self, params={**self.params, **changes})


def build_request(config: ClientConfig, call: APICall[Any]) -> Request:
    """The HTTP request of a call, with auth, User-Agent and the per-request timeout."""
    return within_url_limit(Request(
        call.method,
        config.base_url + call.path,
        params=dict(call.params),
        headers=config.headers(),
        extensions={"timeout": config.timeout.as_dict()},
    ))


def redacted_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers fit for a log record: the Authorization value is never written out."""
    return {k: ("<redacted>" if k.lower() == "authorization" else v) for k, v in headers.items()}


def parse_response(call: APICall[T], response: Response) -> T:
    """The model of a 2xx answer, or the typed error of any other."""
    if not response.is_success:
        raise status_error_from_response(
            response, retry_after=parse_retry_after(response.headers.get("retry-after"))
        )
    try:
        with _collection_paused():
            return call.parse(response.content)
    except ValidationError as exc:
        raise response_validation_error(exc, response) from None
    except (ValueError, TypeError) as exc:  # a parser of ours refusing the shape
        raise APIResponseValidationError(
            f"{call.method} {call.path}: unexpected body: {exc}", response=response, body=_text(response)
        ) from None


@contextlib.contextmanager
def _collection_paused() -> Iterator[None]:
    """Pause automatic garbage collection while a body becomes models.

    A page of 100 posts creates about 2,000 tracked objects, all reachable: the collections
    they trigger scan them and free nothing (measured: parsing 3.2x json.loads with them,
    1.7x without). One collection after the parse does that work once. If another thread
    disabled the collector meanwhile, it stays as this thread found it at the start.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def response_validation_error(exc: ValidationError, response: Response) -> APIResponseValidationError:
    """Name the first offending field of a 2xx body that does not match the spec."""
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0] if errors else {"type": "", "loc": (), "msg": str(exc)}
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


def parse_retry_after(value: Optional[str], *, now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` in seconds, from either of its forms (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        current = datetime.fromtimestamp(time.time() if now is None else now, timezone.utc)
        seconds = (when - current).total_seconds()
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        return None
    return max(0.0, seconds)


def is_retryable(exc: BaseException) -> bool:
    """Connection errors, timeouts, 429 and 5xx gateway errors; nothing that spends quota
    for certain failure, and no 429 whose ``Retry-After`` exceeds :data:`MAX_RETRY_AFTER`."""
    if isinstance(exc, APIConnectionError):
        return True
    if isinstance(exc, APIStatusError) and exc.status_code in RETRY_STATUSES:
        return exc.retry_after is None or exc.retry_after <= MAX_RETRY_AFTER
    return False


def backoff(attempt: int) -> float:
    """Exponential backoff with jitter after failed attempt ``attempt`` (1-based), capped:
    0.5 s, 1 s, 2 s, ... up to 8 s, each plus up to half the base at random."""
    base: float = min(BACKOFF_MAX, BACKOFF_INITIAL * 2.0 ** max(0, attempt - 1))
    return min(BACKOFF_MAX, base + random.uniform(0, BACKOFF_INITIAL))


def retry_wait(state: RetryCallState) -> float:
    """The server's ``Retry-After`` when it gave one, else capped exponential backoff."""
    exc = state.outcome.exception() if state.outcome is not None else None
    if isinstance(exc, APIStatusError) and exc.retry_after is not None:
        return min(exc.retry_after, MAX_RETRY_AFTER)
    return backoff(state.attempt_number)


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome is not None else None
    wait = state.next_action.sleep if state.next_action is not None else 0.0
    log.info("retrying in %.2fs (attempt %d failed: %s)", wait, state.attempt_number, exc)


def retry_policy(max_retries: int) -> Retrying:
    """The one retry policy: tenacity decides whether a failed attempt is retried and how
    long to wait first; :func:`call_flow` only asks it, so both clients share it."""
    return Retrying(
        stop=stop_after_attempt(max_retries + 1),
        wait=retry_wait,
        retry=retry_if_exception(is_retryable),
        reraise=True,
        before_sleep=_log_retry,
    )


class CallCounter:
    """Requests sent by a client and every client derived from it by ``with_options``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self) -> None:
        with self._lock:
            self.value += 1


Step = Union[Request, float]
"""What a call flow asks its driver for: send this request, or sleep this many seconds."""
Outcome = Union[Response, HTTPError, None]
"""What the driver answers: the response, the transport error it got instead, or nothing
(after a sleep)."""


def transport_error(exc: HTTPError, request: Request) -> APIConnectionError:
    """A transport failure as the SDK's typed error (the message names no secret)."""
    where = f"{request.method} {request.url.copy_with(query=None)}"
    if isinstance(exc, TimeoutException):
        return APITimeoutError(f"{where} timed out ({type(exc).__name__})", request=request)
    return APIConnectionError(f"{where} failed: {type(exc).__name__}: {exc}", request=request)


def call_flow(config: ClientConfig, call: APICall[T], counter: CallCounter) -> Generator[Step, Outcome, T]:
    """One call from its first attempt to its answer, without I/O.

    It yields each request to send (the driver answers with the response or the transport
    error) and each wait before a retry (the driver sleeps, then answers ``None``), and
    returns the parsed model or raises the typed error. A call that succeeds at once never
    builds the retry machinery: tenacity's state is made at the first failure.
    """
    request = build_request(config, call)
    retrying: Optional[Retrying] = None
    state: Optional[RetryCallState] = None
    while True:
        counter.add()
        if log.isEnabledFor(logging.DEBUG):
            log.debug("request %s %s headers=%s", request.method, request.url, redacted_headers(request.headers))
        started = time.perf_counter()
        outcome = yield request
        try:
            if isinstance(outcome, HTTPError):
                raise transport_error(outcome, request) from outcome
            if outcome is None:  # pragma: no cover - a driver bug, not a server's
                raise RuntimeError("call_flow: the driver answered a request with nothing")
            if log.isEnabledFor(logging.DEBUG):
                elapsed = (time.perf_counter() - started) * 1000
                log.debug(
                    "response %s %s -> %d in %.1f ms",
                    request.method, request.url.copy_with(query=None), outcome.status_code, elapsed,
                )
            return parse_response(call, outcome)
        except Exception as exc:
            if retrying is None or state is None:
                retrying = retry_policy(config.max_retries)
                retrying.begin()
                state = RetryCallState(retrying, fn=None, args=(), kwargs={})
            state.set_exception((type(exc), exc, exc.__traceback__))
        decision = retrying.iter(state)  # raises the error when it is not to be retried
        if not isinstance(decision, DoSleep):  # pragma: no cover - tenacity's contract
            raise RuntimeError(f"unexpected retry decision {decision!r}")
        state.prepare_for_next_attempt()
        yield float(decision)


class Done(Generic[T]):
    """A finished generator's return value, as a driver receives it from :func:`advance`."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


Y = TypeVar("Y")
S = TypeVar("S")


def advance(flow: Generator[Y, S, T], answer: S) -> Union[Y, Done[T]]:
    """The flow's next step, or :class:`Done` once it returns (its errors propagate).

    A new flow is started with ``None`` (its answer type always admits it)."""
    try:
        return flow.send(answer)
    except StopIteration as stop:
        return Done(stop.value)


class SyncRequester(Protocol):
    """What pages, resources and pollers need of a sync client: to make a call."""

    def _request(self, call: APICall[T]) -> T: ...

    def with_options(self, *, max_retries: Optional[int] = None) -> SyncRequester: ...


class AsyncRequester(Protocol):
    """The async twin: making a call is awaited."""

    async def _request(self, call: APICall[T]) -> T: ...

    def with_options(self, *, max_retries: Optional[int] = None) -> AsyncRequester: ...
