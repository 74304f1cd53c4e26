"""Poller benchmarks: memory over 10,000 cycles, and calls against the minimum needed.

Both drive the real ``Poller`` (and its client, over ``httpx.MockTransport``) against the
stateful fake of GET /posts from the test suite, on a fake clock: no real waiting.
"""

from __future__ import annotations

import gc
import math
import random
import tracemalloc
from datetime import timedelta
from typing import Any

import httpx

from sports_posts import MemoryCheckpoint, Poller, SportsPosts
from support.fake_service import BASE_URL, T0, FakeClock, FakePostsService

INTERVAL = 60.0


def _client(service: FakePostsService) -> SportsPosts:
    return SportsPosts(api_key="bench-key", base_url=BASE_URL,
                       http_client=httpx.Client(transport=httpx.MockTransport(service.handler)))


def poller_memory(cycles: int = 10_000, warmup: int = 1_000) -> dict[str, Any]:
    """Memory growth between cycle ``warmup`` and cycle ``cycles`` with steady traffic.

    A cycle ends with the poller's wait, so the fake sleep counts cycles, samples memory
    and publishes the next minute's posts. The fake forgets posts older than an hour so
    that only the poller's memory can grow.
    """
    clock = FakeClock()
    service = FakePostsService(clock)
    rng = random.Random(3)
    state = {"cycle": 0, "posts": 0}
    samples: dict[int, int] = {}
    client = _client(service)
    poller: Poller

    def sleep(seconds: float) -> None:
        state["cycle"] += 1
        cycle = state["cycle"]
        if cycle in (warmup, cycles) or cycle % 1000 == 0:
            gc.collect()
            samples[cycle] = tracemalloc.get_traced_memory()[0]
        if cycle >= cycles:
            poller.stop()
            return
        clock.advance(seconds)
        elapsed = (clock.now - T0).total_seconds()
        for _ in range(rng.randint(0, 6)):  # 0-6 new posts a minute, a fifth indexed late
            state["posts"] += 1
            service.publish(f"p{state['posts']}", elapsed - rng.uniform(0, INTERVAL),
                            delay=rng.uniform(30, 150) if rng.random() < 0.2 else 0.0)
        cutoff = clock.now - timedelta(hours=1)
        for post_id in [p.id for p in service.posts.values() if p.created_at < cutoff]:
            del service.posts[post_id]
        service.requests.clear()

    poller = Poller(client, filters={"leagues": "NFL"}, interval=INTERVAL, checkpoint=MemoryCheckpoint(),
                    clock=clock, sleep=sleep, rand=lambda: 0.5)
    tracemalloc.start()
    delivered = sum(len(batch) for batch in poller)
    tracemalloc.stop()
    poller.close()
    client.close()
    return {"growth_bytes": samples[cycles] - samples[warmup], "cycles": cycles, "delivered": delivered,
            "calls": poller.calls, "samples_kib": {k: round(v / 1024) for k, v in sorted(samples.items())}}


def scenario(seed: int = 20261122, hours: int = 12) -> list[tuple[float, float]]:
    """A recorded NFL Sunday as (created seconds after T0, indexing delay): a steady
    trickle, a burst around each touchdown of three game windows, some posts indexed late.
    ``hours`` cuts the day short (the first game starts in its second hour)."""
    rng = random.Random(seed)
    posts: list[tuple[float, float]] = []
    for minute in range(hours * 60):
        in_game = any(start <= minute < start + 200 for start in (60, 300, 500))
        rate = 8 if in_game else 1
        if in_game and rng.random() < 0.04:
            rate = rng.randint(120, 260)  # a touchdown, a trade, a controversy
        for _ in range(rng.randint(0, 2 * rate)):
            delay = rng.uniform(20, 150) if rng.random() < 0.1 else rng.uniform(0, 3)
            posts.append((minute * 60 + rng.uniform(0, 60), delay))
    return sorted(posts)


def poller_calls(hours: int = 12) -> dict[str, Any]:
    """Calls the poller spends on the scenario against the minimum a poller needs to
    deliver every post with the same interval and page size: per cycle, one call, or
    ``ceil(new posts / limit)`` when more posts became visible than one page holds.
    ``hours`` plays only the start of the day (the quick smoke check)."""
    posts = scenario(hours=hours)
    clock = FakeClock()
    service = FakePostsService(clock)
    for n, (created, delay) in enumerate(posts):
        service.publish(f"p{n:06d}", created, delay=delay)
    end = T0 + timedelta(hours=hours, minutes=5)
    client = _client(service)
    poller: Poller

    def sleep(seconds: float) -> None:
        clock.advance(seconds)
        if clock.now >= end:
            poller.stop()

    poller = Poller(client, filters={}, since=T0, interval=INTERVAL, checkpoint=MemoryCheckpoint(),
                    clock=clock, sleep=sleep, rand=lambda: 0.5)
    delivered: list[str] = []
    for batch in poller:
        delivered.extend(p.id for p in batch)
    client.close()
    assert len(delivered) == len(set(delivered)) == len(posts), "every post exactly once"

    # Lower bounds over cycles at the same times (one call a cycle at least, pages of 100).
    # "oracle": the minimum for a client that knows the whole scenario but must still use
    # this API: to deliver the posts that became visible since the last cycle it asks
    # `since` just before the oldest of them, and reads newest-first pages down to it.
    # "windowed": what any poller that catches posts indexed up to `lookback` late must
    # read without knowing the scenario: every post visible in (previous start - lookback,
    # now]. "naive": a page per 100 new posts, as if the API could return only the posts
    # that are new to this client (it cannot: `since` has no upper bound); for reference.
    lookback = 180.0
    visible = sorted((T0 + timedelta(seconds=c + d), T0 + timedelta(seconds=c)) for c, d in posts)
    naive = windowed = oracle = 0
    t, previous = T0, T0 - timedelta(seconds=INTERVAL)
    while t < end:
        now_visible = [created for v, created in visible if v <= t]
        new = [created for v, created in visible if previous < v <= t]
        naive += max(1, math.ceil(len(new) / 100))
        if new:
            oldest = min(new)
            oracle += max(1, math.ceil(sum(1 for created in now_visible if created >= oldest) / 100))
        else:
            oracle += 1
        floor = previous - timedelta(seconds=lookback)
        windowed += max(1, math.ceil(sum(1 for created in now_visible if created > floor) / 100))
        previous = t
        t += timedelta(seconds=INTERVAL)
    return {"calls": poller.calls, "oracle_minimum": oracle, "windowed_minimum": windowed,
            "naive_minimum": naive, "posts": len(posts), "ratio_oracle": poller.calls / oracle,
            "ratio_windowed": poller.calls / windowed, "ratio_naive": poller.calls / naive}


if __name__ == "__main__":
    print(poller_calls())
    print(poller_memory(2000, 200))
