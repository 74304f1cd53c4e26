"""kill -9 in the middle of a poll, then restart: nothing lost, at most one batch repeated."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from sports_posts.sandbox import Sandbox
from tests.crash_helpers import lines, spawn, wait_for


@pytest.fixture
def live() -> Iterator[Sandbox]:
    with Sandbox(seed=9, clock="manual", posts=300, posts_per_minute=8.0, late_index_rate=0.3) as sb:
        yield sb



def test_poller_killed_mid_batch_resumes_from_its_file_checkpoint(live: Sandbox, tmp_path: Path) -> None:
    checkpoint, out = tmp_path / "nfl.json", tmp_path / "stored.txt"
    start = live.now()
    first = spawn("poll", live.base_url, live.api_key, str(checkpoint), str(out), "1000")
    try:
        wait_for(lambda: len({line.split()[1] for line in lines(out)}) >= 4, "four batches stored")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    killed = lines(out)
    second = spawn("poll", live.base_url, live.api_key, str(checkpoint), str(out), "15")
    assert second.wait(timeout=120) == 0, second.stderr.read() if second.stderr else ""

    rows = [line.split() for line in lines(out)]
    first_run = [(int(n), post) for _, n, post in rows[: len(killed)]]
    second_run = [post for _, _, post in rows[len(killed):]]
    in_hand = {post for n, post in first_run if n == max(n for n, _ in first_run)}
    repeated = {post for _, post in first_run} & set(second_run)
    assert repeated <= in_hand, "only the batch in hand at the kill may repeat"
    assert len(second_run) == len(set(second_run)), "nothing repeats within a run"
    delivered = {post for _, post in first_run} | set(second_run)
    last_cycle = live.now().timestamp() - 61
    expected = {p.id for p in live.visible_posts("NFL") if not p.author.custom and p.created_at > start
                and p.indexed_at.timestamp() <= last_cycle}
    assert expected <= delivered, f"lost after the crash: {sorted(expected - delivered)[:5]}"
