"""The package uses only the public API of the libraries it runs on (issue 52): no private
attribute of theirs read or written, no dunder of theirs written, no pydantic or asyncio
internals, no process-wide collector toggled.

Read from the source: a name that starts with one underscore, read on anything but
``self`` or ``cls``, must be one the package itself defines; otherwise it belongs to
another library. The behaviour these rules protect is tested where it lives (the sync
deadline through httpcore's public pool in tests/client/hostile, a page's posts filled
by pydantic's own hook in tests/models).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import sports_posts

PACKAGE = Path(sports_posts.__file__).parent

INTERNALS = re.compile(r"^(__pydantic_\w+__|_asyncio_\w*|__globals__)$")
"""Attributes that are always another library's internals (pydantic's model machinery,
asyncio's future protocol, a function's module globals)."""

NAMEDTUPLE = {"_replace", "_asdict", "_fields", "_make"}
"""A named tuple's documented methods: public, though they start with an underscore."""

PYTHON = {"__traceback__", "__context__", "__cause__", "__suppress_context__", "__annotations__", "__doc__",
          "__name__", "__qualname__", "__module__", "__signature__", "__wrapped__"}
"""Dunders the language defines on every exception or function: writing them is public."""

NOT_YET: dict[str, str] = {}
"""Modules not yet cleared (issue 52 lists them): delete the entry with the change that clears one."""


def _trees() -> dict[str, ast.Module]:
    return {path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted(PACKAGE.rglob("*.py"))}


def _defined(trees: dict[str, ast.Module]) -> set[str]:
    """Every name the package defines: functions, classes, assigned names and attributes,
    slots, import aliases."""
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    for part in ast.walk(target):  # a write on another object defines nothing
                        if isinstance(part, ast.Name):
                            names.add(part.id)
                        elif isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) \
                                and part.value.id in ("self", "cls"):
                            names.add(part.attr)
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
                ):
                    names |= {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)
                              and isinstance(c.value, str)}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {alias.asname or alias.name for alias in node.names}
    return names


def _annotations(tree: ast.Module) -> set[int]:
    """The nodes inside annotations: read by type checkers, never run."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        found: list[ast.AST | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            found = [node.returns, *(a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])]
            found += [args.vararg.annotation if args.vararg else None, args.kwarg.annotation if args.kwarg else None]
        elif isinstance(node, ast.AnnAssign):
            found = [node.annotation]
        for annotation in found:
            if annotation is not None:
                inside |= {id(part) for part in ast.walk(annotation)}
    return inside


def _surgery(trees: dict[str, ast.Module]) -> list[str]:
    defined = _defined(trees)
    found = []
    for name, tree in trees.items():
        typing_only = _annotations(tree)
        for node in ast.walk(tree):
            where = f"{name}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "gc" and \
                    node.func.attr in ("disable", "enable", "freeze", "set_threshold"):
                found.append(f"{where} gc.{node.func.attr}()")
            if isinstance(node, ast.Call) and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                    and isinstance(node.args[1].value, str) and INTERNALS.match(node.args[1].value) \
                    and ast.unparse(node.func) in ("setattr", "object.__setattr__", "getattr"):
                found.append(f"{where} {ast.unparse(node.func)}(..., {node.args[1].value!r})")
            if not isinstance(node, ast.Attribute) or id(node) in typing_only:
                continue
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            attr = node.attr
            if INTERNALS.match(attr):
                found.append(f"{where} .{attr}")
            elif attr.startswith("__") and attr.endswith("__"):
                if isinstance(node.ctx, ast.Store) and owner not in ("self", "cls") and attr not in PYTHON:
                    found.append(f"{where} writes {owner or '...'}.{attr}")
            elif attr.startswith("_") and owner not in ("self", "cls") and attr not in defined \
                    and attr not in NAMEDTUPLE:
                found.append(f"{where} {owner or '...'}.{attr}")
    return found


def test_the_package_reaches_into_no_other_library() -> None:
    found = [line for line in _surgery(_trees()) if line.split(":")[0] not in NOT_YET]
    assert found == []


def test_the_scan_finds_each_kind_of_surgery() -> None:
    """The rules catch what issue 52 removed: httpx's and httpcore's private attributes,
    pydantic's validator swapped and its completion flag flipped, asyncio's future flag, the
    collector toggled; and they let the package's own private names and a named tuple's
    ``_replace`` through."""
    removed = '''
import gc
def deadline_client(client, stack, url, PostsResponse, validator, waited, get_tracer):
    pool = client._transport._pool
    pool._network_backend = stack
    client._mounts.values()
    url._uri_reference._replace(query="a")
    PostsResponse.__pydantic_complete__ = False
    PostsResponse.__pydantic_validator__ = validator
    waited._asyncio_future_blocking = False
    get_tracer.__globals__["_TRACER_PROVIDER"]
    object.__setattr__(PostsResponse, "__pydantic_complete__", True)
    gc.disable()
'''
    ours = '''
class Pool:
    __slots__ = ("_slot",)
    def __init__(self):
        self._kept = 1
    def _own(self):
        return 2
def use(pool: "argparse._SubParsersAction", parts):
    return pool._kept, pool._own(), pool._slot, parts._replace(query=""), type(pool).__name__
'''
    found = _surgery({"removed.py": ast.parse(removed), "ours.py": ast.parse(ours)})
    assert all(line.startswith("removed.py:") for line in found), found
    kinds = {line.split(" ", 1)[1] for line in found}
    assert {"client._transport", "...._pool", "pool._network_backend", "client._mounts", "url._uri_reference",
            ".__pydantic_complete__", ".__pydantic_validator__", "._asyncio_future_blocking", ".__globals__",
            "gc.disable()", "object.__setattr__(..., '__pydantic_complete__')"} <= kinds, kinds
