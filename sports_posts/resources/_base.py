"""What a resource holds: the client that sends its calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._client import AsyncSportsPosts, SportsPosts


class SyncResource:
    def __init__(self, client: SportsPosts) -> None:
        self._client = client


class AsyncResource:
    def __init__(self, client: AsyncSportsPosts) -> None:
        self._client = client
