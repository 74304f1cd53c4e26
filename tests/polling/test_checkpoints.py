"""Checkpoints: the state's JSON, atomic files that survive a kill, and redis for fleets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sports_posts import (
    AsyncSportsPosts,
    CheckpointConflictError,
    CheckpointError,
    FileCheckpoint,
    MemoryCheckpoint,
    PollState,
    RedisCheckpoint,
    SportsPostsError,
)
from sports_posts._stores import StoreError
from sports_posts.polling import Checkpoint
from sports_posts.polling._skew import MAX_CORRECTION
from support.fake_service import T0, FakePostsService

from .conftest import TimeHarness, ids, make_async_poller, make_poller

STATE = PollState(
    watermark=T0 + timedelta(seconds=300),
    floor=T0 + timedelta(seconds=120),
    seen={"b": T0 + timedelta(seconds=200), "a": T0 + timedelta(seconds=150, microseconds=250)},
    since_id="z",
    since_id_created_at=T0 + timedelta(seconds=100),
)


# -- the state ------------------------------------------------------------------------------


def test_state_round_trips_through_json_with_a_version_field() -> None:
    data = json.loads(STATE.to_json())
    assert data["version"] == 1
    assert data["watermark"] == "2026-11-21T12:05:00Z"
    assert PollState.from_json(STATE.to_json()) == STATE


def test_an_undated_start_round_trips_and_a_dated_state_does_not_write_the_field() -> None:
    """Only a start saved before any answer dated the service's clock carries ``undated``,
    so every other state reads the same in an SDK that predates the field."""
    undated = PollState.start(T0, undated=True)
    assert json.loads(undated.to_json())["undated"] is True
    assert PollState.from_json(undated.to_json()) == undated
    assert "undated" not in json.loads(STATE.to_json())
    assert "undated" not in json.loads(PollState.start(T0).to_json())


@pytest.mark.parametrize(
    "text",
    [
        b"",
        b"{not json",
        b'{"version": 1, "watermark": "2026-11-21T12:00:00Z"',  # torn write
        b"[]",
        b'{"version": 99, "watermark": "2026-11-21T12:00:00Z", "floor": "2026-11-21T12:00:00Z"}',
        b'{"version": 1, "watermark": "yesterday", "floor": "2026-11-21T12:00:00Z"}',
        b'{"version": 1, "watermark": "2026-11-21T12:00:00", "floor": "2026-11-21T12:00:00Z"}',
        b'{"version": 1, "watermark": "2026-11-21T12:00:00Z", "floor": "2026-11-21T12:00:00Z", "seen": []}',
        b"\xff\xfe\x00",
        b"[" * 200_000 + b"]" * 200_000,  # nested past the parser's stack
        b'{"seen": ' * 200_000 + b"1" + b"}" * 200_000,
        b'{"version": true, "watermark": "2026-11-21T12:00:00Z", "floor": "2026-11-21T12:00:00Z"}',
        b'{"version": 1.0, "watermark": "2026-11-21T12:00:00Z", "floor": "2026-11-21T12:00:00Z"}',
        b'{"version": 1, "watermark": "0001-01-01T00:00:00+01:00", "floor": "2026-11-21T12:00:00Z"}',
        b'{"version": 1, "watermark": ["2026"], "floor": "2026-11-21T12:00:00Z"}',
        b'{"version": 1, "floor": "2026-11-21T12:00:00Z"}',
        b'{"version": 1, "watermark": "2026-11-21T12:00:00Z", "floor": "2026-11-21T12:00:00Z", "seen": {"a": 5}}',
        b'{"version": 1, "watermark": "2026-11-21T12:00:00Z", "floor": "2026-11-21T12:00:00Z", "since_id": {"x": 1}}',
        b'{"version": 1, "watermark": "2026-11-21T12:00:00Z", "floor": "2026-11-21T12:00:00Z", '
        b'"since_id": "1", "since_id_created_at": 5}',
        b'{"version": 1, "watermark": "2026-11-21T12:00:00Z", "floor": "2026-11-21T12:00:00Z", "undated": 1}',
        b'{"version": 1, "watermark": "2026-11-21T12:00:00Z", "floor": "2026-11-21T12:00:00Z", "undated": "yes"}',
        b"null",
        b'"a string"',
    ],
)
def test_a_state_that_cannot_be_read_back_is_a_checkpoint_error(text: bytes) -> None:
    with pytest.raises(CheckpointError) as info:
        PollState.from_json(text)
    assert isinstance(info.value, SportsPostsError)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=25,
)
_stamps = st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()) | st.text(max_size=30)
_state_like = st.fixed_dictionaries(
    {},
    optional={
        "version": st.sampled_from([1, 2, True, 1.0, "1"]) | _json,
        "watermark": _stamps | _json,
        "floor": _stamps | _json,
        "seen": st.dictionaries(st.text(max_size=8), _stamps | _json, max_size=4) | _json,
        "since_id": st.text(max_size=8) | _json,
        "since_id_created_at": _stamps | _json,
        "undated": st.booleans() | _json,
    },
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(_json, _state_like).map(json.dumps) | st.binary(max_size=64))
def test_any_stored_text_reads_back_or_is_a_checkpoint_error(text: Any) -> None:
    try:
        state = PollState.from_json(text)
    except CheckpointError:
        return
    assert PollState.from_json(state.to_json()) == state


def test_a_malformed_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(b"[" * 200_000)
    with pytest.raises(CheckpointError, match="deep.json.*delete the file"):
        FileCheckpoint(path).load()
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(CheckpointError, match="dir.json"):
        FileCheckpoint(tmp_path / "dir.json").load()


# -- a watermark in the future ----------------------------------------------------------


@pytest.mark.parametrize("ahead", [timedelta(minutes=5, seconds=1) + MAX_CORRECTION, timedelta(days=365 * 3)])
def test_a_watermark_ahead_of_the_clock_is_refused_before_any_call(
    client: Any, service: FakePostsService, harness: TimeHarness, ahead: timedelta
) -> None:
    """Resuming from it would skip every post up to that time, in silence; no clock skew the
    service could show would excuse it, so no call is spent to ask."""
    future = PollState.start(T0 + ahead)
    checkpoint = MemoryCheckpoint(future)
    poller = make_poller(client, harness, interval=30, checkpoint=checkpoint)
    with pytest.raises(CheckpointError, match=r"ahead of the clock .*allowance for clock skew is 0:05:00"):
        next(iter(poller))
    assert service.requests == []
    assert checkpoint.load() == future, "the refused state is left for a person to look at"


@pytest.mark.parametrize("dated", [False, True])
def test_a_watermark_ahead_of_the_clock_is_judged_by_the_service_clock_after_one_call(
    client: Any, service: FakePostsService, harness: TimeHarness, dated: bool
) -> None:
    """Ahead of this machine's clock by less than a skew could explain: the first answer's
    Date shows the service's clock, which agrees here (or no Date: this clock), so refused
    after that one call, with nothing delivered or saved."""
    service.dated = dated
    service.publish("p1", 10.0)
    future = PollState.start(T0 + timedelta(minutes=5, seconds=1))
    checkpoint = MemoryCheckpoint(future)
    poller = make_poller(client, harness, interval=30, checkpoint=checkpoint)
    with pytest.raises(CheckpointError, match=r"ahead of the clock"):
        next(iter(poller))
    assert len(service.requests) == 1
    assert checkpoint.load() == future


def test_a_watermark_within_the_skew_allowance_resumes(
    client: Any, service: FakePostsService, harness: TimeHarness
) -> None:
    service.publish("late", 400.0)
    harness.clock.advance(600)
    checkpoint = MemoryCheckpoint(PollState.start(T0 + timedelta(seconds=600 + 299)))
    harness.until = T0 + timedelta(seconds=700)
    list(make_poller(client, harness, interval=30, checkpoint=checkpoint))
    assert service.requests, "a state 4m59s ahead is clock skew, not a broken checkpoint"


def test_a_future_watermark_in_a_file_is_refused(
    tmp_path: Path, client: Any, service: FakePostsService, harness: TimeHarness
) -> None:
    path = tmp_path / "nfl.json"
    FileCheckpoint(path).save(PollState.start(T0 + timedelta(days=2)))
    with pytest.raises(CheckpointError, match="delete it"):
        next(iter(make_poller(client, harness, checkpoint=FileCheckpoint(path))))
    assert service.requests == []


def test_every_checkpoint_satisfies_the_protocol(tmp_path: Path, redis_url: str) -> None:
    for checkpoint in (
        MemoryCheckpoint(),
        FileCheckpoint(tmp_path / "c.json"),
        RedisCheckpoint(redis_url, key="k"),
    ):
        assert isinstance(checkpoint, Checkpoint)


# -- FileCheckpoint -----------------------------------------------------------------------------


def test_file_checkpoint_round_trips_and_starts_empty(tmp_path: Path) -> None:
    checkpoint = FileCheckpoint(tmp_path / "sub" / "nfl.json")
    assert checkpoint.load() is None
    checkpoint.save(STATE)
    assert FileCheckpoint(tmp_path / "sub" / "nfl.json").load() == STATE
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["nfl.json"]


def test_a_corrupt_checkpoint_file_names_the_file_and_the_way_out(tmp_path: Path) -> None:
    path = tmp_path / "nfl.json"
    path.write_bytes(b'{"version": 1, "waterm')
    with pytest.raises(CheckpointError, match="nfl.json.*delete the file"):
        FileCheckpoint(path).load()


def test_a_failure_in_the_middle_of_a_write_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "nfl.json"
    checkpoint = FileCheckpoint(path)
    checkpoint.save(STATE)

    def interrupted(src: Any, dst: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        checkpoint.save(PollState.start(T0))
    monkeypatch.undo()
    assert checkpoint.load() == STATE
    assert [p.name for p in tmp_path.iterdir()] == ["nfl.json"]  # the temp file was removed


def test_a_stray_temp_file_from_a_killed_writer_is_ignored_then_removed(tmp_path: Path) -> None:
    path = tmp_path / "nfl.json"
    FileCheckpoint(path).save(STATE)
    (tmp_path / ".nfl.json.abc123.tmp").write_bytes(b'{"version": 1, "wat')
    assert FileCheckpoint(path).load() == STATE
    FileCheckpoint(path).save(STATE)
    assert [p.name for p in tmp_path.iterdir()] == ["nfl.json"]


def test_file_checkpoint_survives_sigkill_in_the_middle_of_writes(tmp_path: Path) -> None:
    """A child process saves as fast as it can; it is killed at an arbitrary point."""
    path = tmp_path / "nfl.json"
    script = textwrap.dedent(
        f"""
        import sys
        from datetime import timedelta
        from sports_posts import FileCheckpoint, PollState
        from sports_posts.polling._state import _parse_iso
        start = _parse_iso("2026-11-21T12:00:00Z", "t")
        checkpoint = FileCheckpoint({str(path)!r})
        seen = {{f"id{{n}}": start + timedelta(seconds=n) for n in range(2000)}}
        n = 0
        while True:
            n += 1
            checkpoint.save(PollState(start + timedelta(seconds=n), start, seen))
            if n == 20:
                print("ready", flush=True)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"ready"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    state = FileCheckpoint(path).load()  # never torn: an old or a new state, complete
    assert state is not None and len(state.seen) == 2000
    assert state.watermark >= T0 + timedelta(seconds=20)


