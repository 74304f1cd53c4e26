"""The package's shape: no module imports one that imports it back, each imports alone, and
none outside the sandbox passes 600 lines.

The layer order itself (params/models/errors below transport, below resources, pages and
pollers, below the clients, below the CLI and the sandbox) is import-linter's contract in
pyproject.toml, checked by ``lint-imports`` in CI.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import grimp

SCRIPT = """
import importlib, sys
failures = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "sports_posts" or m.startswith("sports_posts.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failures.append(f"{name}: {type(exc).__name__}: {exc}")
print("\\n".join(failures))
"""


def _graph() -> grimp.ImportGraph:
    # An import made only for type checkers never runs, so it cannot make a cycle.
    return grimp.build_graph("sports_posts", include_external_packages=False, exclude_type_checking_imports=True)


def test_no_module_imports_a_module_that_imports_it_back() -> None:
    graph = _graph()
    cycles = sorted(
        f"{module} <-> {imported}"
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if graph.find_shortest_chain(importer=imported, imported=module)
    )
    assert cycles == []


def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    modules = sorted(_graph().modules)
    assert "sports_posts._client" in modules and len(modules) > 40
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, *modules], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == ""


def test_no_circle_even_through_imports_for_type_checkers_nor_in_the_benchmarks() -> None:
    # A circle through type-only imports still ties two modules together for a reader and
    # for type checkers; the benchmarks are code the project runs as well.
    circles = []
    for package in ("sports_posts", "benchmarks"):
        graph = grimp.build_graph(package, include_external_packages=False,
                                  exclude_type_checking_imports=False, cache_dir=None)  # no stale cache
        circles += sorted(
            f"{module} <-> {imported}"
            for module in graph.modules
            for imported in graph.find_modules_directly_imported_by(module)
            if graph.find_shortest_chain(importer=imported, imported=module)
        )
    assert circles == []


def test_the_webhook_adapters_reach_the_receiver_through_public_names_only() -> None:
    # The adapters are what a customer would write for another framework: what they need
    # must be public. Their own package's helpers (adapters/_body.py) are theirs to use.
    import ast
    from pathlib import Path

    import sports_posts.webhooks.adapters as adapters

    private = []
    for path in sorted(Path(adapters.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level >= 2:
                private += [f"{path.name}: {alias.name}" for alias in node.names if alias.name.startswith("_")]
            elif (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                  and not (isinstance(node.value, ast.Name) and node.value.id == "self")):  # its own
                private.append(f"{path.name}: .{node.attr}")
    assert private == []


def test_no_module_outside_the_sandbox_passes_600_lines_and_the_root_holds_at_most_20() -> None:
    """A module a newcomer can read whole; a root that reads like a table of contents. The
    sandbox, an emulator of the whole service (its world, index and server), is left out."""
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "sports_posts"
    long = {
        str(path.relative_to(package)): lines
        for path in package.rglob("*.py")
        if "sandbox" not in path.relative_to(package).parts
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert not long, f"modules over 600 lines: {long}"
    root = sorted(path.name for path in package.glob("*.py"))
    assert len(root) <= 20, root


def _flags(function: ast.AST) -> set[str]:
    """The true-or-false values a function keeps: its ``bool`` parameters and every name or
    attribute it sets to a truth value."""
    found: set[str] = set()
    arguments = getattr(function, "args", None)
    if isinstance(arguments, ast.arguments):
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            if arg.annotation is not None and ast.unparse(arg.annotation) == "bool":
                found.add(arg.arg)
    for node in _own_nodes(function):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if _truth(value):
            found.update(ast.unparse(target) for target in targets)
    return found


def _truth(value: ast.expr) -> bool:
    """Whether ``value`` is a truth value (``x or default`` is not, ``a and b < c`` is)."""
    if isinstance(value, ast.BoolOp):
        return all(_truth(operand) for operand in value.values)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return value.func.id in ("bool", "isinstance", "callable")
    return (
        (isinstance(value, ast.Constant) and isinstance(value.value, bool))
        or isinstance(value, ast.Compare)
        or (isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not))
    )


def _own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of ``function``'s body, without those of the functions defined inside it."""
    nodes: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        nodes.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return nodes


def test_the_pollers_functions_are_short_and_carry_at_most_two_flags() -> None:
    """The poller is read by whoever must change it: no function of ``polling/`` passes 60
    lines (its docstring included), and none keeps more than two true-or-false values."""
    from pathlib import Path

    polling = Path(__file__).resolve().parent.parent / "sports_posts" / "polling"
    long, flagged = {}, {}
    for path in sorted(polling.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                where = f"{path.name}:{node.lineno} {node.name}"
                assert node.end_lineno is not None
                if node.end_lineno - node.lineno + 1 > 60:
                    long[where] = node.end_lineno - node.lineno + 1
                if len(_flags(node)) > 2:
                    flagged[where] = sorted(_flags(node))
    assert not long, f"functions over 60 lines: {long}"
    assert not flagged, f"functions with more than two flags: {flagged}"
