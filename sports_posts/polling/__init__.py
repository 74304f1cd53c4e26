"""Polling GET /posts for new posts: every post once, in batches, oldest first.

The algorithm (``._algorithm``) is written once without I/O; ``Poller`` and
``AsyncPoller`` only run its actions. See docs/pagination-and-polling.md.
"""

from typing import TYPE_CHECKING

from .._params import PollFilters
from ._algorithm import (
    DEFAULT_LIMIT,
    DEFAULT_LOOKBACK,
    Action,
    CheckpointError,
    Commit,
    Deliver,
    Fetch,
    PollConfig,
    PollState,
    Sleep,
    poll_cycles,
)
from ._async import AsyncPoller
from ._lease import Lease, LeaseLostError, LeaseStatus
from ._skew import ClockSkew
from ._sync import Poller
from .checkpoints import (
    Checkpoint,
    CheckpointConflictError,
    FileCheckpoint,
    MemoryCheckpoint,
    RedisCheckpoint,
)

if TYPE_CHECKING:
    from ._postgres import PostgresCheckpoint


def __getattr__(name: str) -> object:
    # PostgresCheckpoint loads on first use, like the rest of the package's names.
    if name == "PostgresCheckpoint":
        from ._postgres import PostgresCheckpoint

        return PostgresCheckpoint
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_LOOKBACK",
    "Action",
    "AsyncPoller",
    "Checkpoint",
    "CheckpointConflictError",
    "CheckpointError",
    "ClockSkew",
    "Commit",
    "Deliver",
    "Fetch",
    "FileCheckpoint",
    "Lease",
    "LeaseLostError",
    "LeaseStatus",
    "MemoryCheckpoint",
    "PollConfig",
    "PollFilters",
    "PollState",
    "Poller",
    "PostgresCheckpoint",
    "RedisCheckpoint",
    "Sleep",
    "poll_cycles",
]
