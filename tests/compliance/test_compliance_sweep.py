"""The compliance sweep: each id of GET /account/x-ids handed to the customer's delete once,
across restarts, on every checkpoint kind; a failing delete stops the sweep unmarked."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from sports_posts import (
    AsyncSportsPosts,
    CheckpointError,
    ComplianceList,
    ComplianceSweepError,
    FileCheckpoint,
    MemoryCheckpoint,
    ParameterError,
    PollState,
    RedisCheckpoint,
    SportsPosts,
)
from sports_posts.cli import main
from sports_posts.resources.compliance import SAVE_EVERY, cadence_for_plan, state_of, to_delete
from sports_posts.sandbox import Sandbox

AS_OF = datetime(2026, 1, 5, tzinfo=timezone.utc)


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(seed=3, clock="manual") as sb:
        yield sb


def listed(sb: Sandbox) -> list[str]:
    return [p.id for p in sb.world.deleted_posts(sb.now())]


def client_of(sb: Sandbox) -> SportsPosts:
    return SportsPosts(api_key=sb.api_key, base_url=sb.base_url)


# -- decisions ------------------------------------------------------------------------------


def test_to_delete_keeps_list_order_skips_handled_and_repeats() -> None:
    listing = ComplianceList(ids_to_delete=["a", "b", "a", "c"], as_of=AS_OF)
    assert to_delete(listing, {"b"}) == ["a", "c"]


def test_stored_state_forgets_ids_that_left_the_list() -> None:
    listing = ComplianceList(ids_to_delete=["a", "b"], as_of=AS_OF)
    state = state_of(listing, {"a", "b", "gone"})
    assert set(state.seen) == {"a", "b"} and state.watermark == AS_OF
    assert PollState.from_json(state.to_json()) == state  # the checkpoints' own format


def test_a_pollers_checkpoint_is_refused(sandbox: Sandbox) -> None:
    checkpoint = MemoryCheckpoint(PollState.start(AS_OF))
    with client_of(sandbox) as client, pytest.raises(CheckpointError, match="poller's state"):
        client.account.compliance_sweep(delete=lambda _: None, checkpoint=checkpoint)


@pytest.mark.parametrize("every", [0, 59.0, float("nan"), True, "1d", timedelta(days=32)])
def test_every_outside_a_minute_to_a_month_is_a_parameter_error(sandbox: Sandbox, every: object) -> None:
    with client_of(sandbox) as client, pytest.raises(ParameterError, match="every"):
        client.account.compliance_sweeper(delete=print, every=every)  # type: ignore[arg-type]


def test_cadence_is_daily_unless_a_plan_is_known_to_allow_longer() -> None:
    assert cadence_for_plan("paid") == cadence_for_plan("free") == cadence_for_plan(None) == timedelta(days=1)


# -- against the sandbox ----------------------------------------------------------------------


def test_sweep_deletes_exactly_the_sandboxs_deleted_posts_once_across_a_restart(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    path = tmp_path / "sweep.json"
    deleted: list[str] = []
    first = listed(sandbox)
    assert first  # the seeded world starts with deleted posts
    with client_of(sandbox) as client:
        result = client.account.compliance_sweep(delete=deleted.append, checkpoint=FileCheckpoint(path))
    assert deleted == first and result.deleted == tuple(first) and result.already_handled == 0

    # More posts are deleted; a new process (new client, same file) handles only those.
    visible = sandbox.visible_posts()
    sandbox.delete_post(visible[0].id)
    sandbox.delete_post(visible[1].id)
    sandbox.advance(1)
    with client_of(sandbox) as client:
        result = client.account.compliance_sweep(delete=deleted.append, checkpoint=FileCheckpoint(path))
        again = client.account.compliance_sweep(delete=deleted.append, checkpoint=FileCheckpoint(path))
    assert sorted(result.deleted) == sorted([visible[0].id, visible[1].id])
    assert result.already_handled == len(first) and again.deleted == ()
    assert sorted(deleted) == sorted(listed(sandbox)) and len(set(deleted)) == len(deleted)


def test_a_failing_delete_stops_the_sweep_and_that_id_is_tried_first_next_time(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ids = listed(sandbox)
    done: list[str] = []

    def flaky(post_id: str) -> None:
        if post_id == ids[2] and ids[2] not in failed:
            failed.append(post_id)
            raise ConnectionError("storage down")
        done.append(post_id)

    failed: list[str] = []
    checkpoint = FileCheckpoint(tmp_path / "sweep.json")
    with client_of(sandbox) as client:
        with pytest.raises(ComplianceSweepError) as caught:
            client.account.compliance_sweep(delete=flaky, checkpoint=checkpoint)
        assert caught.value.post_id == ids[2] and caught.value.deleted == tuple(ids[:2])
        assert isinstance(caught.value.__cause__, ConnectionError)
        result = client.account.compliance_sweep(delete=flaky, checkpoint=FileCheckpoint(tmp_path / "sweep.json"))
    assert result.deleted == tuple(ids[2:]) and done == ids


def test_handled_ids_are_saved_in_chunks_so_a_crash_repeats_few(sandbox: Sandbox) -> None:
    posts = sandbox.visible_posts()[: SAVE_EVERY + 5]
    for post in posts:
        sandbox.delete_post(post.id)
    sandbox.advance(1)
    saves: list[int] = []

    class Counting(MemoryCheckpoint):
        def save(self, state: PollState) -> None:
            saves.append(len(state.seen))
            super().save(state)

    with client_of(sandbox) as client:
        client.account.compliance_sweep(delete=lambda _: None, checkpoint=Counting())
    assert saves == [SAVE_EVERY, len(listed(sandbox))]


def test_run_forever_sweeps_on_the_cadence_until_stopped(sandbox: Sandbox) -> None:
    waits: list[float] = []
    deleted: list[str] = []
    with client_of(sandbox) as client:
        sweeper = client.account.compliance_sweeper(delete=deleted.append)

        def sleep(seconds: float) -> None:
            waits.append(seconds)
            sandbox.delete_post(sandbox.visible_posts()[0].id)
            sandbox.advance(1)
            if len(waits) == 2:
                sweeper.stop()

        sweeper._sleep = sleep
        sweeper.run_forever()
    assert waits == [86400.0, 86400.0] and sweeper.sweeps == 2
    assert deleted == listed(sandbox)[: len(deleted)] and len(deleted) == len(listed(sandbox)) - 1


@pytest.mark.anyio
async def test_async_sweep_awaits_a_coroutine_delete_and_resumes_from_a_file(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    deleted: list[str] = []

    async def delete(post_id: str) -> None:
        deleted.append(post_id)

    async with AsyncSportsPosts(api_key=sandbox.api_key, base_url=sandbox.base_url) as client:
        first = await client.account.compliance_sweep(delete=delete, checkpoint=FileCheckpoint(tmp_path / "s"))
        second = await client.account.compliance_sweep(delete=delete, checkpoint=FileCheckpoint(tmp_path / "s"))
    assert list(first.deleted) == deleted == listed(sandbox) and second.deleted == ()


def test_redis_and_postgres_checkpoints_keep_the_handled_ids(
    sandbox: Sandbox, redis_url: str, postgres_url: str
) -> None:
    from sports_posts.polling import PostgresCheckpoint

    key = f"test:sweep:{id(sandbox)}"
    for make in (lambda: RedisCheckpoint(redis_url, key=key), lambda: PostgresCheckpoint(postgres_url, key=key)):
        deleted: list[str] = []
        with client_of(sandbox) as client:
            client.account.compliance_sweep(delete=deleted.append, checkpoint=make())
            client.account.compliance_sweep(delete=deleted.append, checkpoint=make())
        assert deleted == listed(sandbox)


# -- the command --------------------------------------------------------------------------------


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


@pytest.fixture
def service(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", sandbox.api_key)
    monkeypatch.setenv("SPORTS_POSTS_BASE_URL", sandbox.base_url)
    return sandbox


def test_cli_prints_each_id_once_per_checkpoint(service: Sandbox, tmp_path: Path) -> None:
    cp = str(tmp_path / "sweep.json")
    status, out, err = run("compliance", "sweep", "--checkpoint", cp)
    assert status == 0 and out.split() == listed(service)
    assert f"{len(listed(service))} ids deleted, 0 handled" in err
    status, out, _ = run("compliance", "sweep", "--checkpoint", cp, "--json")
    assert status == 0 and json.loads(out)["deleted"] == [] and json.loads(out)["already_handled"] == len(
        listed(service))


def test_cli_command_runs_per_id_and_a_failure_is_retried_next_run(service: Sandbox, tmp_path: Path) -> None:
    log, cp = tmp_path / "deleted.txt", str(tmp_path / "sweep.json")
    ids = listed(service)
    script = tmp_path / "delete.py"
    script.write_text(
        "import sys\n"
        f"if sys.argv[1] == {ids[1]!r} and not __import__('os').path.exists({str(tmp_path / 'ok')!r}):\n"
        "    sys.exit(3)\n"
        f"open({str(log)!r}, 'a').write(sys.argv[1] + '\\n')\n"
    )
    command = f"{sys.executable} {script}"
    status, _, err = run("compliance", "sweep", "--checkpoint", cp, "--command", command)
    assert status == 1 and "ComplianceSweepError" in err and ids[1] in err
    assert log.read_text().split() == ids[:1]
    (tmp_path / "ok").touch()
    status, out, _ = run("compliance", "sweep", "--checkpoint", cp, "--command", command, "--json")
    assert status == 0 and json.loads(out)["deleted"] == ids[1:]
    assert log.read_text().split() == ids
