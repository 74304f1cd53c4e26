"""The machinery both clients share: settings, the pool, and the two I/O shells.

Request building, parsing, error mapping and the retry decision live in
``_transport.exchange_flow``; ``SyncAPIClient`` and ``AsyncAPIClient`` only drive that
flow: they send the requests it yields and sleep the waits it asks for. The public clients
(``_client.py``) add the resources; resources, pages and pollers hold one of these.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Awaitable, Generator, Mapping
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Generic, Optional, TypeVar, Union, cast

from typing_extensions import Self

from ._config import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TOTAL_TIMEOUT,
    UNSET,
    AuthScheme,
    ClientConfig,
    RetryEvent,
    is_local,
)
from ._errors import ParameterError, SportsPostsError
from ._http import (
    AsyncClient,
    Client,
    GivenClient,
    LoopPool,
    Response,
    Timeout,
    deadline,
    default_stack,
    pool_maker,
    stack_of,
)
from ._redact import watch_key
from ._request import APICall
from ._scoped import PerLoop, PerProcess
from ._telemetry import interrupted, traced_flow
from ._transport import CallCounter, Outcome, RawResponse, Send, Step, exchange_flow, redirect_hop
from ._utils import Done, advance

if TYPE_CHECKING:
    from ._budget import CallBudget

__all__ = ["AsyncAPIClient", "SyncAPIClient"]

T = TypeVar("T")
R = TypeVar("R")
log = logging.getLogger("sports_posts")


def _setup_logging_from_env() -> None:
    """``SPORTS_POSTS_LOG=debug`` (or ``info``) turns the SDK's logger on, to stderr."""
    level = os.environ.get("SPORTS_POSTS_LOG", "").strip().upper()
    if level in ("DEBUG", "INFO", "WARNING", "ERROR"):
        log.setLevel(level)
        if not log.handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
            log.addHandler(handler)


_setup_logging_from_env()


_NATIVE_TIMEOUT = sys.version_info >= (3, 11)
"""Whether ``asyncio.timeout`` exists (an async call on asyncio uses it, anyio's otherwise)."""


