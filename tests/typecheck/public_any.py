"""Every ``Any`` a customer meets in the public API of ``sports_posts``, checked against a list.

``basedpyright --verifytypes`` counts an explicit ``Any`` as a known type, so a signature
such as ``def f(**data: Any) -> dict[str, Any]`` scores 100%. This report finds each
``Any`` in what a customer's type checker reads: every parameter (``*args``, ``**kwargs``
included), return and attribute of every public function, class, method, property, protocol
and TypedDict, and each public class's bases, wherever the ``Any`` sits in the type
(``dict[str, Any]``, ``Callable[..., Any]``, ``Mapping[str, Any]``) and through type aliases
and TypeVar bounds, the package's own and other libraries' (``httpx``'s ``RequestData`` is
``Mapping[str, Any]``). ``Callable[..., X]`` counts too: its ``...`` accepts any arguments,
as ``Any`` would.

What is public: every name a public module exports (its ``__all__``, else each name it
defines without a leading ``_``); a public module is one whose dotted path has no part
starting with ``_``. A class of the package that a public signature names (the type of
``client.posts``, a private base's members) is walked as well, since the customer holds
its objects.

How: griffe (the reference's reader, ``tests/docs/test_default_values.py``) reads the
package's source statically, as a type checker does. Run-time introspection
(``typing.get_type_hints``) cannot evaluate the annotations that name what a module imports
only under ``TYPE_CHECKING``, and sees one signature of an ``@overload``ed function;
verifytypes' JSON lists symbols but not their types; mypy's semantic model is not a public
API. Names of other libraries are looked up at run time (their aliases are plain typing
objects there).

    python tests/typecheck/public_any.py                      # the source tree, checked
    python tests/typecheck/public_any.py --path SITE_PACKAGES # an installed wheel, checked
    python tests/typecheck/public_any.py --list               # every occurrence, unchecked

A check fails on an ``Any`` the list (``public_any.toml``, each entry with its reason) does
not name, on an entry that no longer occurs, and on an entry without a reason.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import fnmatch
import importlib
import sys
import typing
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Optional, Union

import griffe

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - pytest depends on tomli before 3.11
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ALLOWED = HERE / "public_any.toml"
PACKAGE = "sports_posts"

ANY = frozenset({"typing.Any", "typing_extensions.Any"})
CALLABLE = frozenset({"typing.Callable", "collections.abc.Callable", "typing_extensions.Callable"})
TYPE_ALIAS = frozenset({"typing.TypeAlias", "typing_extensions.TypeAlias"})
TYPE_VAR = frozenset({"typing.TypeVar", "typing_extensions.TypeVar"})
STUB_ONLY = ("_typeshed",)
"""Modules that exist for type checkers only: nothing to look up at run time."""

Member = Union[griffe.Object, griffe.Alias]


@dataclasses.dataclass(frozen=True, order=True)
class Occurrence:
    """One ``Any``: where a customer meets it and the type as the source writes it."""

    name: str  # the public dotted path: sports_posts.webhooks.testing.sample_payload
    where: str  # "parameter **data", "return", "attribute", "base"
    type: str  # "dict[str, Any]"; an alias with its value: "Scope = MutableMapping[str, Any]"

    @property
    def key(self) -> str:
        return f"{self.name} ({self.where})"

    def __str__(self) -> str:
        return f"{self.key}: {self.type}"


def _sub_expressions(expr: object) -> Iterator[griffe.Expr]:
    """``expr`` and every expression inside it."""
    if isinstance(expr, griffe.Expr):
        yield expr
        for field in dataclasses.fields(expr):
            if field.name == "parent":
                continue
            value = getattr(expr, field.name)
            for item in value if isinstance(value, list) else [value]:
                yield from _sub_expressions(item)


def _runtime_has_any(value: object, seen: set[int]) -> bool:
    """Whether a run-time typing object (another library's alias) holds ``Any``."""
    if value is typing.Any or id(value) in seen:
        return value is typing.Any
    seen.add(id(value))
    if isinstance(value, typing.ForwardRef) or (isinstance(value, type) and typing.get_origin(value) is None):
        return False  # a class is its own type (list[int] is a type too before 3.11); a forward reference names one
    if value is Ellipsis:
        return True  # Callable[..., X] at run time
    return any(_runtime_has_any(arg, seen) for arg in typing.get_args(value))


class Report:
    """The walk over one loaded copy of the package."""

    def __init__(self, package: griffe.Module, internal: Collection[str] = ()) -> None:
        self.package = package
        self.internal = frozenset(internal)
        self.found: set[Occurrence] = set()
        self.walked: set[str] = set()
        self.pending: list[tuple[str, griffe.Class]] = []
        self.public_path: dict[str, str] = {}  # canonical path -> the first public path
        self._external: dict[str, bool] = {}

    # -- what is public -----------------------------------------------------------------
    def public_modules(self) -> list[griffe.Module]:
        modules: list[griffe.Module] = []

        def collect(module: griffe.Module) -> None:
            if module.path in self.internal:
                return
            modules.append(module)
            for name, member in module.members.items():
                if isinstance(member, griffe.Module) and not name.startswith("_"):
                    collect(member)

        collect(self.package)
        return sorted(modules, key=lambda module: (module.path.count("."), module.path))

    def exported(self, module: griffe.Module) -> Iterator[tuple[str, Member]]:
        if module.exports is not None:
            for name in module.exports:
                yield str(name), module.members[str(name)]
            return
        for name, member in module.members.items():
            if not name.startswith("_") and not member.is_alias and not member.is_module:
                yield name, member

    # -- looking names up -----------------------------------------------------------------
    def lookup(self, path: str) -> Optional[griffe.Object]:
        """The package's object at a canonical path, or None (another library's name)."""
        if path != PACKAGE and not path.startswith(PACKAGE + "."):
            return None
        try:
            found = self.package[path[len(PACKAGE) + 1 :]] if path != PACKAGE else self.package
        except (KeyError, ValueError):
            return None
        if isinstance(found, griffe.Alias):
            try:
                target = found.final_target
            except (griffe.AliasResolutionError, griffe.CyclicAliasError):
                return None
            return target if isinstance(target, griffe.Object) else None
        return found if isinstance(found, griffe.Object) else None

    def external_has_any(self, path: str) -> bool:
        """Whether another library's name is an alias that holds ``Any`` (looked up at run time)."""
        if path not in self._external:
            module_name, _, attribute = path.rpartition(".")
            if not module_name or module_name.split(".")[0] in STUB_ONLY or module_name in ("typing", "builtins"):
                self._external[path] = False
            else:
                try:
                    value = getattr(importlib.import_module(module_name), attribute)
                except (ImportError, AttributeError):
                    # a dotted class attribute (httpx.Client.something) or a stub-only name
                    value = None
                self._external[path] = value is not None and _runtime_has_any(value, set())
        return self._external[path]

    def alias_value(self, obj: griffe.Object) -> Optional[griffe.Expr]:
        """What a module-level type alias or TypeVar stands for, or None for a value."""
        if not isinstance(obj, griffe.Attribute) or obj.value is None:
            return None
        annotation = obj.annotation
        value = obj.value
        if isinstance(annotation, griffe.ExprName) and annotation.canonical_path in TYPE_ALIAS:
            if isinstance(value, str):  # X: TypeAlias = "dict[str, Any]"
                node = ast.parse(value.strip("\"'"), mode="eval").body
                parsed = griffe.safe_get_annotation(node, parent=obj.parent)  # type: ignore[arg-type]
                return parsed if isinstance(parsed, griffe.Expr) else None
            return value
        if not isinstance(value, griffe.Expr):
            return None
        if isinstance(value, griffe.ExprCall):
            if isinstance(value.function, griffe.ExprName) and value.function.canonical_path in TYPE_VAR:
                return value  # its bound and constraints
            return None
        if annotation is None and isinstance(value, (griffe.ExprSubscript, griffe.ExprBinOp)):
            return value  # X = dict[str, Any], X = A | B: written as a type
        return None

    # -- finding Any in a type ------------------------------------------------------------
    def holds_any(self, expr: object, seen: frozenset[str] = frozenset(), *, reach: bool = True) -> Optional[str]:
        """The type as written (with the aliases it goes through) when it holds ``Any``."""
        text = str(expr)
        for node in _sub_expressions(expr):
            if (
                isinstance(node, griffe.ExprSubscript)
                and isinstance(node.left, griffe.ExprName)
                and node.left.canonical_path in CALLABLE
                and str(node.slice).startswith("...")
            ):
                return text
            if not isinstance(node, griffe.ExprName):
                continue
            path = node.canonical_path
            if path in ANY:
                return text
            target = self.lookup(path)
            if target is None:
                if self.external_has_any(path):
                    return f"{text} ({path} holds Any)"
                continue
            if isinstance(target, griffe.Class):
                if reach:
                    self.reach(target)
                continue
            value = self.alias_value(target)
            if value is not None and path not in seen:
                inner = self.holds_any(value, seen | {path})
                if inner is not None:
                    return f"{text} ({node.name} = {inner})"
        return None

    def check(self, name: str, where: str, expr: object) -> None:
        if expr is None or isinstance(expr, str):
            return
        # a base's members are walked as the class's own (all_members), not as another class
        text = self.holds_any(expr, reach=where != "base")
        if text is not None:
            self.found.add(Occurrence(name, where, text))

    # -- walking the API ------------------------------------------------------------------
    def reach(self, cls: griffe.Class) -> None:
        if cls.path not in self.walked:
            self.pending.append((self.public_path.get(cls.path, cls.path), cls))

    def function(self, name: str, func: griffe.Function, *, as_property: bool = False) -> None:
        for signature in func.overloads or [func]:
            if as_property or "property" in signature.labels:
                self.check(name, "attribute", signature.returns)
                continue
            for index, parameter in enumerate(signature.parameters):
                if index == 0 and parameter.name in ("self", "cls") and parameter.annotation is None:
                    continue
                prefix = {"variadic positional": "*", "variadic keyword": "**"}.get(parameter.kind.value, "")
                self.check(name, f"parameter {prefix}{parameter.name}", parameter.annotation)
            self.check(name, "return", signature.returns)

    def member(self, name: str, obj: griffe.Object) -> None:
        if isinstance(obj, griffe.Class):
            if obj.path not in self.walked:
                self.cls(name, obj)
        elif isinstance(obj, griffe.Function):
            self.function(name, obj)
        elif isinstance(obj, griffe.Attribute):
            self.check(name, "attribute", obj.annotation)
            value = self.alias_value(obj)
            if value is not None:
                self.check(name, "alias", value)

    def cls(self, name: str, cls: griffe.Class) -> None:
        self.walked.add(cls.path)
        for base in cls.bases:
            self.check(name, "base", base)
        for member_name, member in sorted(cls.all_members.items()):
            if member_name.startswith("_") and not (member_name.startswith("__") and member_name.endswith("__")):
                continue
            target: object = member
            if isinstance(member, griffe.Alias):
                try:
                    target = member.final_target
                except (griffe.AliasResolutionError, griffe.CyclicAliasError):
                    continue
            if isinstance(target, griffe.Object):
                self.member(f"{name}.{member_name}", target)

    def run(self) -> list[Occurrence]:
        roots: list[tuple[str, griffe.Object]] = []
        for module in self.public_modules():
            for name, member in self.exported(module):
                target = self.lookup(member.path) if isinstance(member, griffe.Alias) else member
                if target is None or not isinstance(target, griffe.Object):
                    continue  # another library's name, re-exported
                self.public_path.setdefault(target.path, f"{module.path}.{name}")
                roots.append((f"{module.path}.{name}", target))
        for public, obj in roots:
            if self.public_path[obj.path] == public:  # a name re-exported elsewhere is walked once
                self.member(public, obj)
        while self.pending:
            public, cls = self.pending.pop()
            if cls.path not in self.walked:
                self.cls(public, cls)
        return sorted(self.found)


def load(path: Path) -> griffe.Module:
    """The package as found under ``path`` (the source tree, or an environment's site-packages)."""
    if not (path / PACKAGE / "__init__.py").is_file():
        raise SystemExit(f"no {PACKAGE} package under {path}")
    loader = griffe.GriffeLoader(search_paths=[str(path)], allow_inspection=False)
    package = loader.load(path / PACKAGE)  # this directory's copy, not another on sys.path
    loader.resolve_aliases(external=False, implicit=True)
    assert isinstance(package, griffe.Module)
    return package


@dataclasses.dataclass(frozen=True)
class Allowed:
    """``public_any.toml``: the ``Any``s that stay open and the modules that are not API."""

    open: dict[str, str]  # occurrence key (``*`` matches any text) -> why it stays Any
    internal: dict[str, str]  # module path -> why a customer does not import it

    def reason(self, occurrence: Occurrence) -> Optional[str]:
        for key, why in self.open.items():
            if fnmatch.fnmatchcase(occurrence.key, key):
                return why
        return None


def allowed(file: Path = ALLOWED) -> Allowed:
    with file.open("rb") as handle:
        table = tomllib.load(handle)
    return Allowed(
        {str(k): str(v) for k, v in table.get("open", {}).items()},
        {str(k): str(v) for k, v in table.get("internal", {}).items()},
    )


def report(path: Path = ROOT, internal: Collection[str] = ()) -> list[Occurrence]:
    return Report(load(path), internal).run()


def problems(found: list[Occurrence], entries: Allowed, package: Optional[griffe.Module] = None) -> list[str]:
    """What fails the check: an unlisted ``Any``, a stale entry, an entry with no reason."""
    name = ALLOWED.name
    out = [f"not in {name}: {occurrence}" for occurrence in found if entries.reason(occurrence) is None]
    out += [
        f"stale entry in {name} (no such Any now): {key}"
        for key in sorted(entries.open)
        if not any(fnmatch.fnmatchcase(occurrence.key, key) for occurrence in found)
    ]
    reasons = {**entries.open, **entries.internal}
    out += [f"entry without a reason in {name}: {key}" for key, why in sorted(reasons.items()) if not why.strip()]
    if package is not None:
        paths = {module.path for module in _modules(package)}
        out += [f"stale internal module in {name}: {key}" for key in sorted(entries.internal) if key not in paths]
    return out


def _modules(module: griffe.Module) -> Iterator[griffe.Module]:
    yield module
    for member in module.members.values():
        if isinstance(member, griffe.Module):
            yield from _modules(member)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=ROOT, help="where sports_posts is (default: the source tree)")
    parser.add_argument("--list", action="store_true", help="print every occurrence; check nothing")
    args = parser.parse_args(argv)
    entries = allowed()
    package = load(args.path)
    found = Report(package, entries.internal).run()
    if args.list:
        print("\n".join(map(str, found)))
        return 0
    listed = [occurrence for occurrence in found if entries.reason(occurrence) is not None]
    for occurrence in found:
        print(f"{occurrence}  [{'open' if occurrence in listed else 'NOT LISTED'}]")
    failures = problems(found, entries, package)
    print(f"public Any: {len(found)} occurrences, {len(listed)} listed as open in {ALLOWED.name}")
    for failure in failures:
        print(f"  {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
