"""Polling GET /posts for new posts: every post once, in batches, oldest first.

The algorithm (``._algorithm``) is written once without I/O; ``Poller`` and
``AsyncPoller`` only run its actions. See docs/pagination-and-polling.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._utils import attach

if TYPE_CHECKING:  # the same names, as explicit re-exports (`X as X`) that every checker accepts
    from .._params import PollFilters as PollFilters
    from ._algorithm import Action as Action
    from ._algorithm import Commit as Commit
    from ._algorithm import Deliver as Deliver
    from ._algorithm import Fetch as Fetch
    from ._algorithm import Sleep as Sleep
    from ._algorithm import poll_cycles as poll_cycles
    from ._async import AsyncPoller as AsyncPoller
    from ._config import DEFAULT_LIMIT as DEFAULT_LIMIT
    from ._config import DEFAULT_LOOKBACK as DEFAULT_LOOKBACK
    from ._config import PollConfig as PollConfig
    from ._lease import Lease as Lease
    from ._lease import LeaseLostError as LeaseLostError
    from ._lease import LeaseStatus as LeaseStatus
    from ._skew import ClockSkew as ClockSkew
    from ._state import CheckpointError as CheckpointError
    from ._state import PollState as PollState
    from ._sync import Poller as Poller
    from .checkpoints import Checkpoint as Checkpoint
    from .checkpoints import CheckpointConflictError as CheckpointConflictError
    from .checkpoints import CheckpointLockedError as CheckpointLockedError
    from .checkpoints import CheckpointMismatchError as CheckpointMismatchError
    from .checkpoints import FencedCheckpoint as FencedCheckpoint
    from .checkpoints import FileCheckpoint as FileCheckpoint
    from .checkpoints import MemoryCheckpoint as MemoryCheckpoint
    from .checkpoints import PostgresCheckpoint as PostgresCheckpoint
    from .checkpoints import RedisCheckpoint as RedisCheckpoint

__all__ = [
    "Action",
    "AsyncPoller",
    "Checkpoint",
    "CheckpointConflictError",
    "CheckpointError",
    "CheckpointLockedError",
    "CheckpointMismatchError",
    "ClockSkew",
    "Commit",
    "DEFAULT_LIMIT",
    "DEFAULT_LOOKBACK",
    "Deliver",
    "FencedCheckpoint",
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

# Each public name and the module that defines it, one a line: the run-time table.
# tests/test_lazy_imports.py checks that it, __all__ and the imports above name the same things.
_LAZY = {
    "Action": "._algorithm",
    "AsyncPoller": "._async",
    "Checkpoint": ".checkpoints",
    "CheckpointConflictError": ".checkpoints",
    "CheckpointLockedError": ".checkpoints",
    "CheckpointMismatchError": ".checkpoints",
    "FencedCheckpoint": ".checkpoints",
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
    "PostgresCheckpoint": ".checkpoints",
}

if not TYPE_CHECKING:  # at run time only: a checker reads the imports above
    __getattr__, __dir__ = attach(__name__, _LAZY, __all__, eager=(".._params",))
