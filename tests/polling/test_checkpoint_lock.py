"""One poller per FileCheckpoint: a second one, in another process or this one, fails at
its start with CheckpointLockedError instead of delivering the same posts again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from sports_posts import CheckpointError, FileCheckpoint, PollState
from sports_posts.polling.checkpoints import CheckpointLockedError
from support.fake_service import T0, FakePostsService

from .conftest import TimeHarness, make_poller

# A poller in a child process: one idle cycle against a fake transport, then it waits on
# stdin inside its sleep, holding the checkpoint, until the test kills it.
CHILD = textwrap.dedent(
    """
    import json, sys
    import httpx
    from sports_posts import FileCheckpoint, Poller, SportsPosts

    def answer(request):
        body = {"pagination": {"page": 1, "limit": 100, "has_next": False, "has_prev": False}, "items": []}
        return httpx.Response(200, content=json.dumps(body).encode())

    def sleep(seconds):
        print("polling", flush=True)
        sys.stdin.readline()

    client = SportsPosts(api_key="sk_test_child_poller", base_url="https://fake.test/v1",
                         http_client=httpx.Client(transport=httpx.MockTransport(answer)))
    for batch in Poller(client, checkpoint=FileCheckpoint(sys.argv[1]), sleep=sleep):
        pass
    """
)


def _child(path: Path) -> subprocess.Popen[bytes]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == b"polling", "the child poller did not start"
    return child


def test_a_second_process_on_the_same_file_fails_fast_and_a_killed_one_frees_it(
    tmp_path: Path, client: Any, service: FakePostsService, harness: TimeHarness
) -> None:
    path = tmp_path / "nfl.json"
    child = _child(path)
    try:
        with pytest.raises(CheckpointLockedError, match=f"in use by another poller \\(process {child.pid}") as info:
            next(iter(make_poller(client, harness, since=T0, checkpoint=FileCheckpoint(path))))
        assert isinstance(info.value, CheckpointError)
        assert service.requests == [], "the second poller sent nothing"
        assert FileCheckpoint(path).load() is not None, "reading a held checkpoint is fine"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        for stream in (child.stdin, child.stdout):
            assert stream is not None
            stream.close()
    # the kernel dropped the dead process's lock: the next poller starts (on the child's
    # clock, the real one, or the child's watermark would be in this test's future)
    harness.clock.now = harness.until = datetime.now(timezone.utc)
    list(make_poller(client, harness, since=T0, checkpoint=FileCheckpoint(path)))
    assert len(service.requests) == 1


def test_two_pollers_in_one_process_and_close_frees_the_file(
    tmp_path: Path, client: Any, service: FakePostsService, harness: TimeHarness
) -> None:
    path = tmp_path / "nfl.json"
    service.publish("a", 10.0)
    harness.clock.advance(60)
    first = make_poller(client, harness, since=T0, interval=30, checkpoint=FileCheckpoint(path))
    assert [p.id for p in next(iter(first))] == ["a"]
    second = make_poller(client, harness, since=T0, interval=30, checkpoint=FileCheckpoint(path))
    with pytest.raises(CheckpointLockedError):
        next(iter(second))
    assert len(service.requests) == 1
    first.close()
    third = make_poller(client, harness, since=T0, interval=30, checkpoint=FileCheckpoint(path))
    harness.until = harness.clock.now  # stop at the first wait
    assert list(third) == []  # "a" was committed by close(), and the file is free again


def test_a_poller_whose_file_was_saved_after_it_read_it_does_not_start_stale(tmp_path: Path) -> None:
    path = tmp_path / "nfl.json"
    FileCheckpoint(path).save(PollState.start(T0))
    late = FileCheckpoint(path)
    late.load()
    FileCheckpoint(path).save(PollState.start(T0.replace(minute=5)))  # another poller, meanwhile
    with pytest.raises(CheckpointLockedError, match="saved by another poller"):
        late.acquire()
    fresh = FileCheckpoint(path)
    fresh.load()
    fresh.acquire()
    fresh.acquire()  # holding twice is holding once
    fresh.release()
    fresh.release()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nfl.json", "nfl.json.lock"]
    assert (tmp_path / "nfl.json.lock").read_text().strip() == str(os.getpid())
