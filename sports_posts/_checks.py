"""Small validators of the options a caller gives a constructor or an adapter.

Each raises ``ParameterError`` naming the option, at the place the option is given: a
wrong type or an out-of-range number must fail at start-up, not turn every later
request into a 500 (or remove a bound in silence). They never echo a long value back,
and are never given a secret.
"""

from __future__ import annotations

import math
from typing import Optional

from ._errors import ParameterError

__all__ = [
    "ONE_DAY",
    "flag",
    "integer",
    "non_negative_int",
    "optional_seconds",
    "positive_float",
    "positive_int",
    "seconds",
]

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
