"""What a resource holds: the client that makes its calls, typed by a protocol so that
resources never import the client module."""

from __future__ import annotations

from typing import Generic, TypeVar

C = TypeVar("C")
T = TypeVar("T")


class Resource(Generic[C]):
    """A group of typed methods over one client (``SyncRequester`` or ``AsyncRequester``)."""

    def __init__(self, client: C) -> None:
        self._client = client


def same(value: T) -> T:
    """A method whose result is the parsed model itself (not a page built from it)."""
    return value
