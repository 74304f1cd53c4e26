"""The sandbox's profiles: how it reads what the specification leaves open.

``strict`` (the default) takes, for every discrepancy and every "not shown" of the
specification, the reading least forgiving to the client, so that code passing against the
sandbox does not meet a form, a value or an answer in production that it never met in its
tests. ``lenient`` reads each open point in the client's favour, for demos.
docs/sandbox.md has the table of every such rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .._errors import ParameterError
from .._vocabulary import MODE_PARAMETERS
from .._vocabulary import modes_given as combined_modes

__all__ = ["MODE_PARAMETERS", "PROFILES", "Profile", "combined_modes", "profile_named"]

@dataclass(frozen=True)
class Profile:
    """What one profile does where the specification gives two readings or none."""

    name: str
    author_shape: str
    """Author form of posts unless ``author_shape=`` says otherwise: one form per post, or both."""
    refuse_combined_modes: bool
    """Parameters of several modes in one GET /posts: 400 (strict) or some silently dropped."""
    games_exact: bool
    """Game mode: that scheduled game's posts only (strict), or either team in a time window."""
    draw_news_status: bool
    """Breaking news without ``news_status=``: drawn from verified, rumor and the sample's
    confirmed (strict), or always verified."""


PROFILES: Mapping[str, Profile] = {
    "strict": Profile("strict", "mixed", True, True, True),
    "lenient": Profile("lenient", "both", False, False, False),
}


def profile_named(name: str) -> Profile:
    """The profile called ``name``; ParameterError naming the choices otherwise."""
    found = PROFILES.get(name) if isinstance(name, str) else None
    if found is None:
        raise ParameterError(f"profile must be one of {', '.join(PROFILES)}", parameter="profile")
    return found
