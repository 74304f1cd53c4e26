"""Every name a block of the docs imports from the SDK lives where the block says.

Runnable blocks would fail on a wrong import anyway; fragments (``<!-- fragment -->``) are
only compiled, and a reader pastes their imports all the same.
"""

from __future__ import annotations

import ast
import importlib

from .snippets import collect


def _sdk_imports() -> list[tuple[str, str, str]]:
    """(block id, module, name) of each ``from sports_posts... import name`` in the docs."""
    found = []
    for snippet in collect()[0]:
        if snippet.language == "pycon":
            continue
        for node in ast.walk(ast.parse(snippet.code)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sports_posts":
                found += [(snippet.id, str(node.module), alias.name) for alias in node.names]
    return found


def _lives_in(module: str, name: str) -> bool:
    imported = importlib.import_module(module)
    if name in getattr(imported, "__all__", ()) or hasattr(imported, name):
        return True
    try:
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return False
    return True


def test_every_sdk_name_a_block_imports_lives_there() -> None:
    imports = _sdk_imports()
    assert any(name == "Lease" for _, _, name in imports), "docs/fleet.md imports Lease"
    wrong = [f"{where}: from {module} import {name}" for where, module, name in imports if not _lives_in(module, name)]
    assert not wrong, "imports from where the name does not live:\n" + "\n".join(wrong)
