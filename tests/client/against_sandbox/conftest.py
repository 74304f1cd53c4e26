"""One sandbox per module on loopback, with a manual clock so time moves only when told."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sports_posts.sandbox import Sandbox
from sports_posts.testing import RetryWaits
from tests.runner import Runner
from tests.stacks import STACKS


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(seed=11, clock="manual", posts=1500, author_shape="mixed") as sb:
        yield sb


@pytest.fixture(params=[(kind, stack) for stack in STACKS for kind in ("sync", "async")], ids="-".join)
def runner(request: pytest.FixtureRequest, sandbox: Sandbox, retry_waits: RetryWaits) -> Runner:
    kind, stack = request.param
    return Runner(kind, stack=stack, waits=retry_waits, api_key=sandbox.api_key, base_url=sandbox.base_url)
