"""First touches of the public names from many threads at once never deadlock on import locks.

A web server's first requests touch the SDK's names from many threads at once. Importing
``a.b.c`` holds the lock of ``a.b.c`` while it imports ``a.b``; so when the ``__init__`` of
``a.b`` imports ``a.b.c`` (or anything that imports it) at load time, a thread that entered at
``a.b.c`` and a thread that entered at ``a.b`` wait for each other, and CPython ends one of
them with ``_DeadlockError``. It happened to ``webhooks.dedupe`` and ``webhooks.inbox``,
whose ``__init__`` imported their store modules at the bottom.

Two checks: a static one (each package's ``__init__`` loads, at load time, none of its own
modules that a thread may import before the package: a public module path, or the target of
a lazy table above it) and the real thing (16+ threads behind a barrier, each touching a
different public name for the first time, in many interpreters that have imported nothing
of the SDK: forks of one that imported only what the SDK imports from other libraries).
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import sports_posts

ROOT = Path(sports_posts.__file__ or "").parent


def _modules() -> tuple[list[str], list[str]]:
    """Every package and every module of the SDK, by dotted name."""
    packages, modules = [], []
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            packages.append(".".join(parts[:-1]))
        elif parts[-1] != "__main__":
            modules.append(".".join(parts))
    return packages, modules


PACKAGES, MODULES = _modules()


def _public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def _lazy_targets() -> dict[str, set[str]]:
    """Each package with a lazy table, and the modules its ``__getattr__`` imports."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        table = getattr(importlib.import_module(package), "_LAZY", None)
        if table:
            found[package] = {importlib.util.resolve_name(where, package) for where in table.values()}
    return found