def _on_asyncio() -> bool:
    """Whether this coroutine runs on an asyncio loop (not trio, which anyio also runs on)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _sleep_on_the_running_loop(seconds: float) -> None:
    """The async clients' real wait between retries, on whichever loop runs the call
    (asyncio, or trio through anyio)."""
    if _on_asyncio():
        import asyncio  # only async callers pay for importing it

        await asyncio.sleep(seconds)
    else:
        import anyio

        await anyio.sleep(seconds)


H = TypeVar("H", Client, AsyncClient)
S = TypeVar("S", Callable[[float], None], Callable[[float], Awaitable[None]])
"""What a client waits between retries with: a function (sync) or a coroutine function (async)."""


class _ClientBase(Generic[H, S]):
    """Settings, the pool and the call counter, shared by both clients; no I/O."""

    _config: ClientConfig
    _calls: CallCounter
    _pools: Any  # PerProcess (sync) or PerLoop (async) of the SDK's pools, or GivenClient
    _owns_http: bool
    _raw: bool = False

    _http_kind: str
    """The name of the stack's client class this client sends through."""

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout: Union[float, Timeout] = 30.0,
        max_retries: int = 2,
        auth_scheme: AuthScheme = "bearer",
        http_client: Optional[H] = None,
        default_headers: Optional[Mapping[str, str]] = None,
        *,
        total_timeout: Optional[float] = DEFAULT_TOTAL_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        allow_insecure_http: bool = False,
        budget: Optional[CallBudget] = None,
        on_retry: Optional[Callable[[RetryEvent], None]] = None,
        sleep: Optional[S] = None,
    ) -> None:
        stack = default_stack() if http_client is None else stack_of(http_client)
        self._config = ClientConfig.resolve(
            api_key=api_key, base_url=base_url, auth_scheme=auth_scheme, timeout=timeout,
            max_retries=max_retries, default_headers=default_headers, total_timeout=total_timeout,
            max_response_bytes=max_response_bytes, allow_insecure_http=allow_insecure_http,
            stack=stack, on_retry=on_retry, sleep=sleep,
        )
        if budget is not None:
            from ._budget import CallBudget  # loaded only by the clients that draw from one

            if not isinstance(budget, CallBudget):
                raise ParameterError(
                    f"budget must be a CallBudget, got {type(budget).__qualname__}", parameter="budget"
                )
            self._config = replace(self._config, budget=budget)
        http_type: type[H] = getattr(stack, self._http_kind)
        if http_client is not None and not isinstance(http_client, http_type):
            raise ParameterError(
                f"http_client must be an {stack.name}.{self._http_kind} (httpx or httpx2), "
                f"got {type(http_client).__qualname__}",
                parameter="http_client",
            )
        self._calls = CallCounter()
        self._owns_http = http_client is None
        self._pools = GivenClient(http_client) if http_client is not None else self._own_pools()
        watch_key(self, self._config.api_key)  # out of httpx's and httpcore's log records too

    def _own_pools(self) -> Any:
        raise NotImplementedError

    def _pool_factory(self) -> Callable[[], H]:
        """What makes this client's pools, in whichever process or loop needs one."""
        return pool_maker(self._config.stack, self._http_kind, trust_env=not is_local(self._config.base_url))

    def _copy(self, config: ClientConfig, *, raw: bool) -> Self:
        """A view of this client with other settings: same pool, same call counter."""
        clone = object.__new__(type(self))
        clone._config = config
        clone._calls = self._calls
        clone._pools = self._pools
        clone._owns_http = False
        clone._raw = raw
        watch_key(clone, config.api_key)  # a copy may outlive the client it came from
        return clone

    def with_options(
        self,
        *,
        timeout: Union[float, Timeout] = UNSET,
        max_retries: int = UNSET,
        total_timeout: Optional[float] = UNSET,
        max_response_bytes: int = UNSET,
        on_retry: Optional[Callable[[RetryEvent], None]] = UNSET,
        sleep: Optional[S] = UNSET,
    ) -> Self:
        """A client with other bounds that shares this one's pool and call counter;
        closing the copy leaves the pool open."""
        config = self._config.with_options(
            timeout=timeout, max_retries=max_retries, total_timeout=total_timeout,
            max_response_bytes=max_response_bytes, on_retry=on_retry, sleep=sleep,
        )
        return self._copy(config, raw=self._raw)

    def _begin(self, call: APICall[T], http: Any) -> tuple[Generator[Step, Outcome, tuple[T, Callable[[], Response]]], Optional[CallBudget]]:
        """A call's flow, traced, and the budget its requests draw from (none for a free call)."""
        flow = traced_flow(exchange_flow(self._config, call, self._calls, http), call, self._config)
        return flow, None if call.free else self._config.budget

    def _shape(self, parsed: T, keep: Callable[[], Response], into: Callable[[T], R]) -> R:
        """What a method returns: its result, or the raw answer around it."""
        if self._raw:
            return RawResponse(keep(), into(parsed))  # type: ignore[return-value]
        return into(parsed)

    @property
    def base_url(self) -> str:
        """The service address requests go to, ending in ``/v1``."""
        return self._config.base_url

    @property
    def timeout(self) -> Timeout:
        """The timeout of each attempt, for the whole request (connect, headers, body)."""
        return self._config.timeout

    @property
    def total_timeout(self) -> Optional[float]:
        """Seconds one call may take, retries and their waits included."""
        return self._config.total_timeout

    @property
    def max_response_bytes(self) -> int:
        """The largest decoded body read from one answer."""
        return self._config.max_response_bytes

    @property
    def max_retries(self) -> int:
        """How many times a transient failure is retried after the first attempt."""
        return self._config.max_retries

    @property
    def auth_scheme(self) -> AuthScheme:
        """``"bearer"`` (``Authorization: Bearer <key>``) or ``"bare"`` (the key alone)."""
        return self._config.auth_scheme

    @property
    def calls(self) -> int:
        """Requests sent so far (retries included): what this client has spent."""
        return self._calls.value

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self._config.base_url!r}, api_key=<redacted>, "
            f"auth_scheme={self._config.auth_scheme!r}, max_retries={self._config.max_retries})"
        )



