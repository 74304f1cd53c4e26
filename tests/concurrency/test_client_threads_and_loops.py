"""One client shared the ways customers share it: 64 threads on a sync client; an async
client on several event loops (``asyncio.run`` twice, asgiref's ``async_to_sync``, trio
through anyio). Every answer is the page its call asked for (issue 48, items 2 and 5)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import httpx
import pytest
from asgiref.sync import async_to_sync

import sports_posts as sp
from sports_posts.sandbox import Sandbox

from .pages import ask, wrong


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(seed=48, clock="manual", posts=1500) as sb:
        yield sb


@pytest.fixture
def aclient(sandbox: Sandbox) -> sp.AsyncSportsPosts:
    return sp.AsyncSportsPosts(api_key=sandbox.api_key, base_url=sandbox.base_url, max_retries=0, timeout=15)


async def fetch(client: sp.AsyncSportsPosts, n: int) -> str:
    params = ask(n)
    return wrong(params, await client.posts.list(**params))


@pytest.mark.slow
def test_64_threads_on_one_sync_client_each_get_their_own_pages(sandbox: Sandbox) -> None:
    client = sp.SportsPosts(api_key=sandbox.api_key, base_url=sandbox.base_url, max_retries=0, timeout=30)
    start = threading.Barrier(64)

    def thread(k: int) -> list[str]:
        start.wait(timeout=30)  # every thread's first call at once
        return [wrong(ask(64 * i + k), client.posts.list(**ask(64 * i + k))) for i in range(4)]

    with client, ThreadPoolExecutor(64) as pool:
        answers = [answer for done in pool.map(thread, range(64)) for answer in done]
    assert len(answers) == 256
    assert [a for a in answers if a] == []
    assert client.calls == 256


def test_asyncio_run_twice_each_loop_with_its_own_pool_closed_with_its_loop(aclient: sp.AsyncSportsPosts) -> None:
    # Failed before the pool was per loop: the second run raised a raw
    # "RuntimeError: Event loop is closed" (the first loop's kept-alive connection).
    pools: list[Any] = []

    async def main(n: int) -> str:
        pools.append(await aclient._pool())
        return await fetch(aclient, n) + await fetch(aclient, n + 1)

    assert asyncio.run(main(0)) == ""
    assert asyncio.run(main(2)) == ""
    assert pools[0] is not pools[1]
    assert pools[0].is_closed and pools[1].is_closed, "each loop's end closed its pool"


@pytest.mark.slow
def test_async_to_sync_a_new_loop_per_call_200_calls(aclient: sp.AsyncSportsPosts) -> None:
    # Django's way: async_to_sync from a sync view makes a loop per call (99 of 200 failed before).
    call = async_to_sync(fetch)
    assert [answer for answer in (call(aclient, n) for n in range(200)) if answer] == []
    assert aclient.calls == 200


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_anyio_runs_twice_on_each_backend(aclient: sp.AsyncSportsPosts, backend: str) -> None:
    async def main(n: int) -> list[str]:
        answers: list[str] = []

        async def one(k: int) -> None:
            answers.append(await fetch(aclient, k))

        async with anyio.create_task_group() as tasks:  # calls at once on one loop, too
            for k in range(n, n + 8):
                tasks.start_soon(one, k)
        return answers

    assert anyio.run(main, 0, backend=backend) == [""] * 8
    assert anyio.run(main, 8, backend=backend) == [""] * 8


def test_aclose_closes_the_running_loops_pool_and_leaves_another_running_loop_its_own(
    aclient: sp.AsyncSportsPosts,
) -> None:
    other_loop = asyncio.new_event_loop()
    runner = threading.Thread(target=other_loop.run_forever, name="other-loop")
    runner.start()
    try:
        other_pool = asyncio.run_coroutine_threadsafe(_pool_after_a_call(aclient), other_loop).result(30)

        async def here() -> Any:
            await fetch(aclient, 3)
            pool = await aclient._pool()
            await aclient.aclose()
            return pool

        assert asyncio.run(here()).is_closed
        assert not other_pool.is_closed, "another loop's pool is that loop's to close"
        assert asyncio.run_coroutine_threadsafe(fetch(aclient, 4), other_loop).result(30) == ""
        asyncio.run_coroutine_threadsafe(aclient.aclose(), other_loop).result(30)
        assert other_pool.is_closed
    finally:
        other_loop.call_soon_threadsafe(other_loop.stop)
        runner.join(30)
        other_loop.close()


async def _pool_after_a_call(client: sp.AsyncSportsPosts) -> Any:
    assert await fetch(client, 2) == ""
    return await client._pool()


def test_your_async_client_on_a_second_loop_is_a_typed_error_naming_the_fix(sandbox: Sandbox) -> None:
    # An httpx.AsyncClient of yours is bound to the loop that opened its connections; the SDK
    # cannot make another, so a second loop gets HTTPClientScopeError, never a raw RuntimeError.
    http = httpx.AsyncClient()
    client = sp.AsyncSportsPosts(api_key=sandbox.api_key, base_url=sandbox.base_url, http_client=http, max_retries=0)

    async def call() -> str:
        return await fetch(client, 5)

    other_loop = asyncio.new_event_loop()  # a loop still open, in another thread
    runner = threading.Thread(target=other_loop.run_forever, name="other-loop")
    runner.start()
    try:
        assert asyncio.run_coroutine_threadsafe(call(), other_loop).result(30) == ""
        with pytest.raises(sp.HTTPClientScopeError, match="another event loop that is still open") as open_:
            asyncio.run(call())
        assert "leave http_client out" in str(open_.value)
    finally:
        other_loop.call_soon_threadsafe(other_loop.stop)
        runner.join(30)
        other_loop.close()
    with pytest.raises(sp.HTTPClientScopeError, match="event loop that has ended") as ended:
        asyncio.run(call())  # that loop's kept-alive connection died with it
    assert "leave http_client out" in str(ended.value)
    assert asyncio.run(call()) == "", "the dead connection is gone: a new one serves this loop"
    assert client.calls == 3, "the refused call was never sent"
