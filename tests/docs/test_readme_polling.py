"""The README's polling block, run twice in one directory as a reader tries it again."""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from ..zygote import CLIENT, shared
from .snippets import collect, install_loopback_guard, run

# Long enough for both runs of the block to end on their own: a block that waited for a post
# that is not coming would be killed here instead.
TIMEOUT = 60.0


def test_the_readme_polling_block_ends_on_a_second_run_with_nothing_new(tmp_path: Path) -> None:
    from sports_posts.sandbox import Sandbox

    [block] = [s for s in collect()[0] if s.page == "README.md" and 'FileCheckpoint("nfl.json")' in s.code]
    # a manual clock: no post is published between the runs, the worst case for a resume
    guard, workdir = tmp_path / "guard", tmp_path / "work"
    guard.mkdir()
    workdir.mkdir()
    start = datetime.now(timezone.utc).replace(microsecond=0)
    with Sandbox(seed=7, clock="manual", start=start) as sandbox:
        env = {name: os.environ[name] for name in ("PATH", "LANG", "TZ") if name in os.environ}
        env.update(SPORTS_POSTS_BASE_URL=sandbox.base_url, SPORTS_POSTS_API_KEY=sandbox.api_key,
                   HOME=str(workdir), PYTHONPATH=install_loopback_guard(guard))
        first = run(block, workdir, env, sys.executable, TIMEOUT, shared(CLIENT))
        second = run(block, workdir, env, sys.executable, TIMEOUT, shared(CLIENT))
    assert first.ok and "new posts" in first.output, first.output
    assert second.ok, second.output  # it stopped waiting for a post that was not coming
    assert "new posts" not in second.output  # the checkpoint held: nothing delivered twice
