"""Every fault the sandbox can inject, on every endpoint, for both clients: each case ends in
success after retries or in a typed ``sports_posts`` error, never a raw exception."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any, Callable

import httpx
import pytest
import respx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sports_posts as sp
from sports_posts._endpoints import account_information, posts_list
from sports_posts.sandbox import ChaosSettings, Sandbox
from sports_posts.testing import RetryWaits
from tests.client.bodies import parse_response
from tests.runner import Runner
from tests.stacks import STACKS

ENDPOINTS: dict[str, Callable[[Any], Any]] = {
    "posts.list": lambda c: c.posts.list(leagues="NBA", limit=5).iter_items(max_items=5),
    "account.information": lambda c: c.account.information(),
    "account.x_ids": lambda c: c.account.x_ids(),
    "ids.teams": lambda c: c.ids.teams("NHL", reference_id="code"),
}

FAULTS: dict[str, tuple[ChaosSettings, type[Exception]]] = {
    "429 Retry-After": (ChaosSettings(rate_429=1.0), sp.RateLimitError),
    "500": (ChaosSettings(rate_500=1.0), sp.InternalServerError),
    "502 html": (ChaosSettings(rate_502=1.0), sp.InternalServerError),
    "503 Retry-After": (ChaosSettings(rate_503=1.0), sp.InternalServerError),
    "504 html": (ChaosSettings(rate_504=1.0), sp.InternalServerError),
    "reset connection": (ChaosSettings(drop_rate=1.0), sp.APIConnectionError),
    "garbage body": (ChaosSettings(malformed_rate=1.0), sp.APIResponseValidationError),
    "html 200": (ChaosSettings(html_rate=1.0), sp.APIResponseValidationError),
    "truncated body": (ChaosSettings(truncated_rate=1.0), sp.APIResponseValidationError),
}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(seed=21, clock="manual", posts=600) as sb:
        yield sb


@pytest.fixture(params=[(kind, stack) for stack in STACKS for kind in ("sync", "async")], ids="-".join)
def runner(request: pytest.FixtureRequest, sandbox: Sandbox, retry_waits: RetryWaits) -> Runner:
    kind, stack = request.param
    return Runner(kind, stack=stack, waits=retry_waits, base_url=sandbox.base_url)


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_persistent_fault_ends_in_its_typed_error(
    runner: Runner, sandbox: Sandbox, endpoint: str, fault: str, retry_sleeps: list[float]
) -> None:
    chaos, error = FAULTS[fault]
    key = sandbox.add_key("paid", chaos=chaos)
    with pytest.raises(error):
        runner.run(ENDPOINTS[endpoint], api_key=key, max_retries=2)
    retried = issubclass(error, (sp.APIConnectionError, sp.RateLimitError, sp.InternalServerError))
    assert len(retry_sleeps) == (2 if retried else 0), "transient faults are retried, bad bodies are not"


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
def test_intermittent_faults_end_in_success_after_retries(runner: Runner, sandbox: Sandbox, endpoint: str) -> None:
    chaos = ChaosSettings(rate_429=0.1, rate_500=0.1, rate_502=0.1, rate_503=0.1, rate_504=0.05, drop_rate=0.1)
    key = sandbox.add_key("paid", chaos=chaos)
    for _ in range(5):
        assert runner.run(ENDPOINTS[endpoint], api_key=key, max_retries=10) is not None


def test_a_slow_answer_is_a_typed_timeout(runner: Runner, sandbox: Sandbox) -> None:
    key = sandbox.add_key("paid", chaos=ChaosSettings(slow_rate=1.0, slow_seconds=0.5))
    with pytest.raises(sp.APITimeoutError):
        runner.run(ENDPOINTS["account.x_ids"], api_key=key, max_retries=1, timeout=0.05)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_429_without_retry_after_backs_off_exponentially(kind: str, retry_waits: RetryWaits) -> None:
    runner = Runner(kind, waits=retry_waits)  # on httpx: respx mocks httpx only
    retry_sleeps = retry_waits.waits
    with respx.mock(base_url="https://api.test/v1") as mock:
        mock.get("/account/x-ids").respond(429, json={"ok": False, "error_code": "RATE_LIMITED"})
        with pytest.raises(sp.RateLimitError) as info:
            runner.run(ENDPOINTS["account.x_ids"], api_key="sk_test_" + "k" * 12, base_url="https://api.test/v1", max_retries=3)
    assert info.value.retry_after is None
    assert len(retry_sleeps) == 3 and retry_sleeps[0] < retry_sleeps[1] < retry_sleeps[2] <= 8


# -- extra, missing, null and retyped fields on real sandbox answers --------------------------


@pytest.fixture(scope="module")
def real_page(sandbox: Sandbox) -> dict[str, Any]:
    answer = httpx.get(sandbox.base_url + "/posts", params={"limit": 20},
                       headers={"Authorization": f"Bearer {sandbox.api_key}"})
    body: dict[str, Any] = answer.json()
    assert len(body["items"]) == 20
    return body


_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8),
                    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_pages_parse_or_raise_a_typed_error(real_page: dict[str, Any], data: st.DataObject) -> None:
    page = copy.deepcopy(real_page)
    for _ in range(data.draw(st.integers(1, 4))):
        post = page["items"][data.draw(st.integers(0, len(page["items"]) - 1))]
        field = data.draw(st.sampled_from(sorted(post)))
        action = data.draw(st.sampled_from(["drop", "null", "retype", "extra"]))
        if action == "drop":
            del post[field]
        elif action == "null":
            post[field] = None
        elif action == "retype":
            post[field] = data.draw(_scalar)
        else:
            post[f"new_{field}"] = data.draw(_scalar)
    response = httpx.Response(200, content=json.dumps(page).encode())
    try:
        parsed = parse_response(posts_list({}), response)
    except sp.APIResponseValidationError as exc:
        assert exc.field is not None and exc.body is not None
        return
    assert len(parsed.items) == len(page["items"])
    for post, raw in zip(parsed.items, page["items"]):
        extras = {k for k in raw if k.startswith("new_")}
        assert extras <= set(post.model_extra or {}), "unknown fields are kept"


@pytest.mark.parametrize(
    "body",
    [b"", b"null", b"[]", b'{"company": null}', b'{"company": {"name": 5}}', b'{"usage": {"current_calls": "many"}}',
     b'{"billing_cycle": {"current_period_start": "yesterday"}}', b"\x00\x01", "é".encode("latin-1")],
)
def test_odd_account_bodies_parse_or_raise_a_typed_error(body: bytes) -> None:
    try:
        parse_response(account_information(), httpx.Response(200, content=body))
    except sp.APIResponseValidationError:
        pass
