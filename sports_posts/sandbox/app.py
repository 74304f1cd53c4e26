"""The sandbox's HTTP layer: starlette routes, auth, plans, quotas and chaos, kept thin.

The service lives under ``/v1``; sandbox-only admin routes live under ``/_sandbox`` (no
API key: the server binds to 127.0.0.1 only).
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import threading
from collections.abc import Awaitable
from datetime import datetime
from typing import Any, Callable, Optional

import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .accounts import Account, billing_period
from .admin import admin_routes
from .config import ChaosSettings
from .errors import ApiError, error_body
from .ids import ids_response
from .query import parse_posts_query, run_posts_query, single_values
from .service import SandboxService
from .world import isoformat

__all__ = ["DEPRECATED_ROUTES", "ChaosMiddleware", "create_app"]

DEPRECATED_ROUTES = ("leagues", "teams", "players", "nearby", "games", "trending")
"""The per-mode routes ``/posts/<mode>`` that answer 410 (spec 4.1, 9)."""

_PROXY_PAGE = (
    "<html>\r\n<head><title>{status} {reason}</title></head>\r\n<body>\r\n"
    "<center><h1>{status} {reason}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)
_PORTAL_PAGE = (
    "<!DOCTYPE html><html><head><title>Just a moment...</title></head>"
    "<body><h1>Checking your connection</h1><p>This page is served by a network appliance, "
    "not by the API.</p></body></html>"
)


def _json(status: int, body: Any, headers: Optional[dict[str, str]] = None) -> Response:
    # orjson (the sandbox extra): the standard library's encoder cost more than the rest of a request.
    return _bytes(status, orjson.dumps(body), headers)


def _bytes(status: int, body: bytes, headers: Optional[dict[str, str]] = None) -> Response:
    return Response(body, status_code=status, headers=headers, media_type="application/json")


def _error(exc: ApiError) -> Response:
    return _json(exc.status, exc.body(), exc.headers)


class _Chaos:
    """Draws one chaos outcome per request from a seeded RNG (deterministic for a request order)."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(f"{seed}:chaos")
        self._lock = threading.Lock()

    def draw(self, settings: ChaosSettings) -> tuple[Optional[str], bool]:
        with self._lock:
            roll, slow_roll = self._rng.random(), self._rng.random()
        slow = slow_roll < settings.slow_rate
        edge = 0.0
        for outcome, rate in settings.failure_rates:
            edge += rate
            if roll < edge:
                return outcome, slow
        return None, slow


async def _send_raw(send: Send, status: int, body: bytes, content_type: str,
                    headers: Optional[dict[str, str]] = None) -> None:
    raw_headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    raw_headers += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


_stamp: tuple[int, bytes] = (-1, b"")
"""The second last stamped and its ``Date`` value, swapped as one tuple (thread-safe)."""


def _date_value(now: datetime) -> bytes:
    """The ``Date`` value of ``now`` (RFC 9110 6.6.1), formatted once per second."""
    global _stamp
    second = int(now.timestamp())
    cached = _stamp
    if cached[0] == second:
        return cached[1]
    value = email.utils.formatdate(second, usegmt=True).encode()
    _stamp = (second, value)
    return value


def _dated(send: Send, now: Callable[[], datetime]) -> Send:
    """``send`` that stamps the answer's head with a ``Date`` header read from the sandbox
    clock: the time the emulated service lives in, manual or advanced, which is what a
    client comparing clocks (the poller's skew estimate) must see."""

    async def dated(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), (b"date", _date_value(now()))]}
        await send(message)

    return dated


