"""OpenTelemetry spans and metrics of the SDK's own meaning, when OpenTelemetry is there.

Nothing here imports ``opentelemetry`` until a hook runs, and a hook does nothing (one
global check) when the package is missing or when neither a tracer provider nor a meter
provider has been set: the SDK costs the same as without this module until the
application configures OpenTelemetry. Every hook is one line in the code it observes.

Attribute names follow OpenTelemetry's HTTP and messaging semantic conventions where one
applies; the SDK's own are under ``sports_posts.``. No attribute ever holds the API key,
a signing secret, a request's headers or a body.

Telemetry observes and never decides: every call into OpenTelemetry is guarded, so a
raising span processor, tracer provider or meter changes no outcome (an API call still
returns, a refusal is still its own error, a lease is still known to its holder). A
failure is logged as a warning at most once per hook every ``_REPORT_EVERY`` seconds and
otherwise swallowed. The SDK changes its own state before any hook runs.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Generator, Mapping
from datetime import datetime
from typing import Any, Callable, Optional, TypeVar

# A leaf of the package: it reads the calls, budgets and draws it is handed by attribute and
# imports none of their modules (not even for type checkers), so no import circle runs
# through the hooks that the client, the budget and the receiver call.
APICall = Any
ClientConfig = Any
CallBudget = Any
BudgetDraw = Any
RefusalT = TypeVar("RefusalT", bound=BaseException)

__all__ = ["METER_NAME", "TRACER_NAME", "traced_flow"]

TRACER_NAME = METER_NAME = "sports_posts"

log = logging.getLogger("sports_posts.telemetry")

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

_api: Any = None  # the opentelemetry modules, or False when the package is missing
_meter_for: Any = None  # the meter provider the instruments below belong to
_instruments: dict[str, Any] = {}
# Last values of the gauges, read by the observable gauges' callbacks: {(name, attrs): value}.
_gauges: dict[tuple[str, tuple[tuple[str, Any], ...]], float] = {}
_inboxes: weakref.WeakSet[Any] = weakref.WeakSet()
_call_span: Any = None  # a ContextVar of the call span in flight (for a budget refusal)


_REPORT_EVERY = 300.0  # seconds between two warnings of the same failing hook
_reported: dict[str, float] = {}


def failed(where: str) -> None:
    """Report a failure of telemetry in ``where`` (inside an ``except``): a warning at most
    once per ``_REPORT_EVERY`` seconds per hook, a debug line otherwise; never raises."""
    try:
        now = time.monotonic()
        last = _reported.get(where)
        if last is not None and now - last < _REPORT_EVERY:
            log.debug("telemetry failed in %s (reported already)", where, exc_info=True)
            return
        _reported[where] = now
        log.warning("telemetry failed in %s; the SDK goes on without it (reported once every %d s)",
                    where, int(_REPORT_EVERY), exc_info=True)
    except Exception:  # pragma: no cover - a logging handler that raises: nothing left to tell
        pass


def _guarded(where: str) -> Callable[[F], F]:
    """A hook that swallows (and reports) any failure of the telemetry it runs."""
    import functools

    def decorate(hook: F) -> F:
        @functools.wraps(hook)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return hook(*args, **kwargs)
            except Exception:
                failed(where)
                return None

        return wrapper  # type: ignore[return-value]

    return decorate


def error_type(exc: BaseException) -> str:
    """``error.type`` of an exception: the SDK's errors and builtins by their name, any other
    by its qualified name (``asyncio.exceptions.CancelledError``)."""
    cls = type(exc)
    module = getattr(cls, "__module__", "") or ""
    name = getattr(cls, "__qualname__", cls.__name__)
    if module == "builtins" or module == "sports_posts" or module.startswith("sports_posts."):
        return str(name)
    return f"{module}.{name}"


class _Span:
    """A span whose every method is guarded: a raising processor or exporter (``on_end``)
    never reaches the code the span observes."""

    __slots__ = ("_span",)

    def __init__(self, span: Any) -> None:
        self._span = span

    def set_attribute(self, key: str, value: Any) -> None:
        try:
            self._span.set_attribute(key, value)
        except Exception:
            failed("span.set_attribute")

    def add_event(self, name: str, attributes: Mapping[str, Any]) -> None:
        try:
            self._span.add_event(name, dict(attributes))
        except Exception:
            failed("span.add_event")

    def set_error(self, exc_type: str) -> None:
        try:
            trace = _api[0]
            self._span.set_status(trace.Status(trace.StatusCode.ERROR, exc_type))
        except Exception:
            failed("span.set_status")

    def is_recording(self) -> bool:
        try:
            return bool(self._span.is_recording())
        except Exception:
            failed("span.is_recording")
            return False

    def end(self) -> None:
        try:
            self._span.end()
        except Exception:
            failed("span.end")


def start_span(api: Any, name: str, **kwargs: Any) -> Optional[_Span]:
    """A guarded span of the SDK's tracer, or ``None`` when the provider or tracer fails."""
    try:
        return _Span(_tracer(api).start_span(name, **kwargs))
    except Exception:
        failed("start_span")
        return None


