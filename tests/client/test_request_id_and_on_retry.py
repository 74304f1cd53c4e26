"""Every error names its call (``request_id``), for support tickets as stripe and openai do,
and ``on_retry`` sees each retry (issue 51)."""

from __future__ import annotations

import logging
import pickle
import re

import httpx
import pytest
import respx

import sports_posts as sp
from sports_posts.testing import RetryWaits
from tests.runner import Runner

from .conftest import API_KEY, BASE_URL

OWN_ID = re.compile(r"^sp_[0-9a-f]{24}$")
OK_IDS = httpx.Response(200, json={"ok": True, "as_of": "2026-01-01T00:00:00Z", "ids_to_delete": []})


def test_an_error_carries_the_gateways_request_id(runner: Runner, api: respx.MockRouter) -> None:
    api.get("/posts").respond(404, json={"ok": False, "error_code": "NOT_FOUND"}, headers={"X-Request-Id": "gw-7f3a"})
    with pytest.raises(sp.NotFoundError) as info:
        runner.run(lambda c: c.posts.list(), max_retries=0)
    assert info.value.request_id == "gw-7f3a"
    assert pickle.loads(pickle.dumps(info.value)).request_id == "gw-7f3a"  # a Celery consumer sees it too


def test_without_one_an_error_carries_the_sdks_id_of_the_call_which_its_logs_name(
    runner: Runner, api: respx.MockRouter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="sports_posts")
    api.get("/posts").respond(503)
    with pytest.raises(sp.InternalServerError) as info:
        runner.run(lambda c: c.posts.list(), max_retries=2)
    request_id = info.value.request_id
    assert request_id is not None and OWN_ID.match(request_id)
    retried = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    assert len(retried) == 2 and all(request_id in line for line in retried)  # one id for the whole call


def test_each_call_has_its_own_id(runner: Runner, api: respx.MockRouter) -> None:
    api.get("/posts").respond(500)
    ids = set()
    for _ in range(3):
        with pytest.raises(sp.InternalServerError) as info:
            runner.run(lambda c: c.posts.list(), max_retries=0)
        ids.add(info.value.request_id)
    assert len(ids) == 3


def test_a_connection_error_has_an_id_too(runner: Runner, api: respx.MockRouter) -> None:
    api.get("/posts").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(sp.APIConnectionError) as info:
        runner.run(lambda c: c.posts.list(), max_retries=0)
    assert info.value.request_id is not None and OWN_ID.match(info.value.request_id)


def test_a_request_id_that_echoes_the_key_is_never_shown(runner: Runner, api: respx.MockRouter) -> None:
    api.get("/posts").respond(500, headers={"X-Request-Id": f"echo-{API_KEY}"})
    with pytest.raises(sp.InternalServerError) as info:
        runner.run(lambda c: c.posts.list(), max_retries=0)
    assert API_KEY not in str(info.value.request_id) and info.value.request_id


def test_on_retry_sees_each_retry(runner: Runner, api: respx.MockRouter, retry_sleeps: list[float]) -> None:
    api.get("/posts").mock(side_effect=[
        httpx.Response(503), httpx.ConnectError("refused"),
        httpx.Response(200, json={"ok": True, "pagination": {"page": 1, "limit": 20, "has_next": False,
                                                                "has_prev": False}, "items": []}),
    ])
    seen: list[sp.RetryEvent] = []
    page = runner.run(lambda c: c.posts.list(), max_retries=3, on_retry=seen.append)
    assert page == []
    assert [(e.attempt, type(e.error), e.status_code) for e in seen] == [
        (1, sp.InternalServerError, 503), (2, sp.APIConnectionError, None)]
    assert [e.wait for e in seen] == retry_sleeps  # the waits the client then slept
    assert seen[0].request_id == seen[1].request_id and OWN_ID.match(seen[0].request_id)


def test_a_hook_that_raises_does_not_stop_the_retry(runner: Runner, api: respx.MockRouter,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    api.get("/account/x-ids").mock(side_effect=[httpx.Response(503), httpx.Response(
        200, json={"ok": True, "as_of": "2026-01-01T00:00:00Z", "ids_to_delete": []})])

    def broken(event: sp.RetryEvent) -> None:
        raise RuntimeError("my hook is broken")

    result = runner.run(lambda c: c.account.x_ids(), max_retries=1, on_retry=broken)
    assert result.ids_to_delete == []
    assert any("on_retry raised" in r.getMessage() for r in caplog.records)


def test_on_retry_is_checked_and_follows_with_options(api: respx.MockRouter, retry_waits: RetryWaits) -> None:
    with pytest.raises(sp.ParameterError, match="on_retry"):
        sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, on_retry="print")  # type: ignore[arg-type]
    api.get("/account/x-ids").mock(side_effect=[httpx.Response(503), OK_IDS] * 3)
    seen: list[sp.RetryEvent] = []
    with sp.SportsPosts(
        api_key=API_KEY, base_url=BASE_URL, max_retries=1, on_retry=seen.append, sleep=retry_waits.sleep
    ) as client:
        client.with_options(timeout=5).account.x_ids()  # a copy keeps the hook
        assert len(seen) == 1
        client.with_options(on_retry=None).account.x_ids()  # ... unless told otherwise
        assert len(seen) == 1
        client.account.x_ids()
        assert len(seen) == 2