class SyncAPIClient(_ClientBase[Client, Callable[[float], None]]):
    """The sync shell: this process's pool, and the driver that sends a call's requests."""

    _http_kind = "Client"

    def _own_pools(self) -> PerProcess[Client]:
        pools = PerProcess(self._pool_factory())
        pools.get()  # this process's pool, made now; a forked child makes its own on first use
        return pools

    def _pool(self) -> Client:
        """The pool a call sends through: this process's own, or the caller's client if it
        may serve this process (``HTTPClientScopeError`` in a child forked after it sent)."""
        if isinstance(self._pools, GivenClient):
            return cast(Client, self._pools.in_process(type(self).__name__))
        return cast(Client, self._pools.get())

    def close(self) -> None:
        """Close this process's connection pool, unless it was passed in by the caller (a
        forked child never touches its parent's pool: it makes its own on its first call)."""
        if self._owns_http:
            pool = self._pools.peek()
            if pool is not None:
                pool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        self.close()

    def _send(self, send: Send, budget: Optional[CallBudget], http: Client) -> Outcome:
        """Draw from the budget, send, then read the body chunk by chunk while the reader
        allows; the pool's streams end each step by the attempt's deadline."""
        if budget is not None:
            try:
                # Inside the attempt's time: the draw's store call is bounded by what is left.
                budget.acquire(timeout=send.reader.seconds_left())  # a refusal raises here
                late = send.reader.seconds_left() == 0.0
            except BaseException as exc:
                self._calls.add(-1)  # counted by the flow as it asked, but never sent
                from ._stores.errors import (
                    CoordinationError,  # loaded with the budget's store already
                )

                if isinstance(exc, CoordinationError) and send.reader.seconds_left() == 0.0:
                    return send.reader.timed_out()  # the store outlasted the call's own time
                raise
            if late:  # the draw took the attempt's whole time: nothing is sent
                self._calls.add(-1)
                return send.reader.timed_out()
        try:
            with deadline(send.reader.deadline, time.monotonic):
                # auth=None: the SDK's Authorization goes out, whatever auth= the client has
                response = http.send(send.request, stream=True, auth=None, follow_redirects=False)
                if response.next_request is not None:  # a redirect: followed hop by hop, if at all
                    response = self._follow(response, http)
                try:
                    if send.reader.begin(response):
                        for chunk in response.iter_raw():
                            if not send.reader.feed(chunk):
                                break
                finally:
                    response.close()
            return response
        except (self._config.stack.HTTPError, self._config.stack.module.InvalidURL, SportsPostsError) as exc:
            return exc

    def _follow(self, response: Response, http: Client) -> Response:
        """The redirects the caller's client follows, one hop at a time (``redirect_hop``)."""
        history: list[Response] = []
        while True:
            try:
                hop = redirect_hop(response, history, http, self._config)
            except BaseException:
                response.close()
                raise
            if hop is None:
                break
            response.close()
            response = http.send(hop, stream=True, auth=None, follow_redirects=False)
        if history:
            response.history = history
        return response

    def _exchange(self, call: APICall[T]) -> tuple[T, Callable[[], Response]]:
        """Make a call: send what its flow asks for, wait its waits with the client's ``sleep``,
        return its answer."""
        http = self._pool()
        flow, budget = self._begin(call, http)
        sleep = self._config.sleep or time.sleep
        step = advance(flow, None)
        try:
            while not isinstance(step, Done):  # a wait is answered with nothing, a request with its outcome
                if isinstance(step, float):
                    sleep(step)
                    step = advance(flow, None)
                else:
                    step = advance(flow, self._send(step, budget, http))
        except BaseException as exc:  # an interrupt or a refusal: its span ends before it is raised
            interrupted(flow, exc)
            raise
        return step.value

    def _request(self, call: APICall[T]) -> T:
        """The parsed answer of a call (what pages and pollers fetch with)."""
        return self._exchange(call)[0]

    def _result(self, call: APICall[T], into: Callable[[T], R]) -> R:
        """What a method returns: ``into`` of the parsed answer, raw in the raw view."""
        return self._shape(*self._exchange(call), into)


