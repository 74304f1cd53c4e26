"""The modes of GET /posts that parameters select (spec 4.1): one table for the SDK's
combined-modes warning, its telemetry and the sandbox's strict refusal."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["MODE_PARAMETERS", "modes_given"]

MODE_PARAMETERS: Mapping[str, tuple[str, ...]] = {
    "team": ("teams",),
    "player": ("players",),
    "nearby": ("lat", "lng"),
    "game": ("match", "start_time"),
}
"""The parameters that select each mode (besides trending and league), the mode's own first."""


def modes_given(names: Iterable[str]) -> list[str]:
    """The modes whose selecting parameters appear among ``names``, in the table's order."""
    given = set(names)
    return [mode for mode, params in MODE_PARAMETERS.items() if given.intersection(params)]
