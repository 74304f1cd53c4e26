"""One lazy-import helper for the packages' ``__init__`` modules (the shape of scientific-python's
``lazy_loader.attach``): each package maps its public names to their modules in one table,
and ``__getattr__`` (PEP 562) and ``__dir__`` come from that table.

Type checkers never see ``__getattr__`` (the packages define it under ``if not TYPE_CHECKING``,
so a misspelt name is an error, not ``Any``): they read the explicit re-exports
(``from ._client import SportsPosts as SportsPosts``) and the literal ``__all__``.
``attach`` refuses an ``__all__`` that is not the table's names, and
tests/architecture/test_lazy_imports.py parses every package's ``__init__`` to check that
the re-exports name the same objects from the same modules."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Collection, Mapping
from typing import Any, Callable

__all__ = ["attach"]


def attach(
    package: str,
    names: Mapping[str, str],
    public: Collection[str],
    *,
    eager: Collection[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``.

    ``names`` maps each public name to the module (relative to ``package``) that defines
    it; the names of the modules in ``eager`` are imported now, the others on first use.
    ``public`` is the package's ``__all__``: it must list exactly the table's names.
    """
    if set(public) != set(names):
        raise ImportError(
            f"{package}: __all__ and the lazy table differ: {sorted(set(public) ^ set(names))}"
        )
    namespace = sys.modules[package].__dict__
    for module in eager:  # in the order given: a package's modules may import each other
        importlib.import_module(module, package)
    for name, module in names.items():
        if module in eager:
            namespace[name] = getattr(importlib.import_module(module, package), name)
    listing = sorted(names)

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return list(listing)

    return __getattr__, __dir__
