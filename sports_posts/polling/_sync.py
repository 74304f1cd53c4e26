"""``Poller``: performs the poller's steps with a sync client and a thread's time."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import TYPE_CHECKING, Callable, Optional, Union

from typing_extensions import Unpack

from .._errors import SportsPostsError
from .._request import APICall
from .._utils import Done, advance
from ..models.post import Post, PostsResponse
from ._algorithm import Deliver, log
from ._base import Acquire, PollerBase, PollerOptions, Renew, as_is, raw_view
from ._lease import LeaseLostError
from ._state import PollState

if TYPE_CHECKING:
    from .._base_client import SyncAPIClient

__all__ = ["Poller"]


class Poller(PollerBase):
    """Delivers every post matching the filters once, in batches, each oldest first.

    Iterate it: ``for batch in poller``. The checkpoint advances only when the next batch
    is asked for (or on ``close()`` / a clean ``with`` exit), so a crash while handling a
    batch repeats that batch and loses nothing. Retries are the poller's own (its client
    has ``max_retries=0``): 429 waits ``Retry-After``, 5xx and connection errors back off,
    every other error is raised.

    ``clock`` and ``sleep`` exist for tests and simulations; the default sleep returns at
    once when ``stop()`` is called from another thread.
    """

    def __init__(
        self,
        client: SyncAPIClient,
        *,
        sleep: Optional[Callable[[float], object]] = None,  # what it returns is ignored
        **options: Unpack[PollerOptions],
    ) -> None:
        self._setup(**options)
        self._client = raw_view(client.with_options(max_retries=0))
        self._wake = threading.Event()
        self._sleep = sleep  # None: the interruptible sleep (no bound method kept: no cycle)

    def _interruptible_sleep(self, seconds: float) -> None:
        self._wake.wait(seconds)

    def stop(self) -> None:
        """End the loop after the current cycle (a wait in progress ends at once). Thread-safe."""
        self._stopping = True
        self._wake.set()

    def __iter__(self) -> Poller:
        return self

    def __next__(self) -> list[Post]:
        with self._stepping() as steps:
            step = advance(steps, None)  # begins the steps, or answers the batch handed out last
            while not isinstance(step, (Deliver, Done)):
                step = advance(steps, self._perform(step))
        return self._handed(step, StopIteration)

    def close(self) -> None:
        """Commit the batch the consumer holds (it is done with it), end the loop and
        release the lease, if any."""
        self.stop()
        try:
            if self._pending is not None:
                self._commit(self._pending)
            if self._run is not None:
                self._run.close()
        finally:
            if self._lease is not None and self._lease.token is not None:
                try:
                    self._lease.release()
                except SportsPostsError as exc:  # it expires on its own within the TTL
                    log.warning("lease %r not released: %s", self._lease.key, exc)

    def __enter__(self) -> Poller:
        return self

    def __exit__(
        self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        if exc_type is not None:
            # The batch in hand may be half handled: leave it uncommitted so it repeats.
            self._pending = None
        self.close()

    def _pause(self, seconds: float) -> None:
        (self._sleep or self._interruptible_sleep)(seconds)

    def _commit(self, state: PollState) -> None:
        try:
            self._checkpoint.save(state)
        except LeaseLostError:
            self._pending = None  # the new holder delivers this batch again
            raise
        self._committed(state)

    def _load(self, token: Optional[int]) -> Optional[PollState]:
        if token is not None:
            assert self._fenced is not None  # a token comes with a lease, checked by _setup
            self._fenced.fence(token)
        return self._checkpoint.load()

    def _lease_step(self, step: Union[Acquire, Renew]) -> object:
        assert self._lease is not None
        try:
            return self._lease.acquire() if isinstance(step, Acquire) else self._lease.renew()
        except SportsPostsError as exc:  # handed to the steps, which decide
            return exc

    def _fetch(self, call: APICall[PostsResponse]) -> object:
        try:
            return self._client._result(call, as_is)  # a RawResponse: its Date dates the service
        except Exception as exc:  # handed to the algorithm, which raises what it cannot retry
            return exc
