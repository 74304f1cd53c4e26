"""Careless client options are refused at construction (and by ``with_options``) with a
ParameterError naming the argument, before anything is sent; a fuzz shows that only the
SDK's own errors escape, whatever the values."""

from __future__ import annotations

import math
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sports_posts as sp

from .conftest import API_KEY, BASE_URL


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SPORTS_POSTS_API_KEY", "SPORTS_POSTS_BASE_URL", "SPORTS_POSTS_ALLOW_INSECURE_HTTP"):
        monkeypatch.delenv(name, raising=False)


def refused(parameter: str, **kwargs: Any) -> sp.ParameterError:
    kwargs.setdefault("api_key", API_KEY)
    kwargs.setdefault("base_url", BASE_URL)
    with pytest.raises(sp.ParameterError) as info:
        sp.SportsPosts(**kwargs)
    assert info.value.parameter == parameter, str(info.value)
    return info.value


@pytest.mark.parametrize(
    "url",
    [
        "https://api.test/v1?debug=1",
        "https://api.test/v1?",
        "https://api.test/v1#top",
        " https://api.test/v1",
        "https://api.test/v1\n",
        "ftp://api.test/v1",
        "file:///etc/passwd",
        "api.test/v1",
        "//api.test/v1",
        "https:///v1",
        "https://api.test/v 1",
    ],
)
def test_a_base_url_that_is_not_a_plain_service_address_is_refused(url: str) -> None:
    refused("base_url", base_url=url)


def test_a_base_url_with_credentials_is_refused_without_echoing_them() -> None:
    error = refused("base_url", base_url="https://admin:hunter2-secret@api.test/v1")
    assert "hunter2" not in str(error) and "admin" not in str(error)


def test_plain_http_to_another_machine_needs_an_explicit_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    error = refused("base_url", base_url="http://api.example.com/v1")
    assert "clear text" in str(error) and "allow_insecure_http" in str(error)
    sp.SportsPosts(api_key=API_KEY, base_url="http://api.example.com/v1", allow_insecure_http=True).close()
    monkeypatch.setenv("SPORTS_POSTS_ALLOW_INSECURE_HTTP", "1")
    sp.SportsPosts(api_key=API_KEY, base_url="http://api.example.com/v1").close()


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/v1", "http://localhost/v1", "http://[::1]:9/v1", "http://127.1.2.3/v1/"])
def test_plain_http_to_this_machine_is_fine(url: str) -> None:
    with sp.SportsPosts(api_key=API_KEY, base_url=url) as client:
        assert client.base_url == url.rstrip("/")


@pytest.mark.parametrize(
    ("parameter", "value"),
    [
        ("timeout", -1),
        ("timeout", 0),
        ("timeout", math.nan),
        ("timeout", math.inf),
        ("timeout", "30"),
        ("timeout", True),
        ("timeout", httpx.Timeout(5.0, read=-1.0)),
        ("timeout", httpx.Timeout(5.0, connect=math.nan)),
        ("max_retries", -1),
        ("max_retries", 1.5),
        ("max_retries", True),
        ("max_retries", 21),
        ("max_retries", "2"),
        ("auth_scheme", "token"),
        ("auth_scheme", None),
        ("total_timeout", 0),
        ("total_timeout", math.nan),
        ("total_timeout", "60"),
        ("max_response_bytes", 0),
        ("max_response_bytes", 1.5),
        ("max_response_bytes", True),
        ("allow_insecure_http", "yes"),
        ("default_headers", {"X-Trace": "a\r\nX-Evil: 1"}),
        ("default_headers", {"X-Trace\r\n": "1"}),
        ("default_headers", {"X Trace": "1"}),
        ("default_headers", {"X-Team": "Atlético"}),
        ("default_headers", {"X-Count": 1}),
        ("default_headers", {"Authorization": "Bearer other"}),
        ("default_headers", {"authorization": "Bearer other"}),
        ("default_headers", "X-Trace: 1"),
    ],
)
def test_a_careless_option_is_a_parameter_error_naming_it(parameter: str, value: Any) -> None:
    refused(parameter, **{parameter: value})


