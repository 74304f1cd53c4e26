"""The SDK's warnings: requests it sends although the specification does not define their answer.

A warning rather than an error: the service may well answer such a request, and a caller may
know what it does; but nothing in the specification says what, so code should not rely on it.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Collection
from types import FrameType
from typing import Optional

from ._modes import MODE_PARAMETERS, modes_given

__all__ = ["CombinedModesWarning", "SportsPostsWarning", "warn_combined_modes"]

class SportsPostsWarning(UserWarning):
    """Base class of the SDK's warnings (``warnings.simplefilter("error", SportsPostsWarning)``
    turns them into errors, say in a test suite)."""


class CombinedModesWarning(SportsPostsWarning):
    """A GET /posts request combines parameters of several modes (say ``teams`` with ``lat``):
    the specification does not show what the service answers, and the strict sandbox refuses it."""


def _caller_level() -> int:
    """The stacklevel of the first frame outside the SDK, so the warning names the caller's line."""
    level = 2
    frame: Optional[FrameType] = sys._getframe(2)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module != "sports_posts" and not module.startswith("sports_posts."):
            break
        frame = frame.f_back
        level += 1
    return level


def warn_combined_modes(given: Collection[str]) -> None:
    """Warn (``CombinedModesWarning``) when ``given`` names parameters of more than one mode."""
    modes = modes_given(given)
    if len(modes) < 2:
        return
    sent = ", ".join(n for mode in modes for n in MODE_PARAMETERS[mode] if n in given)
    warnings.warn(
        f"GET /posts with parameters of several modes ({sent}: the "
        f"{' and '.join(modes)} modes): the specification does not "
        "define the answer to such a combination; send one mode per request",
        CombinedModesWarning,
        stacklevel=_caller_level(),
    )