def _drop(send: Send) -> bool:
    """Close the client's connection without an answer (uvicorn's h11 cycle exposes its transport)."""
    cycle = getattr(send, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is None:
        return False
    transport.close()
    # Marking the cycle disconnected stops uvicorn from writing its own 500 after we return.
    cycle.disconnected = True  # type: ignore[union-attr]
    return True


class ChaosMiddleware:
    """Raw ASGI middleware that injects the failures of ``ChaosSettings`` on /v1 routes, and
    dates every answer by the sandbox clock."""

    def __init__(self, app: ASGIApp, sandbox: SandboxService) -> None:
        self.app = app
        self.sandbox = sandbox
        self.chaos: _Chaos = _Chaos(sandbox.seed)

    def _settings(self, scope: Scope) -> Optional[ChaosSettings]:
        if not self.sandbox.accounts.any_chaos:  # no key of its own: spare the lookup
            return self.sandbox.chaos
        authorization = None
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                authorization = value.decode("latin-1")
        if authorization is not None:
            try:
                account = self.sandbox.accounts.authenticate(authorization)
            except ApiError:
                account = None
            if account is not None and account.config.chaos is not None:
                return account.config.chaos
        return self.sandbox.chaos

    async def __call__(self, scope: Scope, receive: Receive, raw_send: Send) -> None:
        send = _dated(raw_send, self.sandbox.now) if scope["type"] == "http" else raw_send
        if scope["type"] != "http" or not scope["path"].startswith("/v1/") or scope["path"].endswith("openapi.json"):
            await self.app(scope, receive, send)
            return
        settings = self._settings(scope)
        if settings is None or not settings.enabled:
            await self.app(scope, receive, send)
            return
        outcome, slow = self.chaos.draw(settings)
        if slow:
            try:
                await asyncio.sleep(settings.slow_seconds)
            except asyncio.CancelledError:
                # The sandbox is stopping: end quietly instead of a logged "Exception in ASGI application".
                _drop(send)
                return
        retry_after = {"Retry-After": str(settings.retry_after)}
        if outcome is None:
            await self.app(scope, receive, send)
        elif outcome == "drop":
            if not _drop(raw_send):  # uvicorn's own send: it exposes the connection
                raise ConnectionAbortedError("chaos: dropped connection")
        elif outcome == "429":
            body = orjson.dumps(error_body("RATE_LIMITED", "Too many requests (sandbox chaos)"))
            await _send_raw(send, 429, body, "application/json", retry_after)
        elif outcome == "500":
            body = orjson.dumps(error_body("INTERNAL_ERROR", "Internal error (sandbox chaos)"))
            await _send_raw(send, 500, body, "application/json")
        elif outcome == "503":
            body = orjson.dumps(error_body("SERVICE_UNAVAILABLE", "Service unavailable (sandbox chaos)"))
            await _send_raw(send, 503, body, "application/json", retry_after)
        elif outcome in ("502", "504"):
            reason = "Bad Gateway" if outcome == "502" else "Gateway Time-out"
            page = _PROXY_PAGE.format(status=outcome, reason=reason).encode()
            await _send_raw(send, int(outcome), page, "text/html")
        elif outcome == "html":
            await _send_raw(send, 200, _PORTAL_PAGE.encode(), "text/html; charset=utf-8")
        elif outcome == "malformed":
            body = b'{"ok": true, "data": {"posts": "unavailable"}, "items": null}'
            await _send_raw(send, 200, body, "application/json")
        else:  # truncated: the real answer, cut in half, with a consistent Content-Length
            captured: list[Message] = []

            async def capture(message: Message) -> None:
                captured.append(message)

            await self.app(scope, receive, capture)
            start = next(m for m in captured if m["type"] == "http.response.start")
            body = b"".join(m.get("body", b"") for m in captured if m["type"] == "http.response.body")
            await _send_raw(send, int(start["status"]), body[: max(1, len(body) // 2)], "application/json")


def create_app(sandbox: SandboxService) -> ASGIApp:
    """The ASGI application of one sandbox."""
    accounts = sandbox.accounts
    world = sandbox.world

    def guarded(plan_endpoint: Optional[str] = None, counted: bool = True, inactive_ok: bool = False) -> Callable[
        [Callable[[Request, Account], Awaitable[Response]]], Callable[[Request], Awaitable[Response]]
    ]:
        def decorate(
            handler: Callable[[Request, Account], Awaitable[Response]]
        ) -> Callable[[Request], Awaitable[Response]]:
            async def endpoint(request: Request) -> Response:
                try:
                    account = accounts.authenticate(request.headers.get("authorization"))
                    if not (inactive_ok and not account.config.active):
                        accounts.admit(account, sandbox.now(), counted=counted)
                    on_plan = account.config.endpoints
                    if plan_endpoint is not None and on_plan is not None and plan_endpoint not in on_plan:
                        raise ApiError(403, "FORBIDDEN", f"Endpoint /{plan_endpoint} is not included in your plan")
                    return await handler(request, account)
                except ApiError as exc:
                    return _error(exc)
                except Exception:  # a bug in the sandbox still answers in the spec's shape
                    return _json(500, error_body("INTERNAL_ERROR", "Internal error in the sandbox"))

            return endpoint

        return decorate

    def allowed(account: Account) -> Optional[frozenset[str]]:
        return account.config.leagues

    @guarded("posts")
    async def posts(request: Request, account: Account) -> Response:
        profile = sandbox.profile
        query = parse_posts_query(single_values(request.query_params.multi_items()), world.leagues,
                                  strict=profile.refuse_combined_modes)
        now = sandbox.now()
        result = run_posts_query(world, query, now, allowed(account), games_exact=profile.games_exact)
        # Each post is encoded once per author shape and kept: a page is a join of cached bytes.
        shape = sandbox.author_shape
        items = b",".join([p.encoded(shape, orjson.dumps) for p in result.items])
        return _bytes(200, b"".join((b'{"pagination":', orjson.dumps(result.pagination()), b',"items":[', items, b"]}")))

    @guarded(counted=False)
    async def deprecated(request: Request, account: Account) -> Response:
        mode = request.path_params["mode"]
        if mode not in DEPRECATED_ROUTES:
            raise ApiError(404, "NOT_FOUND", f"No route GET /posts/{mode}")
        raise ApiError(410, "GONE", f"GET /posts/{mode} is deprecated; use GET /posts (the mode is inferred from the parameters)")

    @guarded(counted=False, inactive_ok=True)
    async def information(request: Request, account: Account) -> Response:
        start, end = billing_period(sandbox.now())
        config = account.config
        return _json(200, {
            "company": {"name": config.company, "plan": config.plan,
                        "subscription_status": "active" if config.active else "inactive"},
            "billing_cycle": {"current_period_start": start.isoformat(), "current_period_end": end.isoformat()},
            "usage": {"current_calls": account.calls if account.period_start == start else 0},
        })

    @guarded("account/x-ids")
    async def x_ids(request: Request, account: Account) -> Response:
        now = sandbox.now()
        return _json(200, {"ids_to_delete": [p.id for p in world.deleted_posts(now)], "as_of": isoformat(now)})

    @guarded("ids")
    async def ids(request: Request, account: Account) -> Response:
        return _json(200, ids_response(world, single_values(request.query_params.multi_items(), ()), sandbox.now(), allowed(account)))

    document = orjson.dumps(sandbox.openapi())

    async def openapi(request: Request) -> Response:
        return _bytes(200, document)

    routes = [
        Route("/v1/posts", posts, methods=["GET"]),
        Route("/v1/posts/{mode}", deprecated, methods=["GET"]),
        Route("/v1/account/information", information, methods=["GET"]),
        Route("/v1/account/x-ids", x_ids, methods=["GET"]),
        Route("/v1/ids", ids, methods=["GET"]),
        Route("/v1/openapi.json", openapi, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        *admin_routes(sandbox, _json),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 404:
            return _json(404, error_body("NOT_FOUND", f"No route {request.method} {request.url.path}"))
        if status == 405:  # RFC 9110: a 405 lists the methods the path offers
            allow = getattr(exc, "headers", None) or {}
            return _json(405, error_body("METHOD_NOT_ALLOWED", f"{request.method} is not allowed on {request.url.path}"),
                         {"Allow": allow.get("Allow", "GET")})
        return _json(status, error_body("INTERNAL_ERROR" if status >= 500 else "INVALID_PARAMETER", "Request failed"))

    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    return ChaosMiddleware(app, sandbox)

