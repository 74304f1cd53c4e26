"""A local, seeded emulator of the whole Sports Posts service: ``with Sandbox(seed=7) as sb: ...``.

Needs the ``sandbox`` extra (starlette and uvicorn). See docs/sandbox.md.

The package imports none of its own modules at load time (each name loads on first use),
so that a thread importing ``sports_posts.sandbox.clock`` first never waits for a package
that waits for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._utils import attach

if TYPE_CHECKING:  # the same names, as explicit re-exports (`X as X`) that every checker accepts
    from ._connect import SandboxOptions as SandboxOptions
    from ._connect import aconnect as aconnect
    from ._connect import connect as connect
    from .clock import Clock as Clock
    from .clock import ManualClock as ManualClock
    from .clock import SystemClock as SystemClock
    from .config import BreakingNewsOptions as BreakingNewsOptions
    from .config import BurstLimit as BurstLimit
    from .config import ChaosSettings as ChaosSettings
    from .config import KeyChanges as KeyChanges
    from .config import KeyConfig as KeyConfig
    from .config import KeyOptions as KeyOptions
    from .config import SandboxState as SandboxState
    from .config import UpdateOptions as UpdateOptions
    from .sender import Delivery as Delivery
    from .sender import DeliveryAttempt as DeliveryAttempt
    from .sender import Subscription as Subscription
    from .sender import sign as sign
    from .server import AUTHOR_SHAPES as AUTHOR_SHAPES
    from .server import Sandbox as Sandbox
    from .world import Game as Game
    from .world import Player as Player
    from .world import Post as Post
    from .world import PostFields as PostFields
    from .world import Team as Team
    from .world import World as World

__all__ = [
    "AUTHOR_SHAPES",
    "BreakingNewsOptions",
    "BurstLimit",
    "ChaosSettings",
    "Clock",
    "Delivery",
    "DeliveryAttempt",
    "Game",
    "KeyChanges",
    "KeyConfig",
    "KeyOptions",
    "ManualClock",
    "Player",
    "Post",
    "PostFields",
    "Sandbox",
    "SandboxOptions",
    "SandboxState",
    "Subscription",
    "SystemClock",
    "Team",
    "UpdateOptions",
    "World",
    "aconnect",
    "connect",
    "sign",
]

# Each public name and the module that defines it, one a line: the run-time table.
_LAZY = {
    "SandboxOptions": "._connect",
    "aconnect": "._connect",
    "connect": "._connect",
    "Clock": ".clock",
    "ManualClock": ".clock",
    "SystemClock": ".clock",
    "BreakingNewsOptions": ".config",
    "BurstLimit": ".config",
    "ChaosSettings": ".config",
    "KeyChanges": ".config",
    "KeyConfig": ".config",
    "KeyOptions": ".config",
    "SandboxState": ".config",
    "UpdateOptions": ".config",
    "Delivery": ".sender",
    "DeliveryAttempt": ".sender",
    "Subscription": ".sender",
    "sign": ".sender",
    "AUTHOR_SHAPES": ".server",
    "Sandbox": ".server",
    "Game": ".world",
    "Player": ".world",
    "Post": ".world",
    "PostFields": ".world",
    "Team": ".world",
    "World": ".world",
}

if not TYPE_CHECKING:  # at run time only: a checker reads the imports above
    __getattr__, __dir__ = attach(__name__, _LAZY, __all__)
