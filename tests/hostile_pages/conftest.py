"""The core tests' fixtures: each hostile answer is tried on the sync and the async client."""

from tests.core.conftest import api, runner

__all__ = ["api", "runner"]