def _imports_from_outside() -> dict[str, set[str]]:
    """Each module of the SDK and the SDK modules it imports (at load time or in a function;
    not under ``TYPE_CHECKING``), resolved to absolute names."""
    known = set(PACKAGES) | set(MODULES)
    found: dict[str, set[str]] = {}
    for name in PACKAGES + MODULES:
        is_package = name in PACKAGES
        path = ROOT.parent.joinpath(*name.split("."))
        path = path / "__init__.py" if is_package else path.with_suffix(".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = {id(child) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and getattr(node.test, "id", "") == "TYPE_CHECKING" for child in ast.walk(node)}
        base = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                where = node.module or ""
                if node.level:
                    where = importlib.util.resolve_name("." * node.level + where, base + ".x")
                targets.add(where)
                targets |= {f"{where}.{alias.name}" for alias in node.names}
        found[name] = {target for target in targets if target in known}
    return found


def _ancestors_or_self(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _entered_before(package: str, public_modules: list[str], lazy: dict[str, set[str]],
                    imports: dict[str, set[str]]) -> set[str]:
    """The modules under ``package`` whose import lock a thread may hold while it waits for
    ``package`` to be imported: a public module path below it (a customer's ``import``), the
    target of a lazy table of a package above it, and what a module outside ``package``
    imports from inside it, with the packages on their way."""
    entries = set(public_modules)
    for owner, targets in lazy.items():
        if package.startswith(owner + "."):
            entries |= targets
    for importer, targets in imports.items():
        if importer != package and not importer.startswith(package + "."):
            entries |= targets
    below = package + "."
    return {step for entry in entries for step in _ancestors_or_self(entry) if step.startswith(below)}


FORKS = r"""
import importlib, json, os, sys

jobs, others = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for other in others:  # what the SDK imports from elsewhere, once, before any fork
    try:
        importlib.import_module(other)
    except BaseException:  # noqa: BLE001, S110 - an alias or a module that imports only once
        pass
assert not [m for m in sys.modules if m.startswith("sports_posts")]
import threading
assert threading.active_count() == 1, "a thread at the fork: the children could inherit a held lock"
results = []
for start in range(0, len(jobs), AT_ONCE):
    running = []
    for job in jobs[start:start + AT_ONCE]:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # a child: the SDK as a fresh interpreter meets it, nothing of it imported
            os.close(read)
            try:
                answer = run(job)
            except BaseException as exc:  # noqa: BLE001 - reported, not raised in a fork
                answer = {"crashed": repr(exc)}
            with os.fdopen(write, "w") as out:
                out.write(json.dumps(answer))
            os._exit(0)
        os.close(write)
        running.append((pid, read))
    for pid, read in running:
        with os.fdopen(read) as got:
            text = got.read()
        os.waitpid(pid, 0)
        results.append(json.loads(text) if text else {"crashed": "no answer"})
print(json.dumps(results))
"""
"""The frame of both checks: one fresh interpreter imports what the SDK imports from other
libraries, then forks a child per job (``AT_ONCE`` at a time), each a process that has
imported nothing of the SDK and runs ``run(job)``: the import of the SDK is what each job
measures, and the other libraries are imported once instead of once per job."""

LOADED_BY_INIT = r"""
def run(package):
    parent = package.rpartition(".")[0]
    if parent:
        importlib.import_module(parent)
    before = set(sys.modules)
    importlib.import_module(package)
    return sorted(m for m in set(sys.modules) - before if m.startswith("sports_posts"))
"""


def _in_forks(run: str, jobs: list[Any], others: list[str]) -> list[Any]:
    """``run(job)``'s answer for each job, each in a fork of one fresh interpreter (``FORKS``)."""
    script = f"AT_ONCE = {AT_ONCE}\n{run}\n{FORKS}"
    out = subprocess.run([sys.executable, "-c", script, json.dumps(jobs), json.dumps(others)],
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    results: list[Any] = json.loads(out.stdout.strip().splitlines()[-1])
    assert not [r for r in results if isinstance(r, dict) and "crashed" in r], results
    return results


@pytest.mark.slow
@pytest.mark.processes
def test_no_package_loads_at_import_a_module_a_thread_may_enter_first() -> None:
    public_modules = [name for name in MODULES + PACKAGES if _public(name)]
    lazy = _lazy_targets()
    imports = _imports_from_outside()
    answers = _in_forks(LOADED_BY_INIT, PACKAGES, _everything_else())
    loaded = {package: set(found) - {package} for package, found in zip(PACKAGES, answers)}
    offences = {
        package: sorted(loaded[package] & _entered_before(package, public_modules, lazy, imports))
        for package in PACKAGES
    }
    assert not {package: found for package, found in offences.items() if found}


# --- the real thing -------------------------------------------------------------------------

THREADS = 32
INTERPRETERS = 12  # each draws other names; the rule above is what rules the deadlock out
AT_ONCE = 4

RACE = r"""
import threading


def run(touches):
    barrier = threading.Barrier(len(touches))
    errors = []
    unhandled = []
    threading.excepthook = lambda args: unhandled.append(repr(args.exc_value))

    def touch(kind, target, name):
        barrier.wait(timeout=60)
        try:
            module = importlib.import_module(target)
            if kind == "name":
                getattr(module, name)
        except BaseException as exc:  # noqa: BLE001 - every failure is the finding
            errors.append(f"{target}:{name}: {exc!r}")

    threads = [threading.Thread(target=touch, args=tuple(t)) for t in touches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return {"errors": errors, "unhandled": unhandled, "alive": sum(t.is_alive() for t in threads)}
"""
"""One interpreter's race: its threads wait at a barrier, then each touches its name first."""


def _touches() -> list[tuple[str, str, str]]:
    """Every public name of every public package, and every public module path."""
    touches: list[tuple[str, str, str]] = []
    for package in PACKAGES:
        if not _public(package):
            continue
        module = importlib.import_module(package)
        touches += [("name", package, name) for name in getattr(module, "__all__", ())]
    for name in MODULES + PACKAGES:
        if _public(name):
            touches.append(("module", name, ""))
    return touches


def _others(pool: list[tuple[str, str, str]]) -> list[str]:
    """The modules from outside the SDK that touching everything loads, in their order:
    each interpreter loads them before its threads start, so that what the threads race on
    is the SDK's own imports (a race inside the standard library, such as
    ``collections.abc`` imported first from two threads, is not the SDK's to fix)."""
    script = (
        "import importlib, json, sys\n"
        f"for kind, target, name in {pool!r}:\n"
        "    module = importlib.import_module(target)\n"
        "    if kind == 'name':\n"
        "        getattr(module, name)\n"
        "print(json.dumps([m for m in sys.modules if m.split('.')[0] not in ('sports_posts', '__main__')]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    loaded: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


@functools.cache
def _everything_else() -> list[str]:
    """``_others`` of every public name and module: asked once for both checks."""
    return _others(_touches())


@pytest.mark.slow
@pytest.mark.processes
def test_threads_touching_public_names_first_in_fresh_interpreters_never_fail() -> None:
    pool = _touches()
    assert len(pool) > THREADS
    assert any(target == "sports_posts.webhooks.dedupe" for _, target, _ in pool)
    races = [random.Random(seed).sample(pool, THREADS) for seed in range(INTERPRETERS)]
    results = _in_forks(RACE, races, _everything_else())
    failed = [r for r in results if r["errors"] or r["unhandled"] or r["alive"]]
    assert not failed, failed