@pytest.mark.parametrize(
    ("parameter", "value"),
    [
        ("timeout", -1),
        ("timeout", math.inf),
        ("timeout", None),
        ("max_retries", 21),
        ("max_retries", False),
        ("total_timeout", -5),
        ("max_response_bytes", 0),
    ],
)
def test_with_options_checks_the_same(parameter: str, value: Any) -> None:
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
        with pytest.raises(sp.ParameterError) as info:
            client.with_options(**{parameter: value})
        assert info.value.parameter == parameter


def test_with_options_sets_each_bound_and_keeps_the_others() -> None:
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL) as client:
        assert client.max_response_bytes == 8 * 1024 * 1024 and client.total_timeout == 120.0
        copy = client.with_options(max_response_bytes=1024, total_timeout=None)
        assert copy.max_response_bytes == 1024 and copy.total_timeout is None
        assert copy.max_retries == client.max_retries and copy.timeout == client.timeout


@pytest.mark.parametrize(
    "key",
    ["clé-secrète-123", "sk_live abc123", "sk_live\tabc123", "sk_live\x00abc123", "sk_\u200blive_abc123", "sk_live_\x7fabc"],
)
def test_an_api_key_no_header_can_carry_is_a_configuration_error_that_never_shows_it(key: str) -> None:
    error = refused("api_key", api_key=key)
    assert key not in str(error) and key.split()[0] not in str(error)


def test_a_key_that_is_not_a_string_is_a_parameter_error() -> None:
    refused("api_key", api_key=12345678)


# ---------------------------------------------------------------------------------------
# Fuzz: any value for each argument; only SportsPostsError escapes

GARBAGE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.binary(max_size=10),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=8), st.one_of(st.text(max_size=8), st.integers()), max_size=3),
)
SHARED_SYNC = httpx.Client()
SHARED_ASYNC = httpx.AsyncClient()


def _arguments(http_client: Any) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        # always given: a pool of the SDK's own would load the system's CA certificates
        # (about 0.2 s) in each example that gets that far
        {"http_client": st.sampled_from([http_client, object(), "client"])},
        optional={
            # keys a fuzz makes valid are registered with the suite's secret watch: the
            # prefix keeps them from matching any other test's text (and an unprefixed
            # string is not watched), so the bad strings are few and fixed
            "api_key": st.one_of(
                st.builds(lambda t: "sk_fuzz_" + t, st.text(max_size=12)),
                st.sampled_from(["", " ", "sk_fuzz_\n", "\x00"]),
                GARBAGE.filter(lambda value: not isinstance(value, str)),
            ),
            "base_url": st.one_of(
                st.sampled_from([BASE_URL, "http://127.0.0.1:1/v1", "http://api.example.com/v1"]),
                st.builds(lambda s, t: s + "://" + t, st.sampled_from(["https", "http", "ftp", ""]), st.text(max_size=20)),
                GARBAGE,
            ),
            "timeout": st.one_of(st.floats(min_value=0.001, max_value=60), st.builds(httpx.Timeout, GARBAGE), GARBAGE),
            "max_retries": st.one_of(st.integers(min_value=-3, max_value=25), GARBAGE),
            "auth_scheme": st.one_of(st.sampled_from(["bearer", "bare"]), GARBAGE),
            "default_headers": st.one_of(
                st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3), GARBAGE
            ),
            "total_timeout": GARBAGE,
            "max_response_bytes": st.one_of(st.integers(), GARBAGE),
            "allow_insecure_http": GARBAGE,
        },
    )


OPTIONS = st.fixed_dictionaries(
    {},
    optional={"timeout": GARBAGE, "max_retries": GARBAGE, "total_timeout": GARBAGE, "max_response_bytes": GARBAGE},
)


@pytest.mark.parametrize(("cls", "http_client"), [(sp.SportsPosts, SHARED_SYNC), (sp.AsyncSportsPosts, SHARED_ASYNC)])
def test_fuzz_client_options_only_raise_sdk_errors(cls: type, http_client: Any) -> None:
    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(arguments=_arguments(http_client), options=OPTIONS)
    def check(arguments: dict[str, Any], options: dict[str, Any]) -> None:
        arguments.setdefault("api_key", API_KEY)
        arguments.setdefault("base_url", BASE_URL)
        try:
            client = cls(**arguments)
        except sp.SportsPostsError:
            return
        try:
            client.with_options(**options)
        except sp.SportsPostsError:
            pass

    check()
