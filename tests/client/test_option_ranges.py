"""Every option of every public constructor and adapter is checked where it is given: a
wrong type or an out-of-range number is a ParameterError naming the option, and every
value in range is taken. Before these checks, ``max_workers=0`` or ``"8"`` answered 503 to
every delivery, ``poll_interval=None`` killed the inbox worker, ``max_body=None`` made
every delivery a 500, ``timeout=1e10`` overflowed the deadline and ``base_url`` without
``/v1`` was sent as it was."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sports_posts as sp
from sports_posts import _utils
from sports_posts.webhooks import MemoryDedupeStore, SQLiteDedupeStore, SQLiteInbox, WebhookReceiver
from sports_posts.webhooks.adapters.asgi import WebhookASGIApp, starlette_endpoint
from sports_posts.webhooks.adapters.django import django_view
from sports_posts.webhooks.adapters.wsgi import WebhookWSGIApp, flask_view

from .conftest import API_KEY, BASE_URL

SECRET = "whsec_test_ranges_0123456789"
DAY = _utils.ONE_DAY
EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))

NOT_A_NUMBER = st.one_of(
    st.none(), st.booleans(), st.text(max_size=6), st.just("8"), st.just("1048576"),
    st.lists(st.integers(), max_size=2), st.just(b"1"),
)


def bad_count(maximum: int) -> st.SearchStrategy[Any]:
    """What a count option (an integer from 1 to ``maximum``) refuses."""
    return st.one_of(
        NOT_A_NUMBER,
        st.integers(max_value=0),
        st.integers(min_value=maximum + 1),
        st.floats(allow_nan=True, allow_infinity=True),  # 8.0 is not a count either
    )


def good_count(maximum: int) -> st.SearchStrategy[int]:
    return st.integers(min_value=1, max_value=maximum)


def bad_seconds(maximum: float = DAY, *, zero_ok: bool = False) -> st.SearchStrategy[Any]:
    """What a duration option (finite seconds, above 0, at most ``maximum``) refuses."""
    low = st.floats(max_value=0.0, exclude_max=zero_ok, allow_nan=False) if zero_ok else st.floats(max_value=0.0)
    return st.one_of(
        NOT_A_NUMBER,
        low,
        st.floats(min_value=maximum, exclude_min=True),
        st.sampled_from([math.nan, math.inf, -math.inf, 1e10, int(maximum) + 1]),
        st.integers(max_value=-1 if zero_ok else 0),
    )


def good_seconds(maximum: float = DAY) -> st.SearchStrategy[float]:
    return st.one_of(st.floats(min_value=0.001, max_value=maximum), st.integers(min_value=1, max_value=int(maximum)))


def refused(make: Callable[[Any], object], name: str, value: Any) -> None:
    with pytest.raises(sp.ParameterError) as info:
        make(value)
    assert info.value.parameter == name, f"{name}={value!r}: {info.value}"
    assert name in str(info.value)


# ---------------------------------------------------------------------------------------
# The clients and with_options

SYNC_POOL = httpx.Client()
ASYNC_POOL = httpx.AsyncClient()


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SPORTS_POSTS_API_KEY", "SPORTS_POSTS_BASE_URL", "SPORTS_POSTS_ALLOW_INSECURE_HTTP"):
        monkeypatch.delenv(name, raising=False)


CLIENTS = [(sp.SportsPosts, SYNC_POOL), (sp.AsyncSportsPosts, ASYNC_POOL)]
CLIENT_BAD: dict[str, st.SearchStrategy[Any]] = {
    "timeout": st.one_of(
        bad_seconds(),
        st.builds(lambda v: httpx.Timeout(5.0, read=v), st.sampled_from([1e10, math.inf, math.nan, -1.0, 0.0, DAY * 2])),
    ),
    "total_timeout": bad_seconds().filter(lambda v: v is not None),  # None: no overall bound, allowed
    "max_retries": st.one_of(NOT_A_NUMBER, st.integers(max_value=-1), st.integers(min_value=21), st.floats()),
    "max_response_bytes": bad_count(1 << 30),
}
CLIENT_GOOD: dict[str, st.SearchStrategy[Any]] = {
    "timeout": st.one_of(good_seconds(), st.builds(lambda v: httpx.Timeout(v, connect=1.0), good_seconds())),
    "total_timeout": st.one_of(st.none(), good_seconds()),
    "max_retries": st.integers(min_value=0, max_value=20),
    "max_response_bytes": good_count(1 << 30),
}


@pytest.mark.parametrize(("cls", "pool"), CLIENTS)
@pytest.mark.parametrize("name", sorted(CLIENT_BAD))
def test_a_client_refuses_an_option_out_of_range_where_it_is_given(cls: type, pool: Any, name: str) -> None:
    client = cls(api_key=API_KEY, base_url=BASE_URL, http_client=pool)

    @EXAMPLES
    @given(value=CLIENT_BAD[name])
    def check(value: Any) -> None:
        refused(lambda v: cls(api_key=API_KEY, base_url=BASE_URL, http_client=pool, **{name: v}), name, value)
        refused(lambda v: client.with_options(**{name: v}), name, value)

    check()


@pytest.mark.parametrize(("cls", "pool"), CLIENTS)
@pytest.mark.parametrize("name", sorted(CLIENT_GOOD))
def test_a_client_takes_every_option_in_range(cls: type, pool: Any, name: str) -> None:
    @EXAMPLES
    @given(value=CLIENT_GOOD[name])
    def check(value: Any) -> None:
        client = cls(api_key=API_KEY, base_url=BASE_URL, http_client=pool, **{name: value})
        client.with_options(**{name: value})

    check()


def test_a_per_call_timeout_of_more_than_a_day_is_refused_before_sending() -> None:
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=SYNC_POOL) as client:
        refused(lambda v: client.account.information(timeout=v), "timeout", 1e10)


@pytest.mark.parametrize(
    "url",
    ["https://api.example.test", "https://api.example.test/", "https://api.example.test/v2",
     "https://api.example.test/v1/posts", "https://api.example.test/v10", "https://api.example.test/xv1"],
)
def test_a_base_url_that_does_not_end_in_v1_is_refused_showing_the_expected_form(url: str) -> None:
    with pytest.raises(sp.ParameterError) as info:
        sp.SportsPosts(api_key=API_KEY, base_url=url, http_client=SYNC_POOL)
    assert info.value.parameter == "base_url"
    assert "/v1" in str(info.value) and "https://api.example.com/v1" in str(info.value)


@pytest.mark.parametrize(
    "url", ["https://api.example.test/v1", "https://api.example.test/v1/", "https://gw.example/sports/api/v1/",
            "http://127.0.0.1:8000/v1"],
)
def test_any_prefix_before_v1_and_a_trailing_slash_are_fine(url: str) -> None:
    client = sp.SportsPosts(api_key=API_KEY, base_url=url, http_client=SYNC_POOL)
    assert client.base_url == url.rstrip("/")


# ---------------------------------------------------------------------------------------
# The receiver, its adapters, the stores and inboxes


def _handler(event: object) -> None:
    return None


def receiver(**options: Any) -> WebhookReceiver:
    return WebhookReceiver(SECRET, _handler, **options)


RECEIVER = receiver()


def _starlette(max_body: Any) -> object:
    pytest.importorskip("starlette")
    return starlette_endpoint(RECEIVER, max_body=max_body)


def _django(max_body: Any) -> object:
    pytest.importorskip("django")
    return django_view(RECEIVER, max_body=max_body)


def _flask(max_body: Any) -> object:
    pytest.importorskip("flask")
    return flask_view(RECEIVER, max_body=max_body)


MAKERS: dict[str, tuple[Callable[[str, Any], object], st.SearchStrategy[Any], st.SearchStrategy[Any]]] = {
    # option -> (make with it, values refused, values taken)
    "WebhookReceiver.max_workers": (lambda n, v: receiver(**{n: v}), bad_count(1024), good_count(1024)),
    "WebhookReceiver.poll_interval": (lambda n, v: receiver(**{n: v}), bad_seconds(), good_seconds()),
    "WebhookReceiver.handler_timeout": (lambda n, v: receiver(**{n: v}), bad_seconds(10), st.floats(0.001, 9.99)),
    "WebhookReceiver.in_flight_wait": (
        lambda n, v: receiver(**{n: v}), bad_seconds(10, zero_ok=True), st.floats(0.0, 9.99)
    ),
    "WebhookReceiver.start_worker": (lambda n, v: receiver(**{n: v}), NOT_A_NUMBER.filter(lambda v: v not in (True, False)),
                                     st.booleans()),
    "WebhookASGIApp.max_body": (lambda n, v: WebhookASGIApp(RECEIVER, max_body=v), bad_count(1 << 26), good_count(1 << 26)),
    "WebhookWSGIApp.max_body": (lambda n, v: WebhookWSGIApp(RECEIVER, max_body=v), bad_count(1 << 26), good_count(1 << 26)),
    "starlette_endpoint.max_body": (lambda n, v: _starlette(v), bad_count(1 << 26), good_count(1 << 26)),
    "django_view.max_body": (lambda n, v: _django(v), bad_count(1 << 26), good_count(1 << 26)),
    "flask_view.max_body": (lambda n, v: _flask(v), bad_count(1 << 26), good_count(1 << 26)),
    "MemoryDedupeStore.ttl": (lambda n, v: MemoryDedupeStore(ttl=v), bad_seconds(366 * DAY), good_seconds(366 * DAY)),
    "MemoryDedupeStore.lease": (lambda n, v: MemoryDedupeStore(lease=v), bad_seconds(), good_seconds()),
}


@pytest.mark.parametrize("where", sorted(MAKERS))
def test_a_webhook_option_out_of_range_is_refused_naming_it(where: str) -> None:
    make, bad, _ = MAKERS[where]
    name = where.split(".")[1]

    @EXAMPLES
    @given(value=bad)
    def check(value: Any) -> None:
        refused(lambda v: make(name, v), name, value)

    check()


@pytest.mark.parametrize("where", sorted(MAKERS))
def test_a_webhook_option_in_range_is_taken(where: str) -> None:
    make, _, good = MAKERS[where]
    name = where.split(".")[1]

    @EXAMPLES
    @given(value=good)
    def check(value: Any) -> None:
        made = make(name, value)
        if isinstance(made, WebhookReceiver):
            made.close()

    check()


SQLITE_BAD: dict[str, st.SearchStrategy[Any]] = {
    "max_attempts": bad_count(1000),
    "lease": bad_seconds(),
    "retention": bad_seconds(366 * DAY),
    "busy_timeout": bad_seconds(),
    "backoff": st.one_of(
        st.none(), st.just(()), st.just("12"),
        st.lists(bad_seconds(zero_ok=True).filter(lambda v: not isinstance(v, (list, str, bytes))), min_size=1, max_size=3),
    ),
}


@pytest.mark.parametrize("name", sorted(SQLITE_BAD))
def test_an_sqlite_inbox_refuses_an_option_out_of_range(name: str, tmp_path: Path) -> None:
    @EXAMPLES
    @given(value=SQLITE_BAD[name])
    def check(value: Any) -> None:
        refused(lambda v: SQLiteInbox(tmp_path / "inbox.db", **{name: v}), name, value)

    check()


@pytest.mark.parametrize("name", ["ttl", "lease", "busy_timeout"])
def test_an_sqlite_dedupe_store_refuses_an_option_out_of_range(name: str, tmp_path: Path) -> None:
    @EXAMPLES
    @given(value=bad_seconds(366 * DAY if name == "ttl" else DAY))
    def check(value: Any) -> None:
        refused(lambda v: SQLiteDedupeStore(tmp_path / "claims.db", **{name: v}), name, value)

    check()


def test_in_range_sqlite_options_are_taken(tmp_path: Path) -> None:
    inbox = SQLiteInbox(tmp_path / "inbox.db", max_attempts=1000, lease=DAY, retention=366 * DAY,
                        busy_timeout=0.5, backoff=(0, 1, DAY))
    assert (inbox.max_attempts, inbox.lease, inbox.backoff) == (1000, DAY, (0.0, 1.0, DAY))
    SQLiteDedupeStore(tmp_path / "claims.db", ttl=366 * DAY, lease=0.001, busy_timeout=DAY)


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda v: sp.webhooks.RedisInbox("redis://127.0.0.1:1/0", max_attempts=v), "max_attempts"),
        (lambda v: sp.webhooks.RedisInbox("redis://127.0.0.1:1/0", lease=v), "lease"),
        (lambda v: sp.webhooks.RedisInbox("redis://127.0.0.1:1/0", retention=v), "retention"),
        (lambda v: sp.webhooks.RedisInbox("redis://127.0.0.1:1/0", socket_timeout=v), "socket_timeout"),
        (lambda v: sp.webhooks.RedisDedupeStore("redis://127.0.0.1:1/0", ttl=v), "ttl"),
        (lambda v: sp.webhooks.PostgresInbox("postgresql://127.0.0.1:1/none", max_attempts=v), "max_attempts"),
        (lambda v: sp.webhooks.PostgresInbox("postgresql://127.0.0.1:1/none", retention=v), "retention"),
        (lambda v: sp.webhooks.PostgresInbox("postgresql://127.0.0.1:1/none", connect_timeout=v), "connect_timeout"),
        (lambda v: sp.webhooks.PostgresDedupeStore("postgresql://127.0.0.1:1/none", statement_timeout=v),
         "statement_timeout"),
    ],
)
@pytest.mark.parametrize("value", [None, "8", 0, -1, math.nan, math.inf, 1e10])
def test_redis_and_postgres_stores_refuse_an_option_out_of_range_before_connecting(
    make: Callable[[Any], object], name: str, value: Any
) -> None:
    refused(make, name, value)
