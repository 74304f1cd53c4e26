"""``_scoped.PerLoop`` under trio: a trio run (through anyio) is a loop of its own."""

from __future__ import annotations

import asyncio
import logging

import pytest
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


def _closing_into(closed: list[object], *, early: bool = False) -> PerLoop[object]:
    """A ``PerLoop`` of new objects whose close records each value in ``closed``."""

    async def close(value: object) -> None:
        closed.append(value)

    return PerLoop(object, close=close, early=early)


def test_a_value_with_a_close_is_closed_on_its_loop_when_asyncio_run_ends_it() -> None:
    closed: list[tuple[int, bool]] = []
    made = iter(range(10))

    async def close(value: int) -> None:
        closed.append((value, asyncio.get_running_loop().is_running()))

    values = PerLoop(lambda: next(made), close=close)

    async def use() -> int:
        return values.get()

    assert asyncio.run(use()) == 0 and closed == [(0, True)]  # on its own loop, still running
    assert asyncio.run(use()) == 1 and closed == [(0, True), (1, True)]


def test_a_value_taken_is_the_takers_to_close_and_the_loops_end_leaves_it() -> None:
    closed: list[object] = []
    values = _closing_into(closed)

    async def take() -> object:
        made = values.get()
        await asyncio.sleep(0)  # the closer has taken its first step
        assert values.take() is made
        return made

    asyncio.run(take())
    assert closed == []


def test_a_trio_run_closes_nothing_of_asyncios() -> None:
    closed: list[object] = []
    values = _closing_into(closed)

    async def use() -> object:
        return values.get()

    assert trio.run(use) is not None and closed == []


def test_a_loop_closed_by_hand_leaves_the_value_to_the_collector_and_nothing_is_logged(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run_until_complete`` and ``close`` with no shutdown of the loop's generators: the
    value cannot be closed on a closed loop; its closer goes quietly (no task destroyed while
    pending, no coroutine that ignored its close)."""
    import gc
    import sys

    closed: list[object] = []
    unraisable: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    values = _closing_into(closed)

    async def use() -> object:
        made = values.get()
        await asyncio.sleep(0)
        return made

    with caplog.at_level(logging.WARNING, logger="asyncio"):
        for _ in range(2):  # the second loop's first use forgets the first, closed, loop's value
            loop = asyncio.new_event_loop()
            loop.run_until_complete(use())
            loop.close()
        gc.collect()
    assert closed == [] and unraisable == [] and caplog.records == []


def test_an_early_close_runs_while_the_loops_tasks_are_cancelled() -> None:
    order: list[object] = []
    values = _closing_into(order, early=True)

    async def worker() -> None:  # a pool's own task, which ends only once its pool closed
        try:
            await asyncio.get_running_loop().create_future()
        except asyncio.CancelledError:
            order.append("worker cancelled")
            raise

    async def use() -> object:
        made = values.get()
        asyncio.ensure_future(worker())
        await asyncio.sleep(0)
        return made

    made = asyncio.run(use())
    assert len(order) == 2 and made in order and "worker cancelled" in order
