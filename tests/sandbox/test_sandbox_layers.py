"""The sandbox's modules import one way: no module imports one that imports it back."""

from __future__ import annotations

import ast
from pathlib import Path

import sports_posts.sandbox

PACKAGE = Path(sports_posts.sandbox.__file__).parent


def imports(path: Path, package: Path) -> set[str]:
    """Modules of ``package`` that ``path`` imports anywhere: top level, in functions, under TYPE_CHECKING."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sports_posts.sandbox."):
            found.add((node.module or "").split(".")[2])
    return {name for name in found if (package / f"{name}.py").exists()}


def graph_of(package: Path) -> dict[str, set[str]]:
    return {path.stem: imports(path, package) for path in package.glob("*.py") if path.stem != "__init__"}


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(a, b) for every import a -> b from which a can be reached again."""
    def reaches(start: str, target: str) -> bool:
        seen: set[str] = set()
        todo = [start]
        while todo:
            name = todo.pop()
            if name == target:
                return True
            if name not in seen:
                seen.add(name)
                todo.extend(graph.get(name, ()))
        return False

    return sorted((a, b) for a, deps in graph.items() for b in deps if reaches(b, a))


def test_no_sandbox_module_imports_one_that_imports_it_back() -> None:
    graph = graph_of(PACKAGE)
    assert {"service", "query"} <= graph["app"]  # the walk sees the app's imports
    assert cycles(graph) == []


def test_the_check_sees_a_cycle_hidden_under_type_checking(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import y\n")
    (tmp_path / "c.py").write_text("def f():\n    from .a import x\n")
    assert cycles(graph_of(tmp_path)) == [("a", "b"), ("b", "a")]
