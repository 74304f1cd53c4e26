"""pytest fixtures for customers' own tests: a sandbox, clients bound to it, and webhooks.

Registered through the ``pytest11`` entry point, so installing ``sports-posts[sandbox]`` is
all it takes. Importing this module needs only pytest: the sandbox and its web stack are
imported when a fixture is first used, so the plugin costs nothing to test sessions that
do not use it and a missing extra fails only the tests that need it. Every fixture name
starts with ``sports_posts_``. See docs/testing.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Optional, Union

import pytest
from typing_extensions import Unpack

from ._stories import SentStory, StorySender, WebhookRequestFactory
from ._waits import RetryWaits

if TYPE_CHECKING:
    from sports_posts import AsyncSportsPosts, SportsPosts
    from sports_posts.sandbox import BreakingNewsOptions, DeliveryAttempt, Sandbox
    from sports_posts.webhooks import PayloadFields, SignedRequest, WebhookHeaders, WebhookPayload

    from ._serve import ASGIApp, WSGIApp

__all__ = ["RetryWaits", "SentStory", "StorySender", "WebhookRequestFactory"]

MARKER = "sports_posts_sandbox"
DEFAULT_SECRET = "whsec_sports_posts_pytest_plugin"
# A smaller seeded history than Sandbox's default: a fixture per test must start fast.
DEFAULT_OPTIONS: Mapping[str, Any] = {"clock": "manual", "posts": 600}


def _now() -> datetime:
    """Where the manual clock starts: the local time, so that a receiver's replay window and a
    poller on the local clock agree with the sandbox's timestamps."""
    return datetime.now(timezone.utc).replace(microsecond=0)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(**options): options of the sports_posts_sandbox fixture's Sandbox "
        "(seed=, plan=, leagues=, posts_per_minute=, chaos=, clock=, profile='lenient', ...)",
    )


@pytest.fixture
def sports_posts_sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """An in-process sandbox of the whole service on a free loopback port, for one test.

    Its clock is manual: time moves only with ``sb.advance(seconds)`` (new posts appear,
    late ones get indexed, webhook retries fall due). Options come from the
    ``@pytest.mark.sports_posts_sandbox(seed=3, plan="free", ...)`` marker.
    """
    from sports_posts import SportsPostsError
    from sports_posts.sandbox import Sandbox

    options = {**DEFAULT_OPTIONS, "start": _now()}
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None:
        if marker.args:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keyword options only, got {marker.args!r}")
        options.update(marker.kwargs)
    sandbox = Sandbox(**options)
    problem: Optional[str] = None
    try:
        sandbox.start()
    except SportsPostsError as exc:  # the sandbox extra is missing: say what to install
        problem = str(exc)
    if problem is not None:
        pytest.fail(f"sports_posts_sandbox: {problem}", pytrace=False)
    try:
        yield sandbox
    finally:
        sandbox.stop()


