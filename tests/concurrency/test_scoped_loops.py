"""``_scoped.PerLoop`` under trio: a trio run (through anyio) is a loop of its own."""

from __future__ import annotations

import asyncio

import trio

from sports_posts._scoped import PerLoop


def test_each_trio_run_gets_its_own_value_and_an_ended_run_is_forgotten() -> None:
    # failed before PerLoop knew trio: get() raised "no running event loop" under trio
    made: list[int] = []
    def make() -> int:
        made.append(len(made))
        return len(made)

    values = PerLoop(make)

    async def use() -> tuple[int, int, int]:
        first, again = values.get(), values.get()
        return first, again, len(values.others())

    assert trio.run(use) == (1, 1, 0)
    assert trio.run(use) == (2, 2, 0), "a second run makes its own value; the first run's ended with it"
    assert asyncio.run(use()) == (3, 3, 0)


def test_a_trio_run_still_going_is_another_open_loop() -> None:
    values = PerLoop(object)
    seen: list[int] = []

    async def inner() -> None:
        values.get()
        seen.append(len(values.others()))

    async def outer() -> None:
        values.get()
        # another loop (asyncio's, in a thread) while this trio run is alive: it sees this run's value
        await trio.to_thread.run_sync(asyncio.run, inner())

    trio.run(outer)
    assert seen == [1]
