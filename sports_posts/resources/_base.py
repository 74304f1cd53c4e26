"""What every resource shares: the client shell that makes its calls, and the wrappers of
its raw view.

A resource's raw view is written next to it, one line per method, as openai-python writes
it (``self.list = to_raw_response_wrapper(posts.list)``): the method of the same resource
over a raw copy of the client, whose answers already are ``RawResponse``, re-typed by a
ParamSpec wrapper that keeps every parameter and changes only the answer's type.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Callable, Generic, Optional, TypeVar, Union, cast

from typing_extensions import ParamSpec, Self, TypedDict

if TYPE_CHECKING:
    from .._base_client import AsyncAPIClient, SyncAPIClient
    from .._http import Timeout
    from .._transport import RawResponse

__all__ = [
    "AsyncResource",
    "ClientOptions",
    "Resource",
    "SyncResource",
    "async_to_raw_response_wrapper",
    "same",
    "to_raw_response_wrapper",
]

C = TypeVar("C", "SyncAPIClient", "AsyncAPIClient")
T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")


class Resource(Generic[C]):
    """A group of typed methods over one client shell (sync or async)."""

    def __init__(self, client: C) -> None:
        self._client: C = client

    def _raw_twin(self) -> Self:
        """This resource over a raw copy of its client (same pool, same call counter)."""
        return type(self)(self._client._copy(self._client._config, raw=True))


class SyncResource(Resource["SyncAPIClient"]):
    """A resource of ``SportsPosts``."""


class AsyncResource(Resource["AsyncAPIClient"]):
    """A resource of ``AsyncSportsPosts``."""


def same(value: T) -> T:
    """A method whose result is the parsed model itself (not a page built from it)."""
    return value


class ClientOptions(TypedDict, total=False):
    """What ``with_options`` changes on a client: its bounds."""

    timeout: Union[float, Timeout]
    max_retries: int
    total_timeout: Optional[float]
    max_response_bytes: int


# The wrappers cost nothing per call: the method they are given belongs to a raw twin,
# which already answers the RawResponse; only its declared answer changes.
def to_raw_response_wrapper(func: Callable[P, R]) -> Callable[P, RawResponse[R]]:
    """A raw twin's method, typed as answering the ``RawResponse`` around ``R``."""
    return cast("Callable[P, RawResponse[R]]", func)


def async_to_raw_response_wrapper(func: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[RawResponse[R]]]:
    """A raw async twin's coroutine method, typed as awaiting the ``RawResponse``."""
    return cast("Callable[P, Awaitable[RawResponse[R]]]", func)