def _otel() -> Any:
    """The ``opentelemetry.trace`` and ``.metrics`` modules, or ``None`` without the package."""
    global _api, _call_span
    if _api is None:
        try:
            from opentelemetry import metrics, trace
        except ImportError:
            _api = False
        except Exception:  # a broken installation: the SDK runs without telemetry
            failed("import opentelemetry")
            _api = False
        else:
            import contextvars

            _api = (trace, metrics)
            _call_span = contextvars.ContextVar("sports_posts_call_span", default=None)
    return _api or None


def _configured(api: Any) -> tuple[bool, bool]:
    """Whether a real tracer provider and a real meter provider are set (the API's proxies
    until the application sets one); neither when asking fails. Asked on every call through
    OpenTelemetry's own getters, so a provider set at any time is seen at the next call."""
    try:
        return _providers(api)
    except Exception:
        failed("get_tracer_provider")
        return False, False


def _providers(api: Any) -> tuple[bool, bool]:
    trace, metrics = api
    tracing = type(trace.get_tracer_provider()).__name__ not in ("ProxyTracerProvider", "NoOpTracerProvider")
    metering = type(metrics.get_meter_provider()).__name__ not in ("_ProxyMeterProvider", "NoOpMeterProvider")
    return tracing, metering


def recording() -> Optional[tuple[Any, bool]]:
    """The OpenTelemetry modules and whether spans are recorded, when a provider of either
    kind is configured; ``None`` when nothing would be recorded."""
    api = _otel()
    if api is None:
        return None
    tracing, metering = _configured(api)
    return (api, tracing) if tracing or metering else None


def _tracer(api: Any) -> Any:
    from ._version import __version__

    return api[0].get_tracer(TRACER_NAME, __version__)


def _instrument(name: str) -> Any:
    """The instrument ``name`` of the current meter provider, or ``None`` without one."""
    global _meter_for
    api = _otel()
    if api is None:
        return None
    provider = api[1].get_meter_provider()
    if provider is not _meter_for:
        _instruments.clear()
        _meter_for = provider
        if not _configured(api)[1]:
            return None
        _make_instruments(provider)
    return _instruments.get(name)


