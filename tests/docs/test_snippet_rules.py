"""The conventions that tests/docs/test_snippets.py applies to the documentation's blocks,
checked on small pages of their own."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .snippets import Snippet, SnippetError, install_loopback_guard, parse, run

PAGE = """\
Intro.

```python
x = 1
```

<!-- fragment -->
```python
def signature(*, a=1) -> int: ...
```

```bash
echo not python
```

<!-- continues -->
```py
print(x + 1)
```

- a list item

    ```python title="mod.py"
    VALUE = 3
    ```

```pycon
>>> 1 + 1
2
```
"""


def test_blocks_are_found_with_their_markers_lines_and_titles() -> None:
    blocks = list(parse("page.md", PAGE))
    assert [(b.id, b.language, b.fragment) for b in blocks] == [
        ("page.md:3", "python", False),
        ("page.md:8", "python", True),
        ("page.md:17", "py", False),
        ("page.md:23", "python", False),
        ("page.md:27", "pycon", False),
    ]
    # a continuation runs after the previous runnable block: the fragment between is skipped
    assert blocks[2].source == "x = 1\n\nprint(x + 1)\n"
    # an indented block is dedented to its fence
    assert blocks[3].code == "VALUE = 3\n" and blocks[3].title == "mod.py"
    assert not blocks[3].is_test_file


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<!-- fragment -->\nnot a fence\n", "page.md:1: <!-- fragment --> is not followed by a fence"),
        ("<!-- continues -->\n\n```python\nx\n```\n", "is not followed by a fence"),
        ("<!-- fragment -->\n```bash\nls\n```\n", "before a bash block"),
        ("<!-- continues -->\n```python\nx = 1\n```\n", "no runnable block is above"),
        ("```python\nx = 1\n", "page.md:1: the fence is never closed"),
    ],
)
def test_a_misplaced_marker_or_an_open_fence_is_an_error(text: str, message: str) -> None:
    with pytest.raises(SnippetError, match=message.replace("(", r"\(")):
        list(parse("page.md", text))


def test_a_marker_inside_a_block_is_code() -> None:
    blocks = list(parse("page.md", "```python\n# <!-- fragment -->\nx = 1\n```\n"))
    assert len(blocks) == 1 and not blocks[0].fragment


def _env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path),
            "PYTHONPATH": install_loopback_guard(tmp_path)}


def _one(text: str) -> Snippet:
    return next(iter(parse("page.md", text)))


def test_a_failing_block_fails_with_its_output(tmp_path: Path) -> None:
    outcome = run(_one("```python\nraise SystemExit('the docs are wrong')\n```\n"),
                  tmp_path, _env(tmp_path), sys.executable, 60)
    assert not outcome.ok and "the docs are wrong" in outcome.output


def test_a_hung_block_is_killed_at_its_timeout(tmp_path: Path) -> None:
    block = _one("```python\nimport threading\nthreading.Event().wait()\n```\n")
    outcome = run(block, tmp_path, _env(tmp_path), sys.executable, 0.5)
    assert outcome.returncode is None and "killed after 0.5 s" in outcome.output


def test_a_block_reaches_loopback_only(tmp_path: Path) -> None:
    code = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('192.0.2.1', 80), timeout=5)\n"
        "except OSError as e:\n"
        "    print('refused:', e)\n"
        "try:\n"
        "    socket.getaddrinfo('example.com', 443)\n"
        "except OSError as e:\n"
        "    print('refused:', e)\n"
        "with socket.socket() as s:\n"
        "    s.bind(('127.0.0.1', 0))\n"
        "    s.listen()\n"
        "    socket.create_connection(s.getsockname(), timeout=5).close()\n"
        "print('loopback ok')\n"
    )
    outcome = run(_one(f"```python\n{code}```\n"), tmp_path, _env(tmp_path), sys.executable, 60)
    assert outcome.ok, outcome.output
    assert outcome.output.count("allows loopback only") + outcome.output.count(
        "resolves loopback only") == 2
    assert "loopback ok" in outcome.output


def test_a_pycon_block_must_print_what_it_shows(tmp_path: Path) -> None:
    good = _one("```pycon\n>>> print(2 + 2)\n4\n```\n")
    bad = _one("```pycon\n>>> print(2 + 2)\n5\n```\n")
    assert run(good, tmp_path, _env(tmp_path), sys.executable, 60).ok
    outcome = run(bad, tmp_path, _env(tmp_path), sys.executable, 60)
    assert not outcome.ok and "Expected:" in outcome.output


def test_a_test_file_block_runs_under_pytest(tmp_path: Path) -> None:
    block = _one('```python title="test_fails.py"\ndef test_it():\n    assert 1 == 2\n```\n')
    outcome = run(block, tmp_path, _env(tmp_path), sys.executable, 60)
    assert not outcome.ok and "1 failed" in outcome.output


COSTED = """\
```python
page = list_posts()  # costs: 1 call
for post in page.iter_items(max_items=120):  # costs: up to 2 calls
    pass
```

<!-- continues -->
```python
# costs: no calls: refused before sending
```

```python
print("nothing billed")
```
"""


def test_costs_comments_add_up_along_continued_blocks() -> None:
    first, second, third = parse("costs.md", COSTED)
    assert (first.own_cost, first.stated_cost) == (3, 3)
    assert (second.own_cost, second.stated_cost) == (0, 3)
    assert (third.own_cost, third.stated_cost) == (None, None)