# -- RedisCheckpoint (a real redis-server) ------------------------------------------------------


def test_redis_checkpoint_round_trips(redis_client: Any) -> None:
    checkpoint = RedisCheckpoint(redis_client, key="sp:nfl")
    assert checkpoint.load() is None
    checkpoint.save(STATE)
    checkpoint.save(STATE)
    fresh = RedisCheckpoint(redis_client, key="sp:nfl")
    assert fresh.load() == STATE
    assert json.loads(redis_client.hget("sp:nfl", "state"))["version"] == 1


def test_redis_checkpoint_is_importable_without_redis_and_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code = "import sys; sys.modules['redis'] = None; import sports_posts; print(sports_posts.RedisCheckpoint.__name__)"
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "RedisCheckpoint"
    )
    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(StoreError, match=r"pip install 'sports-posts\[redis\]'"):  # the one missing-extra error
        RedisCheckpoint("redis://127.0.0.1:1/0")


def test_redis_checkpoint_accepts_a_url(redis_url: str, redis_client: Any) -> None:
    RedisCheckpoint(redis_url, key="sp:url").save(STATE)
    assert RedisCheckpoint(redis_client, key="sp:url").load() == STATE


def test_two_workers_on_one_redis_key_are_detected(redis_client: Any) -> None:
    first = RedisCheckpoint(redis_client, key="sp:shared")
    second = RedisCheckpoint(redis_client, key="sp:shared")
    assert first.load() is None and second.load() is None
    first.save(STATE)
    with pytest.raises(CheckpointConflictError):
        second.save(PollState.start(T0))
    assert RedisCheckpoint(redis_client, key="sp:shared").load() == STATE


