"""The compliance sweep: delete from the customer's storage what GET /account/x-ids lists.

The decisions (which ids are still to delete, what to remember) are plain functions; the
sync and async sweepers only fetch the list, call the customer's ``delete`` and save.
What was handled is kept in the poller's checkpoint kinds, as a ``PollState`` whose
``seen`` holds the handled ids still on the list: bounded by the list itself, since an
id that has left the list is forgotten (the list is cumulative, so that id will not
come back; if it did, deleting it twice is harmless).

The promise is at-least-once: ``delete`` is called for every listed id until a sweep
records it as handled; a crash between a delete and the save repeats that delete, so
``delete`` must accept an id it has already deleted (or never stored).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from .. import _endpoints
from .._errors import ParameterError, SportsPostsError
from ..models.account import ComplianceList
from ..polling._state import CheckpointError, PollState
from ..polling.checkpoints import Checkpoint, MemoryCheckpoint, hold, release

if TYPE_CHECKING:
    from .._base_client import AsyncAPIClient, SyncAPIClient

__all__ = [
    "DEFAULT_CADENCE",
    "AsyncComplianceSweeper",
    "ComplianceSweepError",
    "ComplianceSweeper",
    "SweepResult",
    "cadence_for_plan",
]

log: logging.Logger = logging.getLogger("sports_posts.compliance")


MARK = "sports_posts:compliance_sweep"
"""Stored as the state's ``since_id``: tells a sweep's state from a poller's."""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

DEFAULT_CADENCE = timedelta(days=1)
"""The spec names daily, weekly or monthly by plan without saying which plan gets which;
daily is the most frequent of the three, so it is never late whatever the plan's is."""

_CADENCE_BY_PLAN: dict[str, timedelta] = {}
"""Plans whose cadence is known to be longer than a day; none is documented yet."""

MIN_EVERY = timedelta(minutes=1)
MAX_EVERY = timedelta(days=31)

SAVE_EVERY = 100
"""Handled ids between two saves: a crash repeats at most this many deletes."""


def cadence_for_plan(plan: Optional[str]) -> timedelta:
    """How often to sweep on ``plan`` (``AccountInformation.company.plan``): daily
    unless the plan is known to allow longer."""
    return _CADENCE_BY_PLAN.get((plan or "").lower(), DEFAULT_CADENCE)


class ComplianceSweepError(SportsPostsError):
    """The customer's ``delete`` failed for ``post_id``; the sweep stopped there.

    Ids handled before it are saved to the checkpoint (without one, kept in the sweeper's
    memory only); ``post_id`` is not, so the next sweep starts with it. The callback's
    exception is the ``__cause__``.
    """

    def __init__(self, message: str, *, post_id: str, deleted: tuple[str, ...]) -> None:
        super().__init__(message)
        self.post_id = post_id
        self.deleted = deleted


@dataclass(frozen=True)
class SweepResult:
    """What one sweep did: the list's ``as_of``, the ids handed to ``delete`` (in list
    order), and how many listed ids an earlier sweep had handled already."""

    as_of: Optional[datetime]
    deleted: tuple[str, ...]
    already_handled: int

    @property
    def listed(self) -> int:
        """Ids on the list."""
        return len(self.deleted) + self.already_handled


# -- decisions (no I/O) ------------------------------------------------------------------


def handled_ids(state: Optional[PollState]) -> set[str]:
    """The ids a stored sweep state records as handled; ``CheckpointError`` when the
    checkpoint holds a poller's state instead (one checkpoint per job)."""
    if state is None:
        return set()
    if state.since_id != MARK:
        raise CheckpointError(
            "this checkpoint holds a poller's state, not a compliance sweep's: give the sweep "
            "its own checkpoint (another file or key)"
        )
    return set(state.seen)


def to_delete(listing: ComplianceList, handled: Iterable[str]) -> list[str]:
    """The listed ids not handled yet, in list order, each once."""
    done = set(handled)
    out: list[str] = []
    for post_id in listing.ids_to_delete:
        if post_id not in done:
            done.add(post_id)
            out.append(post_id)
    return out


