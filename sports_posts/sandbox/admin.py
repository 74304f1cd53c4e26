"""The sandbox-only admin routes under ``/_sandbox`` and the bodies they accept.

Every body is validated like a public request before anything changes: a field of the
wrong type, an unknown field or value is 400 INVALID_PARAMETER naming the field, never a
key that fails later with a 500. No API key: the server binds to 127.0.0.1 only.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Annotated, Any, Callable, Union

from pydantic import Field, TypeAdapter, ValidationError
from pydantic.config import ConfigDict, with_config
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from typing_extensions import Literal, Required, TypedDict

from .._vocabulary import WebhookHeaders
from .config import ChaosSettings, KeyOptions
from .errors import ApiError
from .query import parse_datetime
from .sender import SubscriptionFilters
from .service import SandboxService
from .world import isoformat

__all__ = ["admin_routes"]

_STRICT = ConfigDict(extra="forbid", strict=True)
_Count = Annotated[int, Field(ge=0)]
_Seconds = Annotated[float, Field(ge=0, le=10 * 365 * 86400, allow_inf_nan=False)]
"""Up to ten years: far enough for any test, near enough that no date leaves the calendar."""


@with_config(_STRICT)
class _HeaderNames(TypedDict, total=False):
    event: str
    delivery: str
    signature: str


@with_config(_STRICT)
class _Subscription(SubscriptionFilters, total=False):
    url: Required[str]
    secret: Required[str]
    header_prefix: str
    """``X-Acme-`` sends ``X-Acme-Event``, ``X-Acme-Delivery``, ``X-Acme-Signature``."""
    header_names: _HeaderNames
    """Explicit names; one left out keeps spec 6.2's."""


def _header_names(data: dict[str, Any]) -> Union[WebhookHeaders, None]:
    """The subscription body's ``header_prefix`` or ``header_names`` (taken out of ``data``)."""
    prefix, names = data.pop("header_prefix", None), data.pop("header_names", None)
    if prefix is not None and names is not None:
        raise ApiError(400, "INVALID_PARAMETER", "Invalid body: give header_prefix or header_names, not both")
    if prefix is not None:
        return WebhookHeaders.with_prefix(prefix)
    return WebhookHeaders(**names) if names is not None else None


@with_config(_STRICT)
class _Event(TypedDict, total=False):
    event: Literal["breaking_news", "breaking_news.update"]
    league: str
    news_type: str
    news_status: str
    news_origin: str
    news_attribution: str
    text: str
    alt_sources: Union[Annotated[int, Field(ge=0, le=20)], list[dict[str, Any]]]
    event_id: str
    whats_new: str


@with_config(_STRICT)
class _Advance(TypedDict, total=False):
    seconds: _Seconds


@with_config(_STRICT)
class _Post(TypedDict, total=False):
    league: str
    text: str
    index_delay: _Seconds
    created_at: str
    teams: list[str]
    score: Annotated[float, Field(ge=0, le=9)]
    highlight: bool
    like_count: _Count
    retweet_count: _Count
    reply_count: _Count
    quote_count: _Count


@with_config(_STRICT)
class _Key(KeyOptions, total=False):
    plan: Literal["free", "paid"]


_BODIES: dict[type, TypeAdapter[Any]] = {
    body: TypeAdapter(body) for body in (_Subscription, _Event, _Advance, _Post, _Key)
}
_CHAOS = TypeAdapter(ChaosSettings)


def _invalid(error: ValidationError) -> ApiError:
    """400 naming each field that failed and why (no input values: a secret may be among them)."""
    parts = []
    for e in error.errors(include_url=False, include_input=False)[:5]:
        where = ".".join(str(p) for p in e["loc"]) or "body"
        parts.append(f"'{where}': {e['msg']}")
    return ApiError(400, "INVALID_PARAMETER", "Invalid body: " + "; ".join(parts))


async def _body(request: Request, body: type) -> dict[str, Any]:
    """The JSON object of the request validated as ``body`` (an empty body is ``{}``)."""
    raw = await request.body()
    try:
        data: dict[str, Any] = _BODIES[body].validate_json(raw or b"{}")
    except ValidationError as exc:
        raise _invalid(exc) from None
    return data


