"""Every third-party package a block of the docs imports is installed by a line a reader sees:
the SDK's own dependencies, or a ``pip install`` line on the same page (an extra of
sports-posts such as ``'sports-posts[otel]'``, or the package by name)."""

from __future__ import annotations

import ast
import re
import sys
import sysconfig
from functools import cache
from importlib import metadata, util
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .snippets import ROOT, Snippet, collect

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the dev extra brings tomli through mypy and pytest
    import tomli as tomllib

PIP_INSTALL = re.compile(r"pip install ([^\n`#]+)")
PROJECT = "sports-posts"


@cache
def _project() -> dict[str, list[str]]:
    """The project's requirements: ``""`` for its dependencies, then one entry per extra."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {"": list(data["dependencies"]), **data["optional-dependencies"]}


def _closure(requirements: list[str]) -> set[str]:
    """The distributions these requirements install, with what those require in turn."""
    found: set[str] = set()
    todo = list(requirements)
    while todo:
        requirement = Requirement(todo.pop())
        name = canonicalize_name(requirement.name)
        if name == PROJECT:
            todo += [r for extra in requirement.extras for r in _project().get(extra, [])]
            continue
        if name in found:
            continue
        found.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [r for r in requires if "extra ==" not in r]
    return found


def installed_by(page_text: str) -> set[str]:
    """What a reader of the page has: the SDK with its dependencies, and every package a
    ``pip install`` line of the page names (extras of sports-posts included)."""
    requirements = [PROJECT]
    for line in PIP_INSTALL.findall(page_text):
        for word in line.split():
            word = word.strip("'\"")
            if word and not word.startswith("-") and re.match(r"^[A-Za-z0-9]", word):
                requirements.append(word)
    return _closure(requirements + _project()[""])


@cache
def _owners() -> dict[tuple[str, ...], set[str]]:
    """Module path (as parts) -> the distributions whose files hold it."""
    owners: dict[tuple[str, ...], set[str]] = {}
    for dist in metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"] or "")
        for file in dist.files or []:
            parts = tuple(file.parts)
            if not parts or not parts[-1].endswith((".py", ".so", ".pyd")) or ".." in parts:
                continue
            stem = parts[-1].split(".")[0]
            module = parts[:-1] if stem == "__init__" else parts[:-1] + (stem,)
            for end in range(1, len(module) + 1):
                owners.setdefault(module[:end], set()).add(name)
    return owners


def _stdlib(top: str) -> bool:
    names = getattr(sys, "stdlib_module_names", None)
    if names is not None:
        return top in names
    if top in sys.builtin_module_names:
        return True
    spec = util.find_spec(top)
    origin = (spec.origin or "") if spec else ""
    return origin.startswith(sysconfig.get_paths()["stdlib"]) and "site-packages" not in origin


def imported(snippet: Snippet) -> set[str]:
    """Dotted modules a block imports (``from a.b import c`` also names ``a.b.c``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(snippet.code)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def distributions_of(module: str) -> set[str]:
    """The distributions that own the most specific part of ``module`` found on disk."""
    parts = tuple(module.split("."))
    for end in range(len(parts), 0, -1):
        if parts[:end] in _owners():
            return _owners()[parts[:end]]
    return set()


def test_every_third_party_import_has_an_install_line() -> None:
    snippets = [s for s in collect()[0] if s.language != "pycon"]
    pages = {s.page for s in snippets}
    local = {s.page: {Path(s.title).stem for s in snippets if s.page == page and s.title}
             for page in pages for s in snippets if s.page == page}
    missing = []
    for snippet in snippets:
        text = (ROOT / snippet.page).read_text(encoding="utf-8")
        have = installed_by(text)
        for module in sorted(imported(snippet)):
            top = module.split(".")[0]
            if top == "sports_posts" or _stdlib(top) or top in local.get(snippet.page, set()):
                continue
            owners = distributions_of(module)
            if not owners and snippet.fragment:
                continue  # an excerpt of the reader's own project (``myapp.webhooks``)
            if not owners & have:
                missing.append(f"{snippet.id}: {' or '.join(sorted(owners)) or module + ' (not installed)'}")
    assert not missing, "imports no pip install line of the page covers:\n" + "\n".join(sorted(set(missing)))


def test_the_rule_sees_the_otel_sdk() -> None:
    """opentelemetry-api (the otel extra) does not hold opentelemetry.sdk."""
    assert "opentelemetry-sdk" in distributions_of("opentelemetry.sdk.trace")
    assert "opentelemetry-sdk" not in installed_by("pip install 'sports-posts[otel]'")
    assert "opentelemetry-sdk" in installed_by("pip install 'sports-posts[otel]' opentelemetry-sdk")
