"""Driving a sans-IO generator: the one helper every sync and async driver of the SDK uses.

A flow (a call, a poller's steps, a budget's draw) is a generator that yields what to do
and receives the answer; a driver performs each step and hands the answer back with
``advance`` until the flow is ``Done``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Generic, TypeVar, Union

__all__ = ["Done", "advance"]

T = TypeVar("T")
Y = TypeVar("Y")
S = TypeVar("S")


class Done(Generic[T]):
    """A finished generator's return value, as a driver receives it from ``advance``."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


def advance(flow: Generator[Y, S, T], answer: S) -> Union[Y, Done[T]]:
    """The flow's next step, or ``Done`` once it returns (its errors propagate).

    A new flow is started with ``None`` (its answer type always admits it)."""
    try:
        return flow.send(answer)
    except StopIteration as stop:
        return Done(stop.value)