@pytest.fixture
def sports_posts_env(sports_posts_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """``SPORTS_POSTS_API_KEY`` and ``SPORTS_POSTS_BASE_URL`` name the sandbox for the test, so
    code that builds its own client from the environment talks to it."""
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", sports_posts_sandbox.api_key)
    monkeypatch.setenv("SPORTS_POSTS_BASE_URL", sports_posts_sandbox.base_url)
    return sports_posts_sandbox


@pytest.fixture
def sports_posts_retry_waits(request: pytest.FixtureRequest) -> RetryWaits:
    """Each wait between retries of the fixtures' clients, recorded instead of slept: pass
    ``sleep=sports_posts_retry_waits.sleep`` (``.async_sleep`` for an async client) to a
    client of your own. In a test that uses ``sports_posts_sandbox`` with its manual clock,
    each wait also moves that clock on by the wait, as a real wait would."""
    if "sports_posts_sandbox" not in request.fixturenames:
        return RetryWaits()
    sandbox: Sandbox = request.getfixturevalue("sports_posts_sandbox")
    return RetryWaits(on_wait=sandbox.advance if sandbox.clock.is_manual else None)


@pytest.fixture
def sports_posts_client(sports_posts_sandbox: Sandbox, sports_posts_retry_waits: RetryWaits) -> Iterator[SportsPosts]:
    """A `SportsPosts` bound to the test's sandbox; its retries wait on
    ``sports_posts_retry_waits`` (no real sleep)."""
    from sports_posts import SportsPosts

    with SportsPosts(
        api_key=sports_posts_sandbox.api_key, base_url=sports_posts_sandbox.base_url,
        sleep=sports_posts_retry_waits.sleep,
    ) as client:
        yield client


@pytest.fixture
def sports_posts_async_client(sports_posts_sandbox: Sandbox, sports_posts_retry_waits: RetryWaits) -> AsyncSportsPosts:
    """An `AsyncSportsPosts` bound to the test's sandbox, usable from any event loop; its
    retries wait on ``sports_posts_retry_waits`` (no real sleep).

    The client keeps a connection pool per event loop, closed when that loop ends, so a test
    may use it under pytest-asyncio, anyio (asyncio or trio) or ``asyncio.run`` (even
    several times) and no connection outlives the loop it was made on.
    """
    from sports_posts import AsyncSportsPosts

    return AsyncSportsPosts(
        api_key=sports_posts_sandbox.api_key, base_url=sports_posts_sandbox.base_url,
        sleep=sports_posts_retry_waits.async_sleep,
    )


@pytest.fixture
def sports_posts_webhook_secret() -> str:
    """The signing secret the webhook fixtures use; override it to match your receiver's."""
    return DEFAULT_SECRET


@pytest.fixture
def sports_posts_webhook_header_names() -> WebhookHeaders:
    """The header names the webhook fixtures send (spec 6.2's); override it to match a receiver
    built with ``header_names=`` (behind a proxy that renames them, say)."""
    from sports_posts.webhooks import WebhookHeaders

    return WebhookHeaders()


@pytest.fixture
def sports_posts_webhook_request(
    sports_posts_webhook_secret: str, sports_posts_webhook_header_names: WebhookHeaders
) -> WebhookRequestFactory:
    """``make(event="breaking_news", *, payload=None, secret=None, header_names=None, **data)``: a
    request as the service signs it (``.body`` bytes, ``.headers``) for your receiver, signed with
    `sports_posts.webhooks.sign_payload`; ``data`` overrides fields of the sample payload."""
    from sports_posts.webhooks import build_test_request, sample_payload

    def make(
        event: str = "breaking_news",
        *,
        payload: Union[WebhookPayload, Mapping[str, object], bytes, str, None] = None,
        secret: Optional[str] = None,
        header_names: Optional[WebhookHeaders] = None,
        **data: Unpack[PayloadFields],
    ) -> SignedRequest:
        body = payload if payload is not None else sample_payload(event, **data)
        return build_test_request(
            body,
            secret if secret is not None else sports_posts_webhook_secret,
            header_names=header_names if header_names is not None else sports_posts_webhook_header_names,
        )

    return make


@pytest.fixture
def sports_posts_send_story(
    sports_posts_sandbox: Sandbox,
    sports_posts_webhook_secret: str,
    sports_posts_webhook_header_names: WebhookHeaders,
) -> StorySender:
    """``send(target, *, path="/webhooks", league="NFL", update=None, secret=None,
    header_names=None, timeout=30, **news)``:
    a breaking-news story (and, with ``update="what's new"``, its update) sent by the sandbox's
    webhook sender to ``target``, your receiver's URL or app, ASGI (FastAPI, Starlette) or WSGI
    (Flask, Django) alike (served on loopback for the call, POSTed at ``path``: the route of the docs' receivers), retried as the service
    retries; returns a `SentStory` once every delivery ended. A 404 answer raises
    `ParameterError` naming the URL (no route there: pass the receiver's ``path``).
    ``news`` goes to ``Sandbox.send_breaking_news`` (news_type,
    news_status, ...). The headers are named by ``header_names``, else by the
    ``sports_posts_webhook_header_names`` fixture."""
    from sports_posts import ParameterError
    from sports_posts.testing._serve import serve_app

    sandbox = sports_posts_sandbox

    def deliver(url: str, league: str, update: Optional[str], secret: str, timeout: float,
                names: WebhookHeaders, news: BreakingNewsOptions) -> SentStory:
        subscription = sandbox.subscribe(url, secret, header_names=names)
        try:
            payloads: list[WebhookPayload] = [sandbox.send_breaking_news(league, **news)]
            sandbox.drain_deliveries(timeout=timeout)
            _refuse_not_found(sandbox.deliveries, subscription.id, url)
            if update is not None:
                payloads.append(sandbox.send_update(payloads[0]["data"]["event_id"], whats_new=update))
                sandbox.drain_deliveries(timeout=timeout)
        finally:
            sandbox.unsubscribe(subscription.id)
        event_ids = {p["data"]["event_id"] for p in payloads}
        attempts = [a for a in sandbox.deliveries
                    if a.subscription_id == subscription.id and a.event_id in event_ids]
        return SentStory(payloads, attempts)

    def send(target: Union[str, ASGIApp, WSGIApp], *, path: str = "/webhooks", league: str = "NFL", update: Optional[str] = None,
             secret: Optional[str] = None, header_names: Optional[WebhookHeaders] = None,
             timeout: float = 30.0, **news: Unpack[BreakingNewsOptions]) -> SentStory:
        if not isinstance(path, str):
            raise ParameterError(f"path must be a str such as \"/webhooks\", got {type(path).__name__}",
                                 parameter="path")
        key = secret if secret is not None else sports_posts_webhook_secret
        names = header_names if header_names is not None else sports_posts_webhook_header_names
        if isinstance(target, str):
            return deliver(target, league, update, key, timeout, names, news)
        with serve_app(target) as root:  # ASGI or WSGI, each served as its kind
            return deliver(root + "/" + path.lstrip("/"), league, update, key, timeout, names, news)

    return send


def _refuse_not_found(deliveries: list[DeliveryAttempt], subscription_id: str, url: str) -> None:
    """A 404 means no route at ``url`` (a wrong ``path``): say so, instead of six retries and
    "dead" that read as the receiver refusing the story."""
    from sports_posts import ParameterError

    if any(a.subscription_id == subscription_id and a.status_code == 404 for a in deliveries):
        raise ParameterError(
            f"the receiver answered 404 Not Found at {url}: nothing is routed there; pass the path "
            'your app receives webhooks at (send(app, path="/hooks")) or the full URL',
            parameter="path",
        )