def state_of(listing: ComplianceList, handled: Iterable[str]) -> PollState:
    """The state to store: the handled ids that are still on the list, dated ``as_of``."""
    at = listing.as_of or _EPOCH
    on_list = set(listing.ids_to_delete)
    seen = {i: at for i in handled if i in on_list}
    return PollState(watermark=at, floor=at, seen=seen, since_id=MARK, since_id_created_at=at)


def _seconds(every: Union[float, timedelta, None]) -> float:
    """``every`` checked: a cadence between a minute and a month."""
    if every is None:
        return DEFAULT_CADENCE.total_seconds()
    if isinstance(every, timedelta):
        value = every.total_seconds()
    elif isinstance(every, (int, float)) and not isinstance(every, bool):
        value = float(every)
    else:
        raise ParameterError(f"every: expected seconds or a timedelta, got {type(every).__name__}")
    if not MIN_EVERY.total_seconds() <= value <= MAX_EVERY.total_seconds():  # also refuses NaN
        raise ParameterError(f"every: must be between {MIN_EVERY} and {MAX_EVERY}, got {value!r} seconds")
    return value


def _failed(post_id: str, exc: BaseException, deleted: list[str], *, saved: bool) -> ComplianceSweepError:
    """The error of a failed ``delete``: what failed, and what is kept of the ids before it
    (saved to the checkpoint, or only in this sweeper's memory when it has none)."""
    reason = str(exc)
    reason = f"{type(exc).__name__}: {reason[:197] + '...' if len(reason) > 200 else reason}" if reason \
        else type(exc).__name__
    handled = f"{len(deleted)} {'id' if len(deleted) == 1 else 'ids'} handled before it"
    kept = (f"{handled} {'is' if len(deleted) == 1 else 'are'} saved and the next sweep starts with {post_id!r}"
            if saved else
            f"{handled} {'is' if len(deleted) == 1 else 'are'} kept in this sweeper's memory only (no "
            "checkpoint): another sweeper starts over")
    return ComplianceSweepError(
        f"delete({post_id!r}) failed with {reason}: the sweep stopped there; {kept}",
        post_id=post_id,
        deleted=tuple(deleted),
    )


def _done(listing: ComplianceList, deleted: list[str], pending: list[str]) -> SweepResult:
    before = len(set(listing.ids_to_delete)) - len(pending)
    log.info("compliance sweep: %d ids deleted, %d handled by earlier sweeps", len(deleted), before)
    return SweepResult(listing.as_of, tuple(deleted), before)


class _SweeperBase:
    def __init__(self, client: Any, delete: Callable[[str], object], checkpoint: Optional[Checkpoint],
                 every: Union[float, timedelta, None]) -> None:
        if not callable(delete):
            raise ParameterError("delete: expected a callable that takes a post id")
        self._client = client
        self._delete = delete
        self._checkpoint: Checkpoint = checkpoint if checkpoint is not None else MemoryCheckpoint()
        self._saves = checkpoint is not None
        self.every: float = _seconds(every)
        self._stopping = False
        self.sweeps = 0
        """Sweeps completed by this sweeper."""

    def _stopped(self) -> bool:
        return self._stopping

    def __repr__(self) -> str:
        return f"{type(self).__name__}(checkpoint={self._checkpoint!r}, every={self.every!r})"


