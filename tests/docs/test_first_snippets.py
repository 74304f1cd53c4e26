"""The first code a reader pastes spends a bounded number of calls: a first loop that walked
every page would cost 17 calls against the sandbox.

Each first snippet runs in this process against a fresh sandbox named by the environment;
a snippet that starts its own sandbox (``sb``) is counted on that one too.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator

import pytest

from sports_posts.sandbox import Sandbox

from .snippets import Snippet, collect

SNIPPETS, _ = collect()

# (page, a line of the block, the most calls it may make): the first blocks a reader runs
FIRST = [
    ("README.md", 'client.posts.list(leagues="NFL", highlight=True, limit=50)', 1),
    ("docs/getting-started.md", 'page = client.posts.list(leagues="NFL", highlight=True, limit=50)', 1),
    ("docs/getting-started.md", "page.iter_items(max_items=120)", 3),
    ("docs/index.md", 'client.posts.list(leagues="NFL", highlight=True, limit=5)', 1),
]


def _block(page: str, line: str) -> Snippet:
    found = [s for s in SNIPPETS if s.page == page and line in s.code and not s.fragment]
    assert len(found) == 1, f"{page}: no single runnable block holds {line!r}"
    return found[0]


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    with Sandbox(seed=7) as sb:
        monkeypatch.setenv("SPORTS_POSTS_API_KEY", sb.api_key)
        monkeypatch.setenv("SPORTS_POSTS_BASE_URL", sb.base_url)
        yield sb


@pytest.mark.parametrize(("page", "line", "most"), FIRST, ids=[f"{p}:{m}" for p, _, m in FIRST])
def test_a_first_snippet_spends_a_bounded_number_of_calls(service: Sandbox, page: str, line: str,
                                                          most: int) -> None:
    block = _block(page, line)
    namespace: dict[str, object] = {"__name__": "__main__"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block.source, block.id, "exec"), namespace)
    for name in ("client",):
        closing = getattr(namespace.get(name), "close", None)
        if callable(closing):
            closing()
    own = namespace.get("sb")
    calls = service.calls() + (own.calls() if isinstance(own, Sandbox) else 0)
    assert 1 <= calls <= most, f"{block.id} made {calls} calls"
    assert printed.getvalue(), f"{block.id} printed nothing"
