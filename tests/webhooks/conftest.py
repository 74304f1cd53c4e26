"""Fixtures of the webhook tests."""

from __future__ import annotations

import pytest

from tests.webhooks.webhook_helpers import FakeClock, Recorder


@pytest.fixture
def clock() -> FakeClock:
    """A clock the test moves by hand."""
    return FakeClock()


@pytest.fixture
def recorder() -> Recorder:
    """A handler that records the events it receives."""
    return Recorder()