def test_a_corrupt_redis_checkpoint_is_a_checkpoint_error(redis_client: Any) -> None:
    redis_client.hset("sp:bad", mapping={"state": "{oops", "generation": "3"})
    with pytest.raises(CheckpointError, match="sp:bad"):
        RedisCheckpoint(redis_client, key="sp:bad").load()


def test_poller_restarts_from_redis_checkpoint_without_loss(
    redis_client: Any, client: Any, service: FakePostsService, harness: TimeHarness
) -> None:
    for n in range(30):
        service.publish(f"p{n:02d}", 10.0 * n + 1, delay=(n % 3) * 40.0)
    harness.until = T0 + timedelta(seconds=150)
    first = list(
        make_poller(
            client,
            harness,
            since=T0,
            interval=30,
            checkpoint=RedisCheckpoint(redis_client, key="sp:nfl"),
        )
    )
    harness.until = T0 + timedelta(seconds=900)
    second = list(
        make_poller(
            client,
            harness,
            since=T0,
            interval=30,
            checkpoint=RedisCheckpoint(redis_client, key="sp:nfl"),
        )
    )
    everything = ids(first) + ids(second)
    assert first and second
    assert sorted(everything) == sorted(service.posts)


@pytest.mark.anyio
async def test_async_poller_restarts_from_file_checkpoint_without_loss(
    tmp_path: Path, service: FakePostsService, harness: TimeHarness
) -> None:
    for n in range(30):
        service.publish(f"p{n:02d}", 10.0 * n + 1, delay=(n % 3) * 40.0)
    path = tmp_path / "nfl.json"
    http = httpx.AsyncClient(transport=httpx.MockTransport(service.handler))
    async with AsyncSportsPosts(
        api_key="sk_test_poller", base_url="https://fake.sports-posts.test/v1", http_client=http
    ) as aclient:
        delivered: list[list[str]] = []
        poller = make_async_poller(
            aclient, harness, since=T0, interval=30, checkpoint=FileCheckpoint(path)
        )
        with pytest.raises(KeyboardInterrupt):
            async with poller:  # ends the poller (and frees its file) without committing
                async for batch in poller:
                    delivered.append([p.id for p in batch])
                    if len(delivered) == 3:
                        raise KeyboardInterrupt
        restarted = make_async_poller(
            aclient, harness, since=T0, interval=30, checkpoint=FileCheckpoint(path)
        )
        harness.until = T0 + timedelta(seconds=900)
        after = [[p.id for p in b] async for b in restarted]
    await http.aclose()
    everything = [i for b in delivered + after for i in b]
    assert set(everything) == set(service.posts)
    assert sorted(i for i in set(everything) if everything.count(i) > 1) == sorted(delivered[-1])
