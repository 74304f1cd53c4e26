"""Polling GET /posts for new posts: every post once, in batches, oldest first.

The algorithm (``._algorithm``) is written once without I/O; ``Poller`` and
``AsyncPoller`` only run its actions. See docs/pagination-and-polling.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
    from .._params import PollFilters
    from ._algorithm import (
        Action,
        Commit,
        Deliver,
        Fetch,
        Sleep,
        poll_cycles,
    )
    from ._async import AsyncPoller
    from ._config import DEFAULT_LIMIT, DEFAULT_LOOKBACK, PollConfig
    from ._lease import (
        Lease,
        LeaseLostError,
        LeaseStatus,
    )
    from ._postgres import PostgresCheckpoint
    from ._skew import ClockSkew
    from ._state import CheckpointError, PollState
    from ._sync import Poller
    from .checkpoints import (
        Checkpoint,
        CheckpointConflictError,
        CheckpointLockedError,
        CheckpointMismatchError,
        FileCheckpoint,
        MemoryCheckpoint,
        RedisCheckpoint,
    )

# Each public name and the module that defines it, one a line.
__getattr__, __dir__, __all__ = attach(__name__, {
    "Action": "._algorithm",
    "AsyncPoller": "._async",
    "Checkpoint": ".checkpoints",
    "CheckpointConflictError": ".checkpoints",
    "CheckpointLockedError": ".checkpoints",
    "CheckpointMismatchError": ".checkpoints",
    "CheckpointError": "._state",
    "ClockSkew": "._skew",
    "Commit": "._algorithm",
    "DEFAULT_LIMIT": "._config",
    "DEFAULT_LOOKBACK": "._config",
    "Deliver": "._algorithm",
    "Fetch": "._algorithm",
    "FileCheckpoint": ".checkpoints",
    "Lease": "._lease",
    "LeaseLostError": "._lease",
    "LeaseStatus": "._lease",
    "MemoryCheckpoint": ".checkpoints",
    "PollConfig": "._config",
    "PollFilters": ".._params",
    "PollState": "._state",
    "Poller": "._sync",
    "RedisCheckpoint": ".checkpoints",
    "Sleep": "._algorithm",
    "poll_cycles": "._algorithm",
    "PostgresCheckpoint": "._postgres",
}, eager=(".._params", "._algorithm", "._async", "._config", "._lease", "._skew", "._state", "._sync", ".checkpoints"))
