"""The command line's tests: ``run`` calls ``main`` in-process and returns (status, stdout, stderr),
and no test sees a service, key or webhook secret from the environment it runs in."""

from __future__ import annotations

import io
from typing import Optional

import pytest

from sports_posts.cli import main


def run(*argv: str, err: Optional[io.StringIO] = None) -> tuple[int, str, str]:
    """``sports-posts ARGV...`` in this process, its output captured (``err``: a stream of the test's own)."""
    out, err = io.StringIO(), err if err is not None else io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def no_service_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key, URL or secret in the developer's shell never reaches a test."""
    for name in ("SPORTS_POSTS_API_KEY", "SPORTS_POSTS_BASE_URL", "SPORTS_POSTS_WEBHOOK_SECRET"):
        monkeypatch.delenv(name, raising=False)
