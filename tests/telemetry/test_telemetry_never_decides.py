"""Telemetry observes and never decides: a raising span processor, tracer provider or meter
(the real OpenTelemetry SDK) changes no outcome; a call stopped from outside (cancelled,
timed out, interrupted) ends its span as an error before the caller sees the exception."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterator
from typing import Any, Callable

import httpx
import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from sports_posts import AsyncSportsPosts, BudgetExhaustedError, CallBudget, SportsPosts, _telemetry
from sports_posts.polling import Lease

API_KEY = "sk_test_never_decides_0123456789"
BASE = "https://api.test/v1"
ACCOUNT = {"ids_to_delete": ["1", "2"], "as_of": "2030-01-01T00:00:00Z"}


def ok(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=ACCOUNT)


class RaisingProcessor(SpanProcessor):
    """A span processor that raises when a span starts or ends (an exporter gone wrong)."""

    def __init__(self, on: str) -> None:
        self.on = on

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if self.on == "start":
            raise RuntimeError("span processor broke on_start")

    def on_end(self, span: Any) -> None:
        if self.on == "end":
            raise RuntimeError("span processor broke on_end")


class RaisingTracerProvider(TracerProvider):
    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("get_tracer broke")


class RaisingCounter:
    def add(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("counter broke")


class RaisingCounterMeterProvider(MeterProvider):
    """The SDK's meter provider whose counters raise on ``add``."""

    def get_meter(self, *args: Any, **kwargs: Any) -> Any:
        meter = super().get_meter(*args, **kwargs)

        class Meter:
            def create_counter(self, *a: Any, **k: Any) -> RaisingCounter:
                return RaisingCounter()

            def __getattr__(self, name: str) -> Any:
                return getattr(meter, name)

        return Meter()


