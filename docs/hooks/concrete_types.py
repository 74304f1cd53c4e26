"""Griffe extension for the API reference: concrete types instead of type-variable names.

The two clients, the two ``posts`` resources and the two pages share their code through
generic base classes (``_ClientBase[H]``, ``PostModes[C, PageT, PollerT]``), so an
inherited signature reads ``http_client: Optional[H]`` or ``-> PollerT``: names a reader
cannot look up. Each documented class gets its inherited members with the type variables
replaced by what that class binds them to (``SportsPosts``: ``H`` is ``httpx.Client``;
``Posts``: ``PollerT`` is ``Poller``); a type variable left unbound shows its bound
(``T`` of ``SyncPage`` is ``Post``). The bindings are read from the classes at run time,
so the reference cannot drift from the code.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import typing
from typing import Any, Optional, TypeVar

import griffe


def _format(value: object) -> Optional[str]:
    """A binding as a reader writes it (``Poller``, ``SyncPage[Post]``, ``httpx.Client``)."""
    if isinstance(value, TypeVar):
        return _format(value.__bound__) if value.__bound__ is not None else None
    if value is None or value is type(None):
        return "None"
    if isinstance(value, list):  # the parameters of a Callable
        items = [_format(item) for item in value]
        return None if None in items else f"[{', '.join(items)}]"  # type: ignore[arg-type]
    origin = typing.get_origin(value)
    if origin is not None:
        args = [_format(arg) for arg in typing.get_args(value)]
        head = _format(origin)
        return None if head is None or None in args else f"{head}[{', '.join(args)}]"  # type: ignore[arg-type]
    if isinstance(value, type):
        module = value.__module__
        if module in ("builtins", "collections.abc", "typing") or module.split(".")[0] == "sports_posts":
            return value.__name__
        return f"{module.split('.')[0]}.{value.__name__}"
    return None


def bindings(cls: type) -> dict[str, str]:
    """Type-variable name -> the type ``cls`` binds it to, through all its generic bases."""
    raw: dict[str, object] = {}
    for klass in cls.__mro__:  # the class itself first: a subclass's binding wins
        for base in getattr(klass, "__orig_bases__", ()):
            origin = typing.get_origin(base)
            for param, arg in zip(getattr(origin, "__parameters__", ()), typing.get_args(base)):
                raw.setdefault(param.__name__, arg)
    resolved: dict[str, str] = {}
    for name, value in raw.items():
        seen = {name}
        while isinstance(value, TypeVar) and value.__name__ in raw and value.__name__ not in seen:
            seen.add(value.__name__)
            value = raw[value.__name__]
        text = _format(value)
        if text is not None and text != name:
            resolved[name] = text
    return resolved


def _substitute(expr: Any, mapping: dict[str, str]) -> Any:
    """``expr`` with each type-variable name of ``mapping`` replaced; unchanged parts shared."""
    if isinstance(expr, griffe.ExprName):
        if expr.name not in mapping:
            return expr
        node = ast.parse(mapping[expr.name], mode="eval").body
        scope = expr.parent if isinstance(expr.parent, (griffe.Module, griffe.Class)) else None
        if scope is None:  # a name inside a function's annotations: its class or module resolves it
            scope = getattr(expr.parent, "parent", None)
        if not isinstance(scope, (griffe.Module, griffe.Class)):
            return mapping[expr.name]
        return griffe.safe_get_annotation(node, parent=scope) or mapping[expr.name]
    if isinstance(expr, str):
        return expr
    if isinstance(expr, list):
        items = [_substitute(item, mapping) for item in expr]
        return items if any(a is not b for a, b in zip(items, expr)) else expr
    if not (isinstance(expr, griffe.Expr) and dataclasses.is_dataclass(expr)):
        return expr
    changes = {}
    for field in dataclasses.fields(expr):
        if field.name == "parent":
            continue
        old = getattr(expr, field.name)
        new = _substitute(old, mapping)
        if new is not old:
            changes[field.name] = new
    return dataclasses.replace(expr, **changes) if changes else expr


def _concrete_function(func: griffe.Function, mapping: dict[str, str]) -> Optional[griffe.Function]:
    """A copy of ``func`` with concrete types, or None when it names no type variable."""
    parameters = [
        griffe.Parameter(p.name, annotation=_substitute(p.annotation, mapping), kind=p.kind,
                         default=p.default, docstring=p.docstring)
        for p in func.parameters
    ]
    returns = _substitute(func.returns, mapping)
    changed = returns is not func.returns or any(
        new.annotation is not old.annotation for new, old in zip(parameters, func.parameters)
    )
    if not changed:
        return None
    copy = griffe.Function(
        func.name, lineno=func.lineno, endlineno=func.endlineno, parameters=griffe.Parameters(*parameters),
        returns=returns, decorators=func.decorators, docstring=func.docstring,
        runtime=func.runtime, parent=func.parent,
    )
    copy.labels = set(func.labels)
    return copy


def _concrete_attribute(attr: griffe.Attribute, mapping: dict[str, str]) -> Optional[griffe.Attribute]:
    annotation = _substitute(attr.annotation, mapping)
    if annotation is attr.annotation:
        return None
    copy = griffe.Attribute(attr.name, lineno=attr.lineno, endlineno=attr.endlineno, value=attr.value,
                            annotation=annotation, docstring=attr.docstring, runtime=attr.runtime,
                            parent=attr.parent)
    copy.labels = set(attr.labels)
    return copy


def _runtime_class(cls: griffe.Class) -> Optional[type]:
    try:
        value = getattr(importlib.import_module(cls.module.path), cls.name, None)
    except ImportError:
        return None
    return value if isinstance(value, type) and cls.parent is cls.module else None


def _concretise(cls: griffe.Class) -> None:
    runtime = _runtime_class(cls)
    mapping = bindings(runtime) if runtime is not None else {}
    if not mapping:
        return
    for name, member in list(cls.all_members.items()):
        try:
            target = member.final_target if isinstance(member, griffe.Alias) else member
        except griffe.AliasResolutionError:
            continue
        if isinstance(target, griffe.Function):
            copy: Optional[griffe.Object] = _concrete_function(target, mapping)
        elif isinstance(target, griffe.Attribute):
            copy = _concrete_attribute(target, mapping)
        else:
            continue
        if copy is None:
            continue
        inherited = member.is_alias or member.parent is not cls
        copy.parent = cls
        cls.set_member(name, copy)
        if inherited:
            # still listed with the other inherited members (inherited_members: true)
            copy.labels.discard("inherited")


def _walk(obj: griffe.Object) -> None:
    for member in list(obj.members.values()):
        if member.is_alias:
            continue
        if isinstance(member, griffe.Class):
            _concretise(member)
            _walk(member)
        elif isinstance(member, griffe.Module):
            _walk(member)


class ConcreteTypes(griffe.Extension):
    """Inherited signatures name the types each class binds, not type variables."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        _walk(pkg)
