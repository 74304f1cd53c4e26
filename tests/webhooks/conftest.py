"""Fixtures of the webhook tests."""

from __future__ import annotations

import pytest
from webhook_helpers import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    """A clock the test moves by hand."""
    return FakeClock()