class ComplianceSweeper(_SweeperBase):
    """Calls ``delete(post_id)`` once for every id of GET /account/x-ids, across restarts.

    ``sweep()`` runs once; ``run_forever()`` sweeps every ``every`` seconds (default: a
    day) until ``stop()``. Made by ``client.account.compliance_sweeper(...)``.
    """

    def __init__(self, client: SyncAPIClient, *, delete: Callable[[str], object], checkpoint: Optional[Checkpoint] = None,
                 every: Union[float, timedelta, None] = None,
                 sleep: Optional[Callable[[float], None]] = None) -> None:
        super().__init__(client, delete, checkpoint, every)
        self._wake = threading.Event()
        self._sleep = sleep or self._wake.wait

    def stop(self) -> None:
        """End ``run_forever`` after the current sweep (a wait in progress ends at once)."""
        self._stopping = True
        self._wake.set()

    def sweep(self) -> SweepResult:
        """Fetch the list and delete what no earlier sweep handled; ``ComplianceSweepError``
        when ``delete`` raises (what was handled before it is saved)."""
        hold(self._checkpoint)
        try:
            handled = handled_ids(self._checkpoint.load())
            listing: ComplianceList = self._client._request(_endpoints.account_x_ids())
            pending = to_delete(listing, handled)
            deleted: list[str] = []
            for post_id in pending:
                try:
                    self._delete(post_id)
                except Exception as exc:
                    self._checkpoint.save(state_of(listing, handled))
                    raise _failed(post_id, exc, deleted, saved=self._saves) from exc
                handled.add(post_id)
                deleted.append(post_id)
                if len(deleted) % SAVE_EVERY == 0:
                    self._checkpoint.save(state_of(listing, handled))
            self._checkpoint.save(state_of(listing, handled))
        finally:
            release(self._checkpoint)
        self.sweeps += 1
        return _done(listing, deleted, pending)

    def run_forever(self) -> None:
        """Sweep now and then every ``every`` seconds until ``stop()``; an error ends it."""
        while not self._stopped():
            self.sweep()
            if self._stopped():
                break
            self._sleep(self.every)


class AsyncComplianceSweeper(_SweeperBase):
    """The async twin of [`ComplianceSweeper`][sports_posts.ComplianceSweeper]: ``delete``
    may be a coroutine function; checkpoint I/O runs in a worker thread (a
    ``MemoryCheckpoint``'s in place)."""

    def __init__(self, client: AsyncAPIClient, *, delete: Callable[[str], object], checkpoint: Optional[Checkpoint] = None,
                 every: Union[float, timedelta, None] = None,
                 sleep: Optional[Callable[[float], Awaitable[None]]] = None) -> None:
        super().__init__(client, delete, checkpoint, every)
        self._wake: Optional[asyncio.Event] = None
        self._sleep = sleep or self._wait

    async def _wait(self, seconds: float) -> None:
        self._wake = self._wake or asyncio.Event()
        try:
            await asyncio.wait_for(self._wake.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    def stop(self) -> None:
        """End ``run_forever`` after the current sweep; call it on the event loop's thread."""
        self._stopping = True
        if self._wake is not None:
            self._wake.set()

    async def _io(self, fn: Callable[..., Any], *args: Any) -> Any:
        if isinstance(self._checkpoint, MemoryCheckpoint):
            return fn(*args)
        import anyio.to_thread

        return await anyio.to_thread.run_sync(fn, *args)

    async def sweep(self) -> SweepResult:
        """Fetch the list and delete what no earlier sweep handled (see the sync twin)."""
        await self._io(hold, self._checkpoint)
        try:
            handled = handled_ids(await self._io(self._checkpoint.load))
            listing: ComplianceList = await self._client._request(_endpoints.account_x_ids())
            pending = to_delete(listing, handled)
            deleted: list[str] = []
            for post_id in pending:
                try:
                    result = self._delete(post_id)
                    if asyncio.iscoroutine(result):
                        await result
                except Exception as exc:
                    await self._io(self._checkpoint.save, state_of(listing, handled))
                    raise _failed(post_id, exc, deleted, saved=self._saves) from exc
                handled.add(post_id)
                deleted.append(post_id)
                if len(deleted) % SAVE_EVERY == 0:
                    await self._io(self._checkpoint.save, state_of(listing, handled))
            await self._io(self._checkpoint.save, state_of(listing, handled))
        finally:
            await self._io(release, self._checkpoint)
        self.sweeps += 1
        return _done(listing, deleted, pending)

    async def run_forever(self) -> None:
        """Sweep now and then every ``every`` seconds until ``stop()``; an error ends it."""
        while not self._stopped():
            await self.sweep()
            if self._stopped():
                break
            await self._sleep(self.every)