def _make_instruments(provider: Any) -> None:
    from ._version import __version__

    meter = provider.get_meter(METER_NAME, __version__)
    counters = {
        "sports_posts.calls": ("{call}", "Requests sent to the service (each attempt; a retry counts again)."),
        "sports_posts.retries": ("{retry}", "Retries after a failed attempt."),
        "sports_posts.budget.refusals": ("{call}", "Calls a CallBudget refused (nothing was sent)."),
        "sports_posts.poll.posts_delivered": ("{post}", "Posts a poller delivered."),
        "sports_posts.webhook.deliveries": ("{delivery}", "Webhook deliveries answered, by outcome."),
        "sports_posts.lease.changes": ("{change}", "Leases this process took (a new holder) or lost."),
    }
    for name, (unit, description) in counters.items():
        _instruments[name] = meter.create_counter(name, unit=unit, description=description)
    gauges = {
        "sports_posts.budget.left": ("{call}", "Calls left in the budget's window (minute, month) at the last draw."),
        "sports_posts.poll.lag": ("s", "Service time minus the newest post delivered, at the poller's last call."),
        "sports_posts.inbox.depth": ("{entry}", "Inbox entries waiting or in progress."),
        "sports_posts.inbox.dead": ("{entry}", "Inbox entries that used every attempt (dead letters)."),
        "sports_posts.inbox.in_progress": ("{entry}", "Inbox entries a worker holds now."),
        "sports_posts.inbox.latency": ("s", "Seconds the oldest due inbox entry has waited for a worker."),
    }
    for name, (unit, description) in gauges.items():
        _instruments[name] = meter.create_observable_gauge(
            name, callbacks=[_observer(name)], unit=unit, description=description)


def _observer(name: str) -> Callable[[Any], list[Any]]:
    def observe(options: Any) -> list[Any]:
        from opentelemetry.metrics import Observation

        if name.startswith("sports_posts.inbox."):
            _observe_inboxes()
        return [Observation(v, dict(attrs)) for (n, attrs), v in list(_gauges.items()) if n == name]

    return observe


def _gauge(name: str, value: float, **attrs: Any) -> None:
    _gauges[(name, tuple(sorted(attrs.items())))] = value


def add(name: str, attrs: Mapping[str, Any], value: int = 1) -> None:
    """Add ``value`` to the counter ``name`` (when metrics are recorded); never raises."""
    try:
        counter = _instrument(name)
        if counter is not None:
            counter.add(value, dict(attrs))
    except Exception:
        failed(name)


# -- API calls -------------------------------------------------------------------------------

def _mode(call: APICall) -> Optional[str]:
    """The mode of GET /posts the service infers from the parameters (spec 4.1)."""
    if call.path != "/posts":
        return None
    from ._vocabulary import (
        MODE_PARAMETERS,  # with a configured provider only: the client loads without it
    )

    for mode, params in MODE_PARAMETERS.items():
        if params[0] in call.params:  # the mode's own parameter (lat, not lng; match, not start_time)
            return mode
    if call.params.get("sort") == "trending" or not ("leagues" in call.params or "league" in call.params):
        return "trending"
    return "league"


def traced_flow(flow: Generator[Any, Any, T], call: APICall, config: ClientConfig) -> Generator[Any, Any, T]:
    """``flow`` (a call's ``exchange_flow``) observed: a span per call, the call and retry
    counters; ``flow`` itself when OpenTelemetry is absent or not configured.

    A driver hands an exception that stops the call outside the flow (a cancellation, a
    ``KeyboardInterrupt``, a refusal) to ``interrupted`` before raising it."""
    observed = recording()
    if observed is None:
        return flow
    return _observed(flow, call, config, *observed)


