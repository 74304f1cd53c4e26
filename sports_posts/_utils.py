"""Small helpers every part of the SDK uses: option validators (``ParameterError`` naming the
option, at the place it is given), ``attach`` for the packages' lazy public names, and
``Done``/``advance``, which drive a sans-IO flow."""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Collection, Generator, Mapping
from typing import Any, Callable, Generic, Optional, TypeVar, Union

from ._errors import ParameterError

__all__ = [
    "Done",
    "ONE_DAY",
    "advance",
    "attach",
    "flag",
    "integer",
    "non_negative_int",
    "optional_seconds",
    "positive_float",
    "positive_int",
    "seconds",
]

# Small validators of the options a caller gives a constructor or an adapter.
#
# Each raises ``ParameterError`` naming the option, at the place the option is given: a
# wrong type or an out-of-range number must fail at start-up, not turn every later
# request into a 500 (or remove a bound in silence). They never echo a long value back,
# and are never given a secret.

ONE_DAY = 86400.0
"""The longest wait, timeout or interval an option may ask for: anything longer is a unit
mistake (milliseconds for seconds), and ``1e10`` would overflow the clocks it is added to."""


def _shown(value: object) -> str:
    """``repr(value)``, cut short: the message names the option, it need not quote a megabyte."""
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _is_number(value: object) -> bool:
    """An int or a float, not a bool (``True`` is not a count of anything)."""
    return not isinstance(value, bool) and isinstance(value, (int, float))


def integer(name: str, value: object, *, minimum: int, maximum: Optional[int] = None) -> int:
    """``value`` as an integer from ``minimum`` to ``maximum`` (no upper bound when ``None``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or (
        maximum is not None and value > maximum
    ):
        upper = f" to {maximum:,}" if maximum is not None else " or more"
        raise ParameterError(f"{name} must be an integer from {minimum:,}{upper}, got {_shown(value)}", parameter=name)
    return int(value)


def positive_int(name: str, value: object, *, maximum: Optional[int] = None) -> int:
    """An integer of at least 1 (a count, a size in bytes), up to ``maximum``."""
    return integer(name, value, minimum=1, maximum=maximum)


def non_negative_int(name: str, value: object, *, maximum: Optional[int] = None) -> int:
    """An integer of at least 0 (a number of retries), up to ``maximum``."""
    return integer(name, value, minimum=0, maximum=maximum)


def _finite(
    name: str, value: object, *, maximum: float, allow_zero: bool, noun: str, label: Optional[str] = None
) -> float:
    """The rule of ``positive_float`` and ``seconds``: a finite ``noun`` above 0 (or at least
    0 with ``allow_zero``), at most ``maximum``; nan and infinity refused. ``label`` is what
    the message calls the value; ``name`` is the option, for ``.parameter``."""
    shown = label or name
    if not _is_number(value):
        raise ParameterError(f"{shown} must be a {noun}, got {_shown(value)}", parameter=name)
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number) or number < 0 or (number == 0 and not allow_zero) or number > maximum:
        lowest = "0 or more" if allow_zero else "more than 0"
        upper = f" and at most {maximum:g}" if math.isfinite(maximum) else ""
        raise ParameterError(f"{shown} must be a finite {noun}, {lowest}{upper}, got {_shown(value)}", parameter=name)
    return number


def positive_float(name: str, value: object, *, maximum: float = math.inf, allow_zero: bool = False) -> float:
    """A finite number above 0 (or at least 0 with ``allow_zero``), at most ``maximum``;
    nan and infinity are refused (a bound of infinity is no bound)."""
    return _finite(name, value, maximum=maximum, allow_zero=allow_zero, noun="number")


def seconds(
    name: str, value: object, *, maximum: float = ONE_DAY, allow_zero: bool = False, label: Optional[str] = None
) -> float:
    """A duration in seconds: finite, above 0 (or 0 with ``allow_zero``), at most one day
    unless ``maximum`` says otherwise. ``label`` is what the message calls it (a part of
    the option, ``timeout.read``); ``name`` is the option, for ``.parameter``."""
    return _finite(name, value, maximum=maximum, allow_zero=allow_zero, noun="number of seconds", label=label)


def optional_seconds(name: str, value: object, *, maximum: float = ONE_DAY, allow_zero: bool = False) -> Optional[float]:
    """``seconds``, or ``None`` where the option means "no bound"."""
    return None if value is None else seconds(name, value, maximum=maximum, allow_zero=allow_zero)


def flag(name: str, value: object) -> bool:
    """``True`` or ``False``; not a truthy string such as ``"false"``."""
    if not isinstance(value, bool):
        raise ParameterError(f"{name} must be True or False, got {_shown(value)}", parameter=name)
    return value


# One lazy-import helper for the packages' ``__init__`` modules (the shape of scientific-python's
# ``lazy_loader.attach``): each package maps its public names to their modules in one table,
# and ``__getattr__`` (PEP 562) and ``__dir__`` come from that table.
#
# Type checkers never see ``__getattr__`` (the packages define it under ``if not TYPE_CHECKING``,
# so a misspelt name is an error, not ``Any``): they read the explicit re-exports
# (``from ._client import SportsPosts as SportsPosts``) and the literal ``__all__``.
# ``attach`` refuses an ``__all__`` that is not the table's names, and
# tests/test_lazy_imports.py parses every package's ``__init__`` to check that
# the re-exports name the same objects from the same modules.

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


# Driving a sans-IO generator: the one helper every sync and async driver of the SDK uses.
#
# A flow (a call, a poller's steps, a budget's draw) is a generator that yields what to do
# and receives the answer; a driver performs each step and hands the answer back with
# ``advance`` until the flow is ``Done``.

T = TypeVar("T")
Y = TypeVar("Y")
S = TypeVar("S")


class Done(Generic[T]):
    """A finished generator's return value, as a driver receives it from ``advance``."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


def advance(flow: Generator[Y, S, T], answer: S) -> Union[Y, Done[T]]:
    """The flow's next step, or ``Done`` once it returns (its errors propagate).

    A new flow is started with ``None`` (its answer type always admits it)."""
    try:
        return flow.send(answer)
    except StopIteration as stop:
        return Done(stop.value)
