"""One lazy-import helper for the packages' ``__init__`` modules (the shape of scientific-python's
``lazy_loader.attach``): each package lists its public names once, in one table, and
``__getattr__`` (PEP 562), ``__dir__`` and ``__all__`` all come from that table."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Collection, Mapping
from typing import Any, Callable

__all__ = ["attach"]


def attach(
    package: str, names: Mapping[str, str], *, eager: Collection[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package``.

    ``names`` maps each public name to the module (relative to ``package``) that defines
    it; the names of the modules in ``eager`` are imported now, the others on first use.
    """
    namespace = sys.modules[package].__dict__
    for module in eager:  # in the order given: a package's modules may import each other
        importlib.import_module(module, package)
    for name, module in names.items():
        if module in eager:
            namespace[name] = getattr(importlib.import_module(module, package), name)
    public = sorted(names)

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return list(public)

    return __getattr__, __dir__, list(public)
