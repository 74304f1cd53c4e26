"""One sandbox per module on loopback, with a manual clock so time moves only when told."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sports_posts.sandbox import Sandbox
from tests.runner import Runner


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(seed=11, clock="manual", posts=1500, author_shape="mixed") as sb:
        yield sb


@pytest.fixture(params=["sync", "async"])
def runner(request: pytest.FixtureRequest, sandbox: Sandbox) -> Runner:
    return Runner(request.param, api_key=sandbox.api_key, base_url=sandbox.base_url)
