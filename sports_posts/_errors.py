"""The exception hierarchy of API.md, the map from an HTTP answer to its class, and the
SDK's warnings (requests it sends although the specification does not define their answer:
a warning rather than an error, since the service may well answer them).

Every error the SDK raises is a ``SportsPostsError``, so ``except SportsPostsError``
is always enough; no raw ``KeyError``, ``JSONDecodeError`` or pydantic error escapes.
Messages never carry the API key or a signing secret.

Every error crosses a process boundary (pickle: ``multiprocessing``, ``ProcessPoolExecutor``,
Celery, RQ) as the same class with the same message and attributes, whatever its
constructor takes; its response is rebuilt there (status, headers, address, body), its
request stays behind (``None`` on the other side: it carries the key in its headers).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # the HTTP stack is loaded by the clients, not by a script that only verifies webhooks
    from httpx import Request, Response  # what _http takes its annotations from (no import circle)

__all__ = [
    "CombinedModesWarning",
    "SportsPostsWarning",
    "APIConnectionError",
    "APIResponseValidationError",
    "APIStatusError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "GoneError",
    "HTTPClientScopeError",
    "InternalServerError",
    "InvalidParameterError",
    "InvalidRequestError",
    "NotFoundError",
    "PageLimitError",
    "PaginationError",
    "ParameterError",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "RateLimitError",
    "ResponseTooLargeError",
    "SignatureVerificationError",
    "SinceIdNotFoundError",
    "SportsPostsError",
    "WebhookPayloadError",
    "status_error_from_response",
]


_LEFT_BEHIND = frozenset({"request"})
"""Attributes an error does not pickle: the request holds the key in its headers."""

_HOP_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def _response_parts(response: Any) -> Optional[tuple[Any, ...]]:
    """What rebuilds ``response`` on the other side of a process boundary: its library, status,
    headers (those of its decoded body), its request's method and address without the query,
    and its body. Never the request's headers (the key) nor its query."""
    try:
        request = response.request
        url = str(request.url.copy_with(query=None))
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _HOP_HEADERS]
        return (type(response).__module__.split(".")[0], response.status_code, headers, request.method, url,
                bytes(response.content))
    except Exception:  # a response not read, or not a library's: left behind, as before
        return None


def _response_from(parts: tuple[Any, ...]) -> Any:
    """A real response of the same library, status, headers and body (``_response_parts``)."""
    import importlib

    library, status, headers, method, url, content = parts
    module = importlib.import_module(library)
    return module.Response(status, headers=headers, content=content, request=module.Request(method, url))


