"""A store call run under a bound of the test's own, for the fault and failover tests."""

from __future__ import annotations

import concurrent.futures
from typing import Any, Callable

import pytest

PATIENCE = 30.0
"""How long a test waits before calling a call unbounded: far past every store bound here."""


def bounded(call: Callable[[], Any]) -> Any:
    """``call()``'s result or exception; a call still running after ``PATIENCE`` is a failure."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(call)
        try:
            return future.exception(timeout=PATIENCE) or future.result()
        except concurrent.futures.TimeoutError:
            pytest.fail(f"the call was still waiting after {PATIENCE} s: unbounded")
