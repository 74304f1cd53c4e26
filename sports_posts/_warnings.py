"""The SDK's warnings: requests it sends although the specification does not define their answer.

A warning rather than an error: the service may well answer such a request, and a caller may
know what it does; but nothing in the specification says what, so code should not rely on it.
"""

from __future__ import annotations

__all__ = ["CombinedModesWarning", "SportsPostsWarning"]

class SportsPostsWarning(UserWarning):
    """Base class of the SDK's warnings (``warnings.simplefilter("error", SportsPostsWarning)``
    turns them into errors, say in a test suite)."""


class CombinedModesWarning(SportsPostsWarning):
    """Parameters of several modes of GET /posts in one request (say ``teams`` with ``lat``).

    The SDK refuses such a request with a ``ParameterError`` before sending it (the service
    refuses it too); this class stays importable so that warning filters naming it keep
    working."""
