"""``sports-posts sandbox --profile``: strict by default, lenient when asked for."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import httpx
import pytest

from ..zygote import suite


@pytest.mark.parametrize(("args", "profile", "shape"), [((), "strict", "mixed"),
                                                         (("--profile", "lenient"), "lenient", "both")])
def test_the_sandbox_command_serves_the_profile_asked_for(args: tuple[str, ...], profile: str, shape: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPORTS_POSTS_")}
    proc = suite().spawn([sys.executable, "-m", "sports_posts.cli", "sandbox", "--port", str(port), *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().split()[-1]
        state = httpx.get(base_url.removesuffix("/v1") + "/_sandbox/state", timeout=10).json()
        assert (state["profile"], state["author_shape"]) == (profile, shape)
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
