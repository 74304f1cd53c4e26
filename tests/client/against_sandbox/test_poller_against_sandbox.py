"""The poller against the sandbox's live world: late indexing, deletions, restarts.

The sandbox runs on a manual clock and the poller's waits advance it, so an hour of live
traffic takes a second and the run is the same every time.
"""

from __future__ import annotations

import asyncio
import gc
from datetime import datetime, timedelta
from pathlib import Path
from typing import Optional

import pytest

from sports_posts import (
    AsyncPoller,
    AsyncSportsPosts,
    FileCheckpoint,
    MemoryCheckpoint,
    Poller,
    SportsPosts,
)
from sports_posts.models.post import Post
from sports_posts.sandbox import Sandbox

LEAGUES = "NFL,NBA"


def _live_sandbox() -> Sandbox:
    return Sandbox(seed=5, clock="manual", posts=400, posts_per_minute=6.0, late_index_rate=0.3,
                   deletions_per_hour=6.0)


def _expected(sb: Sandbox, start: datetime) -> set[str]:
    """Posts the poller must have delivered: of its leagues, not from a custom source (the
    service leaves those out unless asked), created after the start, still visible, and
    indexed before the last poll cycle began."""
    last_cycle = sb.now() - timedelta(seconds=61)
    return {
        p.id for p in sb.visible_posts()
        if p.league in ("NFL", "NBA") and not p.author.custom and p.created_at > start and p.indexed_at <= last_cycle
    }


def _check_batches(batches: list[list[Post]]) -> list[str]:
    for batch in batches:
        keys = [(p.created_at, p.id) for p in batch]
        assert keys == sorted(keys), "each batch is oldest first"
    return [p.id for batch in batches for p in batch]


def test_sync_poller_delivers_every_live_post_exactly_once() -> None:
    with _live_sandbox() as sb, SportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
        start = sb.now()
        poller = Poller(client, filters={"leagues": LEAGUES}, interval=60, checkpoint=MemoryCheckpoint(),
                        clock=sb.now, sleep=sb.advance)
        batches: list[list[Post]] = []
        late: Optional[Post] = None
        for batch in poller:
            batches.append(batch)
            if len(batches) == 3:
                late = sb.publish_post("NFL", text="filed early, indexed two minutes late", index_delay=120)  # type: ignore[assignment]
            if sb.now() - start > timedelta(minutes=45):
                break
        poller.close()
        ids = _check_batches(batches)
        assert len(ids) == len(set(ids)), "no post delivered twice"
        delivered = set(ids)
        expected = _expected(sb, start)
        assert expected <= delivered, f"lost: {sorted(expected - delivered)[:5]}"
        assert late is not None and late.id in delivered
        late_indexed = [p for p in sb.visible_posts() if p.id in delivered and p.indexed_late]
        assert late_indexed, "the scenario includes posts indexed after newer ones"
        assert poller.calls <= 2 * 46, "about one call per cycle (plus an occasional second page)"


def test_async_poller_delivers_every_live_post_exactly_once() -> None:
    async def main() -> tuple[list[list[Post]], datetime, Sandbox]:
        sb = _live_sandbox().start()
        start = sb.now()

        async def advance(seconds: float) -> None:
            sb.advance(seconds)

        async with AsyncSportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
            poller = AsyncPoller(client, filters={"leagues": LEAGUES}, interval=60, clock=sb.now, sleep=advance)
            batches: list[list[Post]] = []
            async for batch in poller:
                batches.append(batch)
                if sb.now() - start > timedelta(minutes=30):
                    break
            await poller.aclose()
        return batches, start, sb

    batches, start, sb = asyncio.run(main())
    try:
        ids = _check_batches(batches)
        assert len(ids) == len(set(ids))
        assert _expected(sb, start) <= set(ids)
    finally:
        sb.stop()


