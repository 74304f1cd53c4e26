"""The demo's output says what it shows: its game has posts (or it says why none), and a
batch listed in part says how many more it holds."""

from __future__ import annotations

import io
import re

import pytest

from sports_posts.cli import _demo
from sports_posts.cli._demo import run_demo


@pytest.mark.parametrize("seed", [7, 11])
def test_the_demos_game_has_posts_and_every_batch_adds_up(seed: int) -> None:
    out = io.StringIO()
    assert run_demo(out, seed=seed) == 0
    text = out.getvalue()
    game = text.split("== A game")[1].split("\n== ")[0]
    assert "(no posts)" not in game and len(game.strip().splitlines()) >= 2, game
    for batch in re.split(r"\n  batch ", text.split("== Polling")[1].split("\n== ")[0])[1:]:
        header, *lines = batch.splitlines()
        new = int(re.search(r": (\d+) new posts?$", header).group(1))  # type: ignore[union-attr]
        shown = [line for line in lines if line.startswith("  20")]
        more = [line for line in lines if line.startswith("  ... and ")]
        assert "post(s)" not in header
        if new > len(shown):
            assert more == [f"  ... and {new - len(shown)} more"], batch
        else:
            assert more == [] and new == len(shown)


def test_a_world_without_a_played_game_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_demo, "_a_played_game", lambda sb, league: None)
    out = io.StringIO()
    run_demo(out)
    game = out.getvalue().split("== A game")[1].split("\n== ")[0]
    assert "none played yet" in game and "(no posts)" not in game