class AsyncAPIClient(_ClientBase[AsyncClient, Callable[[float], Awaitable[None]]]):
    """The async shell: a pool per event loop, and the driver that sends a call's requests."""

    _http_kind = "AsyncClient"

    def _own_pools(self) -> PerLoop[LoopPool]:
        make = self._pool_factory()
        return PerLoop(lambda: LoopPool(make()))  # made on each loop's first call

    async def _pool(self) -> AsyncClient:
        """The pool a call on this loop sends through: the SDK's own for this loop (its
        closer started, so the loop's end closes it), or the caller's client if it may serve
        this process and loop (``HTTPClientScopeError`` otherwise)."""
        if isinstance(self._pools, GivenClient):
            return cast(AsyncClient, self._pools.on_loop(type(self).__name__))
        return await cast(LoopPool, self._pools.get()).started()

    async def aclose(self) -> None:
        """Close the connection pool of the running event loop, unless it was passed in by
        the caller.

        The SDK keeps one pool per event loop. The pool of another loop is bound to that
        loop and cannot be closed from here: it closes when its loop ends (``asyncio.run``,
        asgiref's ``async_to_sync``, pytest-asyncio and ``trio.run`` finalize it), or by
        ``aclose()`` on that loop. A forked child never touches its parent's pools."""
        if not self._owns_http:
            return
        entry: Optional[LoopPool] = self._pools.peek()
        if entry is not None:
            await entry.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        await self.aclose()

    async def _send(self, send: Send, budget: Optional[CallBudget], http: AsyncClient) -> Outcome:
        """Draw from the budget, then send and read the body, all under one timeout scope:
        the attempt's whole deadline (a draw on a frozen store included)."""
        import asyncio  # only async callers pay for importing these

        import anyio

        seconds = send.reader.seconds_left()
        drawn = budget is None
        try:
            if _NATIVE_TIMEOUT and _on_asyncio():
                # asyncio's own timeout: the same bound for a quarter of anyio's cost
                async with asyncio.timeout(seconds):  # type: ignore[attr-defined,unused-ignore]
                    if budget is not None:
                        await budget.acquire_async()  # a refusal raises here, before anything is sent
                        drawn = True
                    return await self._read(send, http)
            with anyio.fail_after(seconds):
                if budget is not None:
                    await budget.acquire_async()
                    drawn = True
                return await self._read(send, http)
        except TimeoutError:
            if not drawn:
                self._calls.add(-1)  # counted by the flow as it asked, but never sent
            return send.reader.timed_out()
        except SportsPostsError as exc:
            if not drawn:  # a refusal or a store failure of the draw: raised, nothing sent
                self._calls.add(-1)
                raise
            return exc
        except (self._config.stack.HTTPError, self._config.stack.module.InvalidURL) as exc:
            return exc
        except RuntimeError as exc:
            scoped = self._pools.ended_loop(exc, type(self).__name__) if isinstance(self._pools, GivenClient) else None
            if scoped is not None and drawn:
                raise scoped from exc
            if not drawn:
                self._calls.add(-1)
            raise
        except BaseException:
            if not drawn:
                self._calls.add(-1)
            raise

    async def _read(self, send: Send, http: AsyncClient) -> Response:
        """Send, then read the body through the reader; the close is shielded so that a
        cancelled read still gives the connection back."""
        import anyio

        # auth=None: the SDK's Authorization goes out, whatever auth= the client has
        response = await http.send(send.request, stream=True, auth=None, follow_redirects=False)
        if response.next_request is not None:  # a redirect: followed hop by hop, if at all
            response = await self._follow(response, http)
        try:
            if send.reader.begin(response):
                async for chunk in response.aiter_raw():
                    if not send.reader.feed(chunk):
                        break
        finally:
            if not response.is_closed:  # a body read to its end is closed by aiter_raw already
                with anyio.CancelScope(shield=True):
                    await response.aclose()
        return response

    async def _follow(self, response: Response, http: AsyncClient) -> Response:
        """The redirects the caller's client follows, one hop at a time (``redirect_hop``)."""
        import anyio

        history: list[Response] = []
        while True:
            try:
                hop = redirect_hop(response, history, http, self._config)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
                raise
            if hop is None:
                break
            with anyio.CancelScope(shield=True):
                await response.aclose()
            response = await http.send(hop, stream=True, auth=None, follow_redirects=False)
        if history:
            response.history = history
        return response

    async def _exchange(self, call: APICall[T]) -> tuple[T, Callable[[], Response]]:
        """Make a call: send what its flow asks for, wait its waits with the client's ``sleep``,
        return its answer."""
        http = await self._pool()
        flow, budget = self._begin(call, http)
        sleep = cast("Callable[[float], Awaitable[object]]", self._config.sleep or _sleep_on_the_running_loop)
        step = advance(flow, None)
        try:
            while not isinstance(step, Done):
                if isinstance(step, float):
                    await sleep(step)
                    outcome: Outcome = None
                else:
                    outcome = await self._send(step, budget, http)
                step = advance(flow, outcome)
        except BaseException as exc:  # a cancellation or a refusal: its span ends before it is raised
            interrupted(flow, exc)
            raise
        return step.value

    async def _request(self, call: APICall[T]) -> T:
        """The parsed answer of a call (what pages and pollers fetch with)."""
        return (await self._exchange(call))[0]

    async def _result(self, call: APICall[T], into: Callable[[T], R]) -> R:
        """What a method returns: ``into`` of the parsed answer, raw in the raw view."""
        return self._shape(*(await self._exchange(call)), into)
