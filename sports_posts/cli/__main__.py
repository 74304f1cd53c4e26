"""``python -m sports_posts.cli``: the ``sports-posts`` command, as ``python -m sports_posts`` runs it."""

from __future__ import annotations

from . import main

if __name__ == "__main__":
    raise SystemExit(main())
