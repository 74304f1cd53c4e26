"""Griffe extension for the API reference: a parameter's default shows its value.

A signature such as ``lookback=DEFAULT_LOOKBACK`` or ``total_timeout=DEFAULT_TOTAL_TIMEOUT``
names a constant the reader then has to look up; the reference shows
``lookback=timedelta(seconds=180)`` and ``total_timeout=120.0`` instead. The values are
read from the modules at run time, so the reference cannot drift from the code; a default
that is not a plain value (an object with a long repr) keeps its name. A model field
written ``Field(None, description=...)`` shows ``None``, and its description (why the field
is optional) below its docstring.
"""

from __future__ import annotations

import importlib
import re
from datetime import timedelta
from typing import Any, Optional

import griffe

CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]*$")
_PLAIN = (bool, int, float, str, type(None))


def literal(value: object) -> Optional[str]:
    """``value`` as a reader writes it, or None when it is not a plain value."""
    if isinstance(value, _PLAIN):
        return repr(value)
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
        return f"timedelta(seconds={int(seconds) if seconds.is_integer() else seconds})"
    if isinstance(value, tuple) and all(isinstance(item, _PLAIN) for item in value):
        return repr(value)
    return None


def _value_of(default: griffe.ExprName) -> Optional[str]:
    if not CONSTANT.match(default.name):
        return None
    try:
        path = default.canonical_path
    except Exception:  # a name griffe cannot place
        return None
    module, _, name = path.rpartition(".")
    try:
        value = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        return None
    return literal(value)


def _fill(func: griffe.Function) -> None:
    for parameter in func.parameters:
        if isinstance(parameter.default, griffe.ExprName):
            shown = _value_of(parameter.default)
            if shown is not None:
                parameter.default = shown


def _field_of(cls: griffe.Class, attr: griffe.Attribute) -> None:
    """A model field written ``Field(default, description=...)``: the reference shows the
    default, and the description (why the field is optional) after the field's docstring."""
    call = attr.value
    if not (isinstance(call, griffe.ExprCall) and str(call.function) == "Field"):
        return
    default: Optional[str] = None
    for argument in call.arguments:
        if isinstance(argument, str):
            default = argument if default is None else default
        elif isinstance(argument, griffe.ExprKeyword) and argument.name == "default_factory":
            default = {"list": "[]", "dict": "{}"}.get(str(argument.value), default)
    if default is not None:
        attr.value = default
    try:
        model = getattr(importlib.import_module(cls.module.path), cls.name)
        description = model.model_fields[attr.name].description
    except (ImportError, AttributeError, KeyError, TypeError):
        return
    if description:
        if attr.docstring is None:
            attr.docstring = griffe.Docstring(description, parent=attr)
        elif description not in attr.docstring.value:
            attr.docstring.value = f"{attr.docstring.value}\n\n{description}"


def _walk(obj: griffe.Object) -> None:
    for member in list(obj.members.values()):
        if member.is_alias:
            continue
        if isinstance(member, griffe.Function):
            _fill(member)
        elif isinstance(member, griffe.Attribute) and isinstance(obj, griffe.Class) and isinstance(member.value, griffe.ExprCall):
            _field_of(obj, member)
        elif isinstance(member, griffe.Attribute) and isinstance(member.value, griffe.ExprName):
            # a dataclass field: the __init__ griffe writes for it takes this default
            if isinstance(obj, griffe.Class):
                shown = _value_of(member.value)
                if shown is not None:
                    member.value = shown
        elif isinstance(member, (griffe.Class, griffe.Module)):
            _walk(member)


class DefaultValues(griffe.Extension):
    """Every signature of the package shows its defaults' values, not constants' names."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        _walk(pkg)