def _observed(flow: Generator[Any, Any, T], call: APICall, config: ClientConfig, api: Any,
              tracing: bool) -> Generator[Any, Any, T]:
    trace = api[0]
    url = config.base_url if isinstance(config.base_url, str) else str(config.base_url)
    template = url.split("://", 1)[-1].split("/", 1)[-1].rstrip("/")
    template = ("/" + template if template else "") + call.path
    host_port = url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
    host, _, port = host_port.partition(":")
    attrs: dict[str, Any] = {"http.request.method": call.method, "url.template": template,
                             "server.address": host, "sports_posts.endpoint": call.path}
    if port.isdigit():
        attrs["server.port"] = int(port)
    mode = _mode(call)
    if mode is not None:
        attrs["sports_posts.mode"] = mode
    span = start_span(api, f"{call.method} {template}", kind=trace.SpanKind.CLIENT, attributes=attrs) \
        if tracing else None
    metric = {"url.template": template}
    attempts = 0
    status: Optional[int] = None
    value: Any = None
    try:
        while True:
            try:
                step = flow.send(value)
            except StopIteration as done:
                if span is not None:
                    span.set_attribute("http.response.status_code", status or 0)
                return done.value  # type: ignore[no-any-return]
            sending = not isinstance(step, float)  # a Send, or the seconds of a wait
            if sending:
                attempts += 1
                if attempts > 1:
                    add("sports_posts.retries", metric)
                if span is not None:
                    _call_span.set(span)  # seen by a CallBudget refusing this attempt
            elif span is not None:
                span.add_event("sports_posts.retry_wait", {"sports_posts.retry.wait_seconds": float(step),
                                                           "sports_posts.attempt": attempts})
            value = yield step
            if sending:
                status = getattr(value, "status_code", None)
                outcome = {"http.response.status_code": status} if status else {"error.type": type(value).__name__}
                add("sports_posts.calls", {**metric, **outcome})
    except GeneratorExit:  # the driver stopped (a budget refusal ends the span first)
        raise
    except BaseException as exc:
        if span is not None and span.is_recording():  # not a span a budget refusal ended
            kind = error_type(exc)
            span.set_attribute("error.type", kind)
            code = getattr(exc, "status_code", None)  # an APIStatusError
            if isinstance(code, int):
                span.set_attribute("http.response.status_code", code)
            error_code = getattr(exc, "error_code", None)
            if error_code:
                span.set_attribute("sports_posts.error_code", str(error_code)[:100])
            span.set_error(kind)
        raise
    finally:
        if span is not None:
            if _call_span.get() is span:
                _call_span.set(None)
            if span.is_recording():
                span.set_attribute("sports_posts.attempts", attempts)
                if attempts > 1:
                    span.set_attribute("http.request.resend_count", attempts - 1)
                span.end()


def interrupted(flow: Generator[Any, Any, Any], exc: BaseException) -> None:
    """End the span of an observed ``flow`` that ``exc`` stops from outside (a cancelled or
    timed-out task, a ``KeyboardInterrupt`` in the transport), marked as that error, before
    the driver raises it; nothing for a flow that is not observed or already finished."""
    if getattr(flow, "gi_code", None) is not _observed.__code__ or getattr(flow, "gi_frame", None) is None:
        return
    traceback, context = exc.__traceback__, exc.__context__
    try:
        flow.throw(exc)
    except BaseException as raised:
        if raised is not exc and not isinstance(raised, StopIteration):
            failed("interrupted")
    finally:  # the caller sees the exception as it was raised, without the flow's frames
        exc.__traceback__, exc.__context__ = traceback, context


# -- the budget ------------------------------------------------------------------------------


@_guarded("budget_drawn")
def budget_drawn(budget: CallBudget, draw: BudgetDraw) -> None:
    """Record what is left of ``budget`` after a draw (its store's answer)."""
    if _api is False or (_api is None and _otel() is None):
        return
    key = budget.key
    if budget.per_minute is not None:
        _gauge("sports_posts.budget.left", max(budget.per_minute - draw.minute_used, 0),
               **{"sports_posts.budget.key": key, "sports_posts.budget.window": "minute"})
    if budget.per_month is not None:
        _gauge("sports_posts.budget.left", max(budget.per_month - draw.month_used, 0),
               **{"sports_posts.budget.key": key, "sports_posts.budget.window": "month"})


def budget_refused(budget: CallBudget, refusal: RefusalT) -> RefusalT:
    """Count a refusal and end the refused call's span with it; returns ``refusal`` to raise,
    whatever the telemetry does."""
    _refused(budget, refusal)
    return refusal


