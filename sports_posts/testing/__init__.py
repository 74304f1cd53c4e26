"""Helpers for customers' own tests: the pytest plugin's fixtures and an ASGI app served on loopback.

The pytest plugin (`sports_posts.testing.pytest_plugin`) is registered through the
``pytest11`` entry point; its fixtures need the ``sandbox`` extra. See docs/testing.md.
"""

from __future__ import annotations

from ._serve import serve_asgi

__all__ = ["serve_asgi"]
