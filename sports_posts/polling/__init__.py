"""Polling GET /posts for new posts: every post once, in batches, oldest first.

The algorithm (``._algorithm``) is written once without I/O; ``Poller`` and
``AsyncPoller`` only run its actions. See docs/pagination-and-polling.md.
"""

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
from ._sync import Poller
from .checkpoints import (
    Checkpoint,
    CheckpointConflictError,
    FileCheckpoint,
    MemoryCheckpoint,
    RedisCheckpoint,
)

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_LOOKBACK",
    "Action",
    "AsyncPoller",
    "Checkpoint",
    "CheckpointConflictError",
    "CheckpointError",
    "Commit",
    "Deliver",
    "Fetch",
    "FileCheckpoint",
    "MemoryCheckpoint",
    "PollConfig",
    "PollFilters",
    "PollState",
    "Poller",
    "RedisCheckpoint",
    "Sleep",
    "poll_cycles",
]
