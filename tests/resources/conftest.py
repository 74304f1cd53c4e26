"""The client's fixtures (tests/client/conftest.py): the `api` mock and the sync/async `runner`."""

from __future__ import annotations

from tests.client.conftest import api, runner

__all__ = ["api", "runner"]
