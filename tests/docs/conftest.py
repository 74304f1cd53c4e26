"""The documentation site, built once per test run for every test that reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .site import build_site


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mkdocs build --strict`` (what CI builds) into a temp directory; its path."""
    destination = tmp_path_factory.mktemp("site")
    done = build_site(destination)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return destination