def test_restart_from_a_file_checkpoint_loses_nothing_and_repeats_at_most_one_batch(tmp_path: Path) -> None:
    path = tmp_path / "nfl.json"
    with _live_sandbox() as sb, SportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
        start = sb.now()
        first = Poller(client, filters={"leagues": LEAGUES}, interval=60, checkpoint=FileCheckpoint(path),
                       clock=sb.now, sleep=sb.advance)
        before: list[list[Post]] = []
        for batch in first:
            before.append(batch)
            if len(before) == 6:
                break  # an abrupt stop: the sixth batch was handed out but never acknowledged
        del first  # the worker is gone (collected, it frees the file's lock as a dead process would)
        gc.collect()
        sb.advance(300)  # the worker is down for five minutes

        second = Poller(client, filters={"leagues": LEAGUES}, interval=60, checkpoint=FileCheckpoint(path),
                        clock=sb.now, sleep=sb.advance)
        after: list[list[Post]] = []
        for batch in second:
            after.append(batch)
            if sb.now() - start > timedelta(minutes=30):
                break
        second.close()

        ids_before = _check_batches(before)
        ids_after = _check_batches(after)
        repeated = set(ids_before) & set(ids_after)
        assert repeated <= {p.id for p in before[-1]}, "only the unacknowledged batch may repeat"
        assert _expected(sb, start) <= set(ids_before) | set(ids_after)


def test_without_an_overlap_window_late_posts_are_lost() -> None:
    """The control experiment: the same traffic with a 5 s lookback loses late-indexed posts,
    so the exactly-once tests above are testing something."""
    with _live_sandbox() as sb, SportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
        start = sb.now()
        poller = Poller(client, filters={"leagues": LEAGUES}, interval=60, lookback=5, clock=sb.now, sleep=sb.advance)
        delivered: set[str] = set()
        for batch in poller:
            delivered.update(p.id for p in batch)
            if sb.now() - start > timedelta(minutes=45):
                break
        poller.close()
        lost = _expected(sb, start) - delivered
        assert lost and all(next(p for p in sb.visible_posts() if p.id == i).indexed_late for i in lost)


# -- clock skew: the poller's clock ten minutes off the sandbox's ----------------------------

SKEW = timedelta(minutes=10)


@pytest.mark.parametrize("ahead", [SKEW, -SKEW])
def test_a_poller_clock_off_by_ten_minutes_loses_and_repeats_nothing(ahead: timedelta) -> None:
    """The sandbox dates its answers by its own clock; the poller's clock is ten minutes off
    it (more than the 3-minute lookback): the Date headers put its time bounds right."""
    with _live_sandbox() as sb, SportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
        start = sb.now()

        def sleep(seconds: float) -> None:  # stops even if no batch ever came (the failure)
            sb.advance(seconds)
            if sb.now() - start > timedelta(minutes=30):
                poller.stop()

        poller = Poller(client, filters={"leagues": LEAGUES}, interval=60,
                        clock=lambda: sb.now() + ahead, sleep=sleep)
        with poller:
            batches = list(poller)
        ids = _check_batches(batches)
        assert len(ids) == len(set(ids)), "no post delivered twice"
        assert _expected(sb, start) <= set(ids)
        assert abs(poller.clock_skew + ahead) <= timedelta(seconds=1)


def test_async_a_poller_clock_behind_resumes_a_checkpoint_a_synced_one_wrote() -> None:
    """A fleet's machines disagree: one with a synced clock writes the checkpoint, one ten
    minutes behind resumes it. Its watermark looks ten minutes in the future on that clock;
    the sandbox's Date shows it is not."""

    async def main(sb: Sandbox) -> tuple[list[str], list[str]]:
        checkpoint = MemoryCheckpoint()
        start = sb.now()

        async with AsyncSportsPosts(api_key=sb.api_key, base_url=sb.base_url) as client:
            runs: list[list[str]] = []
            for clock in (sb.now, lambda: sb.now() - SKEW):
                until = start + timedelta(minutes=15 * (len(runs) + 1))

                async def advance(seconds: float) -> None:
                    sb.advance(seconds)
                    if sb.now() > until:  # noqa: B023 - this run's poller and bound
                        poller.stop()  # noqa: B023

                poller = AsyncPoller(client, filters={"leagues": LEAGUES}, interval=60,
                                     checkpoint=checkpoint, clock=clock, sleep=advance)
                async with poller:
                    runs.append([p.id async for batch in poller for p in batch])
            assert abs(poller.clock_skew - SKEW) <= timedelta(seconds=1)
        return runs[0], runs[1]

    with _live_sandbox() as sb:
        start = sb.now()
        first, second = asyncio.run(main(sb))
        assert first and second
        assert not set(first) & set(second), "the second poller repeats nothing"
        assert _expected(sb, start) <= set(first) | set(second)
