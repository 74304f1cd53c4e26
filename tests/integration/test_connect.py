"""sandbox.connect(): the service the environment names, else a sandbox for the block."""

from __future__ import annotations

import asyncio
import io

import pytest

from sports_posts import APIConnectionError, AsyncSportsPosts, SportsPosts
from sports_posts.sandbox import Sandbox, aconnect, connect


def test_without_the_environment_a_sandbox_runs_for_the_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPORTS_POSTS_API_KEY", raising=False)
    monkeypatch.delenv("SPORTS_POSTS_BASE_URL", raising=False)
    log = io.StringIO()
    with connect(log=log, seed=4) as client:
        assert isinstance(client, SportsPosts)
        assert client.account.information().company.plan == "paid"
        base_url = client.base_url
    assert "embedded sandbox" in log.getvalue() and base_url in log.getvalue()
    with pytest.raises(APIConnectionError), SportsPosts(api_key="k" * 10, base_url=base_url, max_retries=0) as after:
        after.account.information()  # the sandbox stopped with the block


def test_with_the_environment_the_named_service_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    with Sandbox(seed=8) as service:
        monkeypatch.setenv("SPORTS_POSTS_API_KEY", service.api_key)
        monkeypatch.setenv("SPORTS_POSTS_BASE_URL", service.base_url)
        log = io.StringIO()
        with connect(log=log) as client:
            assert client.base_url == service.base_url
            client.account.x_ids()
        assert "using the service" in log.getvalue()
        assert service.calls() == 1

        async def main() -> str:
            async with aconnect(log=None) as aclient:
                assert isinstance(aclient, AsyncSportsPosts)
                await aclient.account.x_ids()
                return aclient.base_url

        assert asyncio.run(main()) == service.base_url
        assert service.calls() == 2