class RaisingGetMeterProvider(MeterProvider):
    def get_meter(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("get_meter broke")


def install(monkeypatch: pytest.MonkeyPatch, tracer_provider: Any = None, meter_provider: Any = None) -> None:
    """``tracer_provider`` and ``meter_provider`` as the ones the SDK's hooks see."""
    if tracer_provider is not None:
        monkeypatch.setattr(trace, "get_tracer_provider", lambda: tracer_provider)
    if meter_provider is not None:
        monkeypatch.setattr(metrics, "get_meter_provider", lambda: meter_provider)
    monkeypatch.setattr(_telemetry, "_reported", {})


def provider_with(processor: SpanProcessor) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(processor)
    return provider


BROKEN: dict[str, Callable[[], tuple[Any, Any]]] = {
    "on_end raises": lambda: (provider_with(RaisingProcessor("end")), None),
    "on_start raises": lambda: (provider_with(RaisingProcessor("start")), None),
    "get_tracer raises": lambda: (RaisingTracerProvider(), None),
    "a counter raises": lambda: (None, RaisingCounterMeterProvider(metric_readers=[InMemoryMetricReader()])),
    "get_meter raises": lambda: (None, RaisingGetMeterProvider()),
}


@pytest.fixture(params=sorted(BROKEN))
def broken(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    tracer_provider, meter_provider = BROKEN[request.param]()
    install(monkeypatch, tracer_provider, meter_provider)
    yield request.param


def test_a_call_returns_whatever_the_telemetry_raises(broken: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="sports_posts.telemetry")
    with SportsPosts(api_key=API_KEY, base_url=BASE, http_client=httpx.Client(transport=httpx.MockTransport(ok))) as c:
        for _ in range(3):
            assert c.account.x_ids().ids_to_delete == ["1", "2"]
    warnings = [r for r in caplog.records if r.name == "sports_posts.telemetry" and r.levelno == logging.WARNING]
    # reported, once per failing hook however many calls meet it
    assert warnings, broken
    assert len({r.getMessage() for r in warnings}) == len(warnings)


@pytest.mark.anyio
async def test_an_async_call_returns_whatever_the_telemetry_raises(broken: str) -> None:
    async with AsyncSportsPosts(api_key=API_KEY, base_url=BASE,
                                http_client=httpx.AsyncClient(transport=httpx.MockTransport(ok))) as c:
        assert (await c.account.x_ids()).ids_to_delete == ["1", "2"]


def test_an_api_error_is_still_that_error(broken: str) -> None:
    from sports_posts import InternalServerError

    def fail(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"error": "boom", "code": "INTERNAL"})

    with SportsPosts(api_key=API_KEY, base_url=BASE, max_retries=0,
                     http_client=httpx.Client(transport=httpx.MockTransport(fail))) as c, \
            pytest.raises(InternalServerError):
        c.account.x_ids()


def test_a_spent_budget_is_still_budget_exhausted(broken: str, redis_url: str) -> None:
    budget = CallBudget(redis_url, per_month=1, key=f"test:budget:{uuid.uuid4().hex}")
    try:
        with SportsPosts(api_key=API_KEY, base_url=BASE, budget=budget,
                         http_client=httpx.Client(transport=httpx.MockTransport(ok))) as c:
            assert c.account.x_ids().ids_to_delete == ["1", "2"]
            for _ in range(2):
                with pytest.raises(BudgetExhaustedError):
                    c.account.x_ids()
    finally:
        budget.close()


def test_a_lease_is_held_and_its_token_known(broken: str, redis_url: str) -> None:
    key = f"test:lease:{uuid.uuid4().hex}"
    lease = Lease(redis_url, key=key, ttl=30)
    try:
        token = lease.acquire()
        assert token and lease.token == token
        assert lease.status().holder == lease.holder
        assert lease.acquire() == token  # a re-acquire by the holder, not an error
        other = Lease(redis_url, key=key, ttl=30)
        assert not other.acquire()
        other.close()
    finally:
        lease.release()
        lease.close()


def test_a_raising_logging_handler_does_not_leak_out_of_a_report(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            raise RuntimeError("handler broke")

        def handleError(self, record: logging.LogRecord) -> None:
            raise RuntimeError("handleError broke")

    install(monkeypatch, RaisingTracerProvider())
    handler = Broken()
    logging.getLogger("sports_posts.telemetry").addHandler(handler)
    try:
        with SportsPosts(api_key=API_KEY, base_url=BASE,
                         http_client=httpx.Client(transport=httpx.MockTransport(ok))) as c:
            assert c.account.x_ids().ids_to_delete == ["1", "2"]
    finally:
        logging.getLogger("sports_posts.telemetry").removeHandler(handler)


# -- spans of interrupted calls --------------------------------------------------------------

@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    install(monkeypatch, provider_with(SimpleSpanProcessor(exporter)))
    return exporter


def ended_error(exporter: InMemorySpanExporter, error_type: str) -> Any:
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None and span.attributes["error.type"] == error_type
    return span


def test_a_keyboard_interrupt_in_the_transport_ends_the_span_as_an_error(spans: InMemorySpanExporter) -> None:
    seen: list[int] = []

    def interrupt(request: httpx.Request) -> httpx.Response:
        raise KeyboardInterrupt

    with SportsPosts(api_key=API_KEY, base_url=BASE,
                     http_client=httpx.Client(transport=httpx.MockTransport(interrupt))) as c:
        try:
            c.account.x_ids()
        except KeyboardInterrupt as exc:
            seen.append(len(spans.get_finished_spans()))  # ended before the caller sees it
            assert "_observed" not in "".join(str(f) for f in __import__("traceback").format_tb(exc.__traceback__))
    assert seen == [1]
    ended_error(spans, "KeyboardInterrupt")


@pytest.mark.anyio
async def test_a_cancelled_async_call_ends_its_span_as_an_error(spans: InMemorySpanExporter) -> None:
    started = asyncio.Event()

    async def hang(request: httpx.Request) -> httpx.Response:
        started.set()
        await asyncio.Event().wait()  # never answers
        raise AssertionError("unreachable")

    seen: list[int] = []
    async with AsyncSportsPosts(api_key=API_KEY, base_url=BASE,
                                http_client=httpx.AsyncClient(transport=httpx.MockTransport(hang))) as c:

        async def call() -> None:
            try:
                await c.account.x_ids()
            except asyncio.CancelledError:
                seen.append(len(spans.get_finished_spans()))
                raise

        task = asyncio.ensure_future(call())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert seen == [1]
    ended_error(spans, "asyncio.exceptions.CancelledError")


@pytest.mark.anyio
async def test_a_timed_out_async_call_ends_its_span_as_an_error(spans: InMemorySpanExporter) -> None:
    async def hang(request: httpx.Request) -> httpx.Response:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async with AsyncSportsPosts(api_key=API_KEY, base_url=BASE,
                                http_client=httpx.AsyncClient(transport=httpx.MockTransport(hang))) as c:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(c.account.x_ids(), 0.01)  # the call hangs: the timeout ends it
    ended_error(spans, "asyncio.exceptions.CancelledError")


def test_a_budget_refusal_still_ends_its_span_once(spans: InMemorySpanExporter, redis_url: str) -> None:
    budget = CallBudget(redis_url, per_month=0 + 1, key=f"test:budget:{uuid.uuid4().hex}")
    try:
        with SportsPosts(api_key=API_KEY, base_url=BASE, budget=budget,
                         http_client=httpx.Client(transport=httpx.MockTransport(ok))) as c:
            c.account.x_ids()
            spans.clear()
            with pytest.raises(BudgetExhaustedError):
                c.account.x_ids()
    finally:
        budget.close()
    span = ended_error(spans, "BudgetExhaustedError")
    assert span.attributes["sports_posts.attempts"] == 0


def test_error_type_names_foreign_exceptions_by_their_qualified_name() -> None:
    from sports_posts import NotFoundError

    assert _telemetry.error_type(KeyboardInterrupt()) == "KeyboardInterrupt"
    assert _telemetry.error_type(NotFoundError.__new__(NotFoundError)) == "NotFoundError"
    assert _telemetry.error_type(asyncio.CancelledError()) == "asyncio.exceptions.CancelledError"
