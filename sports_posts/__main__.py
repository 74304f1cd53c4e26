"""``python -m sports_posts``: the ``sports-posts`` command, where the console script is not on PATH."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