def admin_routes(sandbox: SandboxService, answer: Callable[[int, Any], Response]) -> list[Route]:
    """The ``/_sandbox`` routes acting on ``sandbox``; ``answer(status, body)`` makes a JSON response."""
    world = sandbox.world

    def admin(handler: Callable[[Request], Awaitable[tuple[int, Any]]]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                status, result = await handler(request)
            except ApiError as exc:
                return answer(exc.status, exc.body())
            except (ValueError, TypeError, KeyError, OverflowError) as exc:  # refused by the service itself
                return answer(400, {"ok": False, "error_code": "INVALID_PARAMETER",
                                    "error_message": str(exc).strip("'\"")})
            return answer(status, result)

        return endpoint

    async def state(request: Request) -> tuple[int, Any]:
        return 200, sandbox.state()

    async def subscriptions(request: Request) -> tuple[int, Any]:
        if request.method == "GET":
            return 200, {"items": [s.to_public() for s in sandbox.sender.subscriptions.values()]}
        data = await _body(request, _Subscription)
        url, secret = data.pop("url"), data.pop("secret")
        header_names = _header_names(data)
        return 201, sandbox.subscribe(url, secret, header_names=header_names, **data).to_public()

    async def subscription(request: Request) -> tuple[int, Any]:
        sandbox.unsubscribe(request.path_params["sub_id"])
        return 200, {"ok": True}

    async def events(request: Request) -> tuple[int, Any]:
        data = await _body(request, _Event)
        if data.pop("event", "breaking_news") == "breaking_news":
            return 202, sandbox.send_breaking_news(**data)
        if "event_id" not in data:
            raise ApiError(400, "INVALID_PARAMETER", "Invalid body: 'event_id': required for breaking_news.update")
        return 202, sandbox.send_update(**data)

    async def deliveries(request: Request) -> tuple[int, Any]:
        return 200, {"items": [a.to_public() for a in sandbox.deliveries]}

    async def advance(request: Request) -> tuple[int, Any]:
        data = await _body(request, _Advance)
        return 200, {"now": isoformat(sandbox.advance(data.get("seconds", 0.0)))}

    async def posts(request: Request) -> tuple[int, Any]:
        data = await _body(request, _Post)
        if "created_at" in data:
            data["created_at"] = parse_datetime("created_at", data["created_at"])
        post = sandbox.publish_post(**data)
        return 201, post.to_wire(sandbox.author_shape)

    async def post(request: Request) -> tuple[int, Any]:
        post_id = request.path_params["post_id"]
        if world.get_post(post_id) is None:
            raise ApiError(404, "NOT_FOUND", f"No post {post_id}")
        return 200, {"ok": True, "id": sandbox.delete_post(post_id).id}

    async def keys(request: Request) -> tuple[int, Any]:
        data = await _body(request, _Key)
        return 201, {"api_key": sandbox.add_key(**data)}

    async def chaos(request: Request) -> tuple[int, Any]:
        raw = await request.body()
        try:
            data = TypeAdapter(dict[str, Any]).validate_json(raw or b"{}")
            key = data.pop("key", None)
            if key is not None and not isinstance(key, str):
                raise ApiError(400, "INVALID_PARAMETER", "Invalid body: 'key': must be a string")
            # JSON mode: strict types, and a JSON object stands for the dataclass
            settings = _CHAOS.validate_json(json.dumps(data), strict=True) if data else None
        except ValidationError as exc:
            raise _invalid(exc) from None
        if key is not None and sandbox.accounts.get(key) is None:
            raise ApiError(404, "NOT_FOUND", "No such API key")
        sandbox.set_chaos(settings, key=key)
        return 200, {"ok": True}

    return [
        Route("/_sandbox/state", admin(state), methods=["GET"]),
        Route("/_sandbox/subscriptions", admin(subscriptions), methods=["GET", "POST"]),
        Route("/_sandbox/subscriptions/{sub_id}", admin(subscription), methods=["DELETE"]),
        Route("/_sandbox/events", admin(events), methods=["POST"]),
        Route("/_sandbox/deliveries", admin(deliveries), methods=["GET"]),
        Route("/_sandbox/advance", admin(advance), methods=["POST"]),
        Route("/_sandbox/posts", admin(posts), methods=["POST"]),
        Route("/_sandbox/posts/{post_id}", admin(post), methods=["DELETE"]),
        Route("/_sandbox/keys", admin(keys), methods=["POST"]),
        Route("/_sandbox/chaos", admin(chaos), methods=["PUT", "POST"]),
    ]
