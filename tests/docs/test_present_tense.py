"""The guides describe what the package does; its history is in CHANGELOG.md alone.

A phrase that tells the story of a release ("the behaviour of earlier releases", "before
this, ...", "no longer") fails here, on every page of docs/ but the changelog, in the README
and in the command line's help.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .snippets import ROOT

HISTORY = re.compile(
    r"earlier releases?|previous releases?|older releases?|before this\b|no longer|used to\b|"
    r"\bpreviously\b|\bformerly\b|\bissue \d+|in this release|since (?:version|release)",
    re.IGNORECASE,
)
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md",
         *sorted(p for p in (ROOT / "docs").rglob("*.md") if p.name != "changelog.md")]


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_a_page_reads_in_the_present_tense(page: Path) -> None:
    found = [f"{page.name}:{n}: {line.strip()}" for n, line in
             enumerate(page.read_text(encoding="utf-8").splitlines(), 1) if HISTORY.search(line)]
    assert not found, "history belongs in CHANGELOG.md:\n" + "\n".join(found)


def test_the_sandbox_help_reads_in_the_present_tense() -> None:
    done = subprocess.run([sys.executable, "-m", "sports_posts", "sandbox", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "--profile" in done.stdout
    text = " ".join(done.stdout.split())
    assert not HISTORY.search(text), text
