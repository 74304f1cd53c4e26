"""``python -m sports_posts`` runs the same CLI as the ``sports-posts`` console script."""

from __future__ import annotations

import subprocess
import sys


def test_python_m_sports_posts_runs_the_cli() -> None:
    done = subprocess.run([sys.executable, "-m", "sports_posts", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: sports-posts ")
    bad = subprocess.run([sys.executable, "-m", "sports_posts", "no-such-command"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr  # argparse's own refusal, from the CLI
