"""The suite-wide secret watch (tests/conftest.py) sees keys and catches a leak when there is one."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

import sports_posts as sp
from sports_posts.webhooks import WebhookReceiver, build_test_request, sample_payload

pytest_plugins = ["pytester"]

KEY = "sk_live_reliability_7Qz9WmT2"
SECRET = "whsec_reliability_Lp4N8vYc"


def test_the_watch_catches_a_key_in_a_log_record_and_an_error(secrets_never_leak: object) -> None:
    watch = secrets_never_leak
    sp.SportsPosts(api_key=KEY, base_url="https://api.test/v1").close()
    assert KEY in watch.secrets  # type: ignore[attr-defined]
    before = list(watch.leaks)  # type: ignore[attr-defined]
    logging.getLogger("sports_posts.test").debug("oops %s", KEY)
    sp.SportsPostsError(f"bad key {KEY}")
    caught = watch.leaks[len(before):]  # type: ignore[attr-defined]
    del watch.leaks[len(before):]  # type: ignore[attr-defined]  # planted on purpose: not a real leak
    assert len(caught) == 2


def test_a_whole_request_cycle_at_debug_level_leaks_nothing(
    caplog: pytest.LogCaptureFixture, secrets_never_leak: object
) -> None:
    caplog.set_level(logging.DEBUG)
    with respx.mock(base_url="https://api.test/v1") as mock:
        mock.get("/posts").mock(side_effect=[httpx.Response(503), httpx.Response(401, json={
            "ok": False, "error_code": "UNAUTHORIZED", "error_message": "invalid key"})])
        client = sp.SportsPosts(api_key=KEY, base_url="https://api.test/v1", max_retries=1)
        with pytest.raises(sp.AuthenticationError) as info:
            client.posts.list()
    receiver = WebhookReceiver(SECRET, lambda event: None)
    request = build_test_request(sample_payload(), SECRET)
    assert receiver.handle(request.body, request.headers).status_code == 202
    assert SECRET in secrets_never_leak.secrets  # type: ignore[attr-defined]  # the watch saw the secret
    assert receiver.handle(request.body, {**request.headers, "X-Service-Signature": "sha256=" + "0" * 64}).status_code == 401
    receiver.close()
    texts = [r.getMessage() for r in caplog.records] + [str(info.value), repr(info.value), repr(client), repr(receiver)]
    assert any("request GET" in t for t in texts), "debug records were produced"
    assert not [t for t in texts if KEY in t or SECRET in t]


LEAKY_SUITE = '''
import logging

from sports_posts import SportsPosts


def test_leaks_its_key():
    SportsPosts(api_key="sk_test_watch_leak_1", base_url="https://api.test/v1").close()
    logging.getLogger("sports_posts.test").warning("sending with %s", "sk_test_watch_leak_1")


def test_a_later_test():
    pass


def test_an_unprefixed_value_is_not_a_secret():
    # a fuzz's sample handed over as a key, then another test's header name: not a leak
    SportsPosts(api_key="X-Acme-Signature", base_url="https://api.test/v1").close()
    logging.getLogger("sports_posts.test").warning("header %s", "X-Acme-Signature")
'''


def test_a_leak_fails_the_test_that_leaked_and_only_prefixed_values_are_watched(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only prefixed values are watched, and a leak fails the test that leaked, not the session's last one."""
    root = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("PYTHONPATH", str(root))
    pytester.makeconftest("from tests.secret_watch import secret_leaks_fail_their_test, secrets_never_leak\n")
    pytester.makepyfile(test_leaky=LEAKY_SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:schemathesis", "-p", "no:randomly")
    result.assert_outcomes(passed=3, errors=1)
    output = result.stdout.str()
    assert "ERROR at teardown of test_leaks_its_key" in output
    assert "test_leaky.py::test_leaks_its_key leaked a secret:" in output
    assert "log record sports_posts.test: 'sending with sk_tes<redacted>'" in output  # where, not the secret
    assert "outside any test" not in output and "test_a_later_test leaked" not in output


def test_a_registered_secret_carries_a_prefix(secrets_never_leak: Any) -> None:
    with pytest.raises(ValueError, match="starts with one of"):
        secrets_never_leak.register("r3dis-Passw0rd")
    secrets_never_leak.register("pw_test_registered")
    assert "pw_test_registered" in secrets_never_leak.secrets