@_guarded("budget_refused")
def _refused(budget: CallBudget, refusal: BaseException) -> None:
    if _otel() is None:
        return
    add("sports_posts.budget.refusals", {"sports_posts.budget.key": budget.key,
                                         "sports_posts.budget.bound": getattr(refusal, "bound", None)})
    span = _call_span.get()
    if span is not None:
        _call_span.set(None)
        if span.is_recording():
            span.set_attribute("error.type", "BudgetExhaustedError")
            span.set_attribute("sports_posts.budget.bound", getattr(refusal, "bound", ""))
            span.set_error("BudgetExhaustedError")
            span.set_attribute("sports_posts.attempts", 0)
            span.end()


# -- the poller ------------------------------------------------------------------------------


def _feed(filters: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(filters.items()) if v is not None) or "all"


@_guarded("posts_delivered")
def posts_delivered(count: int, filters: Mapping[str, Any]) -> None:
    """Count the posts of a batch a poller delivered."""
    if _api is False:
        return
    add("sports_posts.poll.posts_delivered", {"sports_posts.poll.feed": _feed(filters)}, count)


@_guarded("poll_lag")
def poll_lag(service_now: datetime, state: Any, filters: Mapping[str, Any]) -> None:
    """Record the poller's lag after a call: the service's now minus the newest post
    delivered (the saved state's watermark; nothing before the first save)."""
    if _api is False or state is None:
        return
    _gauge("sports_posts.poll.lag", max((service_now - state.watermark).total_seconds(), 0.0),
           **{"sports_posts.poll.feed": _feed(filters)})


# -- leases ----------------------------------------------------------------------------------


@_guarded("lease_taken")
def lease_taken(key: str, before: Optional[int], token: int) -> None:
    """Count a lease taken with a new fencing token (a new holder), not a re-acquire."""
    if token and token != before:
        lease_changed(key, "acquired")


@_guarded("lease_changed")
def lease_changed(key: str, change: str) -> None:
    """Count a lease this process took (``acquired``: a new holder) or lost (``lost``)."""
    if _api is False:
        return
    add("sports_posts.lease.changes", {"sports_posts.lease.key": key, "sports_posts.lease.change": change})


# -- inboxes ------------------------------------------------------------------------------

def inbox_name(inbox: Any) -> str:
    """An inbox as its telemetry names it: its queue (engine, where, table or prefix), the same
    in every process that drains it, so that a fleet reports one series per queue; else its class."""
    queue = getattr(inbox, "queue", None)
    return queue if isinstance(queue, str) else type(inbox).__name__


def _observe_inboxes() -> None:
    seen: set[str] = set()
    for inbox in list(_inboxes):
        name = inbox_name(inbox)
        if name in seen:  # two receivers of one process on one queue: one figure
            continue
        seen.add(name)
        try:
            counts = inbox.counts()
            latency = inbox.latency() if callable(getattr(inbox, "latency", None)) else None
        except Exception:  # an unreachable store: no figure rather than a failed export
            continue
        attrs = {"sports_posts.inbox": name}
        _gauge("sports_posts.inbox.depth", counts.get("pending", 0) + counts.get("processing", 0), **attrs)
        _gauge("sports_posts.inbox.in_progress", counts.get("processing", 0), **attrs)
        _gauge("sports_posts.inbox.dead", counts.get("dead", 0), **attrs)
        if latency is not None:
            _gauge("sports_posts.inbox.latency", latency, **attrs)


@_guarded("watch_inbox")
def watch_inbox(inbox: Any) -> None:
    """Report ``inbox``'s depth and dead letters with the gauges (read when exported)."""
    if inbox is not None and _otel() is not None:
        _inboxes.add(inbox)


def absent() -> bool:
    """Whether OpenTelemetry is known to be missing (a check of one module global)."""
    return _api is False
