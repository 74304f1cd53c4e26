"""Griffe extension for the API reference: private sentinels show as ``...``.

A default such as ``timeout=_UNSET`` means "not given: keep the current value"; the
reader cannot import ``_UNSET``, so the reference writes ``...``, as typing stubs do,
and the docstring says what leaving the argument out means.
"""

from __future__ import annotations

from typing import Any

import griffe


def _private(value: object) -> bool:
    text = str(value) if value is not None else ""
    return text.startswith("_") and not text.startswith("__")


class PublicNames(griffe.Extension):
    """Replace private names used as defaults or attribute values by ``...``."""

    def on_function_instance(self, *, func: griffe.Function, **kwargs: Any) -> None:
        for parameter in func.parameters:
            if _private(parameter.default):
                parameter.default = "..."

    def on_attribute_instance(self, *, attr: griffe.Attribute, **kwargs: Any) -> None:
        if _private(attr.value):
            attr.value = "..."
