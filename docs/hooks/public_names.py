"""Griffe extension for the API reference: no private name in a signature.

A default such as ``timeout=UNSET`` means "not given: keep the current value"; the
reader cannot import ``UNSET`` (it lives in a private module), nor any private name, so the
reference writes ``...``, as typing stubs do,
and the docstring says what leaving the argument out means. A parameter whose own name
is private (a dataclass's cache field, say) is left out of the signature: private
attributes are dropped before griffe builds a dataclass's ``__init__`` from its fields.
"""

from __future__ import annotations

from typing import Any

import griffe


def _private(value: object) -> bool:
    text = str(value) if value is not None else ""
    return text.startswith("_") and not text.startswith("__")


SENTINELS = frozenset({"UNSET"})
"""Defaults that mean "not given" (``sports_posts._config.UNSET``)."""


def _public_signature(func: griffe.Function) -> None:
    kept = [p for p in func.parameters if not _private(p.name)]
    for parameter in kept:
        if _private(parameter.default) or str(parameter.default) in SENTINELS:
            parameter.default = "..."
    func.parameters = griffe.Parameters(*kept)


def _walk(obj: griffe.Object) -> None:
    for name, member in list(obj.members.items()):
        if member.is_alias:
            continue
        if isinstance(obj, griffe.Class) and isinstance(member, griffe.Attribute) and _private(name):
            obj.del_member(name)
        elif isinstance(member, griffe.Function):
            _public_signature(member)
        elif isinstance(member, griffe.Attribute) and _private(member.value):
            member.value = "..."
        elif isinstance(member, (griffe.Class, griffe.Module)):
            _walk(member)


class PublicNames(griffe.Extension):
    """Private defaults become ``...``; private parameters leave the signature."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        _walk(pkg)
