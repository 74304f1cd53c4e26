"""An error the driver's own I/O raises (a checkpoint that cannot save) ends the poller's
steps as an error inside them does: the checkpoint's file lock is let go at once, and the
poller delivers nothing more."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from sports_posts import (
    AsyncPoller,
    AsyncSportsPosts,
    FileCheckpoint,
    Poller,
    PollState,
    SportsPosts,
)
from sports_posts.polling import CheckpointError
from support.fake_service import T0, FakeClock, FakePostsService


class UnsavableCheckpoint(FileCheckpoint):
    """A file checkpoint on a disk that refuses every write."""

    def save(self, state: PollState) -> None:
        raise CheckpointError("the disk is full")


async def no_wait(seconds: float) -> None:
    return None


def test_a_failed_save_ends_the_poller_and_lets_go_of_its_file(
    client: SportsPosts, service: FakePostsService, clock: FakeClock, tmp_path: Path
) -> None:
    service.publish("p1", -10.0)
    path = tmp_path / "nfl.json"
    since = T0 - timedelta(minutes=1)
    failing = Poller(client, checkpoint=UnsavableCheckpoint(path), since=since, clock=clock, sleep=lambda s: None)
    with pytest.raises(CheckpointError, match="disk is full"):
        next(failing)
    with Poller(client, checkpoint=FileCheckpoint(path), since=since, clock=clock, sleep=lambda s: None) as other:
        assert [p.id for p in next(other)] == ["p1"]  # the file is free: no CheckpointLockedError
    with pytest.raises(StopIteration):
        next(failing)


@pytest.mark.anyio
async def test_a_failed_save_ends_the_async_poller_and_lets_go_of_its_file(
    aclient: AsyncSportsPosts, service: FakePostsService, clock: FakeClock, tmp_path: Path
) -> None:
    service.publish("p1", -10.0)
    path = tmp_path / "nfl.json"
    since = T0 - timedelta(minutes=1)
    failing = AsyncPoller(aclient, checkpoint=UnsavableCheckpoint(path), since=since, clock=clock, sleep=no_wait)
    with pytest.raises(CheckpointError, match="disk is full"):
        await failing.__anext__()
    async with AsyncPoller(aclient, checkpoint=FileCheckpoint(path), since=since, clock=clock, sleep=no_wait) as other:
        assert [p.id for p in await other.__anext__()] == ["p1"]
    with pytest.raises(StopAsyncIteration):
        await failing.__anext__()
