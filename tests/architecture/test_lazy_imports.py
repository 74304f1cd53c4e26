"""What a bare ``import sports_posts`` costs: the errors only, every other name on first use."""

from __future__ import annotations

import subprocess
import sys

import sports_posts

PROBE = """
import sys
import sports_posts
heavy = [m for m in ("httpx", "pydantic.main", "asyncio", "anyio", "sports_posts._client") if m in sys.modules]
print(",".join(heavy))
"""


def test_import_sports_posts_loads_neither_the_http_stack_nor_the_models() -> None:
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == ""


def test_every_public_name_resolves_and_dir_lists_them() -> None:
    for name in sports_posts.__all__:
        assert getattr(sports_posts, name) is not None
    assert set(sports_posts.__all__) <= set(dir(sports_posts))


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        sports_posts.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("an unknown attribute resolved")