def _rebuilt(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> BaseException:
    """An error of ``cls`` with ``args`` and ``state``, made without calling its constructor
    (whose keyword-only arguments pickle's default cannot pass)."""
    error = cls.__new__(cls)
    error.args = args
    parts = state.pop("__response_parts__", None)
    error.__dict__.update(state)
    if "response" in state:
        error.__dict__["response"] = _response_from(parts) if parts is not None else None
    return error


def reduce_error(error: BaseException) -> tuple[Any, ...]:
    """``__reduce__`` of an exception with any constructor: its class, ``args`` and
    attributes; the request stays behind (it holds the key), the response is rebuilt on the
    other side from its status, headers, address and body, so ``e.response.status_code``
    is true there too."""
    state: dict[str, Any] = {}
    for name, value in vars(error).items():
        if name == "response":
            state[name] = None
            if value is not None:
                state["__response_parts__"] = _response_parts(value)
        else:
            state[name] = None if name in _LEFT_BEHIND else value
    return _rebuilt, (type(error), tuple(error.args), state)


class SportsPostsError(Exception):
    """Base class of every error raised by ``sports_posts``.

    ``.request_id`` names the call that failed, for a support ticket or a log search: the
    answer's ``X-Request-Id`` when a gateway in front of the service added one, else the
    SDK's own id of the call (``sp_`` and 24 hex digits), which its log lines carry too;
    ``None`` for an error no call raised (a bad option at construction, say).
    """

    request_id: Optional[str] = None

    def __reduce__(self) -> tuple[Any, ...]:
        return reduce_error(self)


class InvalidRequestError(SportsPostsError):
    """A request's parameters were refused, by the SDK before sending
    (``ParameterError``) or by the service (``InvalidParameterError``).

    Catch this one class to handle both: which side noticed the mistake is an accident of
    where a rule is checked. ``.parameter`` names the parameter when it is known.
    """

    parameter: Optional[str] = None


class ParameterError(InvalidRequestError, ValueError):
    """A call's arguments break a rule of the specification; nothing was sent.

    ``.parameter`` names the offending parameter (``None`` for client configuration).
    """

    def __init__(self, message: str, *, parameter: Optional[str] = None) -> None:
        super().__init__(message)
        self.parameter = parameter


class APIConnectionError(SportsPostsError):
    """The request did not get an HTTP answer (refused, reset, DNS, TLS, protocol error)."""

    _retryable = True
    """False for a failure no retry can mend (a redirect loop, a refused certificate, a URL
    the HTTP library cannot send): it is raised at the first attempt."""

    def __init__(self, message: str = "Connection error.", *, request: Optional[Request] = None) -> None:
        super().__init__(message)
        self.request = request


class APITimeoutError(APIConnectionError):
    """The request timed out (connect, read, write or pool)."""

    def __init__(self, message: str = "Request timed out.", *, request: Optional[Request] = None) -> None:
        super().__init__(message, request=request)


class APIResponseValidationError(SportsPostsError):
    """A 2xx answer whose body is not what the specification describes.

    ``.field`` is the dotted path of the first offending field (``None`` when the body is
    not JSON at all); ``.body`` keeps the raw text so that nothing is lost.
    """

    def __init__(
        self,
        message: str,
        *,
        response: Optional[Response] = None,
        body: Optional[str] = None,
        field: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.response = response
        self.body = body
        self.field = field


class PaginationError(APIResponseValidationError):
    """A page that does not advance: the service answered the page number it had already
    sent, or the very same posts again, while claiming ``has_next``.

    Iterating on would spend calls without end, so the walk (or the poller's cycle) stops
    after the call that showed it. ``.page`` is the page number that was asked for.
    """

    def __init__(self, message: str, *, page: int) -> None:
        super().__init__(message)
        self.page = page


class PageLimitError(SportsPostsError):
    """A walk over pages reached its ``max_pages`` bound while the service still claimed
    ``has_next``; nothing past the bound was fetched. ``.max_pages`` is the bound."""

    def __init__(self, message: str, *, max_pages: int) -> None:
        super().__init__(message)
        self.max_pages = max_pages


class APIStatusError(SportsPostsError):
    """The service answered with a non-2xx status.

    ``.error_code`` and ``.error_message`` come from the service's JSON error body when it has
    that shape; otherwise they are ``None`` and ``.body`` keeps the raw text (an HTML page
    from a proxy, say). ``.retry_after`` is the ``Retry-After`` header in seconds, if any.
    """

    status_code: int

    def __init__(
        self,
        message: str,
        *,
        response: Response,
        body: object,
        error_code: Optional[str] = None,
        error_message: Optional[str] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.response = response
        self.status_code = response.status_code
        self.body = body
        self.error_code = error_code
        self.error_message = error_message
        self.retry_after = retry_after


class BadRequestError(APIStatusError):
    """400: a bad or missing parameter the SDK could not catch before sending."""


class InvalidParameterError(BadRequestError, InvalidRequestError):
    """400 ``INVALID_PARAMETER``: do not retry unchanged."""


class SinceIdNotFoundError(BadRequestError):
    """400 ``SINCE_ID_NOT_FOUND``: the ``since_id`` post is gone; drop it and use ``since``."""


class AuthenticationError(APIStatusError):
    """401 ``UNAUTHORIZED``: missing or invalid API key."""


class PaymentRequiredError(APIStatusError):
    """402: the account has no active subscription."""


class PermissionDeniedError(APIStatusError):
    """403 ``FORBIDDEN``: endpoint or league not included in the plan."""


class NotFoundError(APIStatusError):
    """404 ``NOT_FOUND``: no team or player matched the given ids."""


class GoneError(APIStatusError):
    """410: a deprecated per-mode route; use ``GET /posts``."""


class RateLimitError(APIStatusError):
    """429 ``RATE_LIMITED``: monthly quota or burst limit; ``.retry_after`` says how long."""


class InternalServerError(APIStatusError):
    """500 and above."""


class SignatureVerificationError(SportsPostsError):
    """A webhook request whose signature is missing, malformed or does not match."""


class WebhookPayloadError(SportsPostsError):
    """A correctly signed webhook body that is not an event of the specification."""


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: PaymentRequiredError,
    403: PermissionDeniedError,
    404: NotFoundError,
    410: GoneError,
    429: RateLimitError,
}
_BY_CODE: dict[str, type[APIStatusError]] = {
    "INVALID_PARAMETER": InvalidParameterError,
    "SINCE_ID_NOT_FOUND": SinceIdNotFoundError,
}


def status_error_class(status_code: int, error_code: Optional[str]) -> type[APIStatusError]:
    """The class for a status and an ``error_code``; the code only refines a 400."""
    if status_code == 400 and error_code in _BY_CODE:
        return _BY_CODE[error_code]
    if status_code >= 500:
        return InternalServerError
    return _BY_STATUS.get(status_code, APIStatusError)


def status_error_from_response(
    response: Response, *, retry_after: Optional[float] = None
) -> APIStatusError:
    """Build the typed error of a non-2xx answer; never fails, whatever the body is."""
    text = _safe_text(response)
    body: Any = text
    error_code: Optional[str] = None
    error_message: Optional[str] = None
    try:
        body = json.loads(text) if text else None
    except ValueError:
        body = text
    if isinstance(body, dict):
        code = body.get("error_code")
        msg = body.get("error_message")
        error_code = code if isinstance(code, str) else None
        error_message = msg if isinstance(msg, str) else None
    cls = status_error_class(response.status_code, error_code)
    reason = error_message or _short(text) or response.reason_phrase or "no body"
    message = f"{response.status_code} {error_code or response.reason_phrase or ''}: {reason}".replace(
        "  ", " "
    )
    return cls(
        message,
        response=response,
        body=body,
        error_code=error_code,
        error_message=error_message,
        retry_after=retry_after,
    )


def _safe_text(response: Response) -> str:
    try:
        return response.text
    except Exception:  # a bad charset, or either stack's ResponseNotRead
        return response.content.decode("utf-8", "replace") if response.is_closed else ""


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class HTTPClientScopeError(SportsPostsError):
    """A call through an ``http_client`` you gave the client, from where that client cannot
    serve it: a process forked after it sent requests (its sockets are the parent's), or an
    event loop other than the one it is still bound to. Nothing was sent.

    The SDK makes its own pools again in a child process and on each event loop; a client
    of yours it cannot remake. The message names the fix: make the SDK client (and your
    ``http_client``) in the child or on the loop that uses it, or leave ``http_client`` out.
    Not retried: the same call would meet the same pool.
    """


class ResponseTooLargeError(APIResponseValidationError):
    """An answer whose decoded body passed ``max_response_bytes``; reading stopped there.

    ``.limit`` is the bound in bytes; raise it with ``max_response_bytes=`` on the client
    or ``with_options``. Nothing past the bound was read or kept.
    """

    def __init__(self, message: str, *, limit: int, response: Optional[Response] = None) -> None:
        super().__init__(message, response=response)
        self.limit = limit


# -- warnings ------------------------------------------------------------------------------


class SportsPostsWarning(UserWarning):
    """Base class of the SDK's warnings (``warnings.simplefilter("error", SportsPostsWarning)``
    turns them into errors, say in a test suite)."""


class CombinedModesWarning(SportsPostsWarning):
    """Parameters of several modes of GET /posts in one request (say ``teams`` with ``lat``).

    The SDK refuses such a request with a ``ParameterError`` before sending it (the service
    refuses it too); this class stays importable so that warning filters naming it keep
    working."""
