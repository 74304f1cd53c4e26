"""``sports-posts poll`` on a checkpoint written for other filters."""

from __future__ import annotations

from pathlib import Path

from .conftest import run


def poll(league: str, checkpoint: Path, *extra: str) -> tuple[int, str, str]:
    return run("poll", "--leagues", league, "--since", "2000-01-01T00:00:00Z", "--max-batches", "1",
               "--checkpoint", str(checkpoint), "--json", *extra)


def test_a_checkpoint_of_another_league_is_refused_and_says_what_differs(tmp_path: Path) -> None:
    """The old command polled NBA from an NFL checkpoint and printed none of its posts."""
    checkpoint = tmp_path / "feed.json"
    status, out, err = poll("NFL", checkpoint)
    assert status == 0 and out, err
    status, out, err = poll("NBA", checkpoint)
    assert status != 0 and out == ""
    assert "leagues: stored 'NFL', now 'NBA'" in err
    assert "its own checkpoint" in err

