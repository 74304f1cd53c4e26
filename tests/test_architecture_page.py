"""docs/architecture.md is the package's map: it names every module, and only modules that exist.

A module is named in backticks by its path under ``sports_posts/`` (`_client.py`,
`cli/_common.py`, `webhooks/dedupe/redis.py`), a package by its folder (`webhooks/`, for its
``__init__.py``). Paths of the repository outside the package start with their own folder
(`tests/...`, `benchmarks/...`, `examples/...`, `docs/...`) and are not checked here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import sports_posts

PACKAGE = Path(sports_posts.__file__).parent
PAGE = PACKAGE.parent / "docs" / "architecture.md"
NAMED = re.compile(r"`(?:sports_posts/)?((?:[A-Za-z_][A-Za-z0-9_]*/)*(?:[A-Za-z_][A-Za-z0-9_]*\.py|[A-Za-z_][A-Za-z0-9_]*/))`")
ELSEWHERE = ("tests/", "benchmarks/", "examples/", "docs/", "support/", ".ci/")


def _modules() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        name = path.relative_to(PACKAGE).as_posix()
        found.add(name[: -len("__init__.py")] if path.name == "__init__.py" else name)
    return found


def _named() -> set[str]:
    names = set()
    for match in NAMED.finditer(PAGE.read_text(encoding="utf-8")):
        name = match.group(1)
        if not name.startswith(ELSEWHERE):
            names.add(name[: -len("__init__.py")] if name.endswith("__init__.py") else name)
    return names


def test_the_page_names_only_modules_that_exist() -> None:
    assert sorted(_named() - _modules()) == []


def test_the_page_leaves_no_module_out() -> None:
    assert sorted(_modules() - _named()) == []


def test_the_root_reads_like_a_table_of_contents() -> None:
    root = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(root) <= 20, root


def test_the_layer_contract_places_every_top_level_module() -> None:
    text = (PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8")
    block = text[text.index("[[tool.importlinter.contracts]]"):]
    block = block[block.index("layers = ["): block.index("]", block.index("layers = ["))]
    placed = set(re.findall(r"sports_posts\.(\w+)", block))
    top = {p.stem for p in PACKAGE.glob("*.py")} | {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert sorted(top - placed - {"__init__", "__main__"}) == []


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_imports_another_modules_private_name() -> None:
    # ``from .x import _name``, ``x._name`` on an imported module, ``Name._attr`` on an
    # imported class: a name shared between modules is public in an internal module.
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module, is_package = _module_name(path), path.name == "__init__.py"
        modules: dict[str, str] = {}
        imported: dict[str, str] = {}
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = module.split(".") if is_package else module.split(".")[:-1]
                source = node.module or ""
                if node.level:
                    base = base[: len(base) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                if not source.startswith("sports_posts"):
                    continue
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    target = PACKAGE.parent / full.replace(".", "/")
                    if target.with_suffix(".py").exists() or (target / "__init__.py").exists():
                        modules[alias.asname or alias.name] = full
                    else:
                        imported[alias.asname or alias.name] = source
                        if _private(alias.name) and source != module:
                            found.append(f"{module}:{node.lineno} imports {full}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("sports_posts") and alias.asname:
                        modules[alias.asname] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name):
                owner = modules.get(node.value.id) or imported.get(node.value.id)
                if owner is not None and owner != module:
                    found.append(f"{module}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert found == []
