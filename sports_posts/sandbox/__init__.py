"""A local, seeded emulator of the whole Sports Posts service: ``with Sandbox(seed=7) as sb: ...``.

Needs the ``sandbox`` extra (starlette and uvicorn). See docs/sandbox.md.
"""

from __future__ import annotations

from ._connect import aconnect, connect
from .clock import Clock, ManualClock, SystemClock
from .config import BurstLimit, ChaosSettings, KeyConfig
from .sender import Delivery, DeliveryAttempt, Subscription, sign
from .server import AUTHOR_SHAPES, Sandbox
from .world import Game, Player, Post, Team, World

__all__ = [
    "AUTHOR_SHAPES",
    "BurstLimit",
    "ChaosSettings",
    "Clock",
    "Delivery",
    "DeliveryAttempt",
    "Game",
    "KeyConfig",
    "ManualClock",
    "Player",
    "Post",
    "Sandbox",
    "Subscription",
    "SystemClock",
    "Team",
    "World",
    "aconnect",
    "connect",
    "sign",
]
