"""A local, seeded emulator of the whole Sports Posts service: ``with Sandbox(seed=7) as sb: ...``.

Needs the ``sandbox`` extra (starlette and uvicorn). See docs/sandbox.md.
"""

from __future__ import annotations

from ._connect import SandboxOptions, aconnect, connect
from .clock import Clock, ManualClock, SystemClock
from .config import (
    BreakingNewsOptions,
    BurstLimit,
    ChaosSettings,
    KeyChanges,
    KeyConfig,
    KeyOptions,
    UpdateOptions,
)
from .sender import Delivery, DeliveryAttempt, Subscription, sign
from .server import AUTHOR_SHAPES, Sandbox
from .world import Game, Player, Post, Team, World

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
    "Sandbox",
    "SandboxOptions",
    "Subscription",
    "SystemClock",
    "Team",
    "UpdateOptions",
    "World",
    "aconnect",
    "connect",
    "sign",
]
