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


def test_the_sandbox_command_runs_the_retry_schedule_at_the_time_scale_asked_for() -> None:
    """``--time-scale 0.002``: the service's 1, 2, 4, 8, 16 minute retries (spec 6.5) run in
    0.12 to 1.9 s, so a drill of six attempts ends in seconds; at scale 1 it would take 31
    minutes, far past this test's wait."""
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with socket.socket() as s:  # a subscriber that refuses every connection
        s.bind(("127.0.0.1", 0))
        refusing = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPORTS_POSTS_")}
    proc = suite().spawn([sys.executable, "-m", "sports_posts.cli", "sandbox", "--port", str(port),
                          "--time-scale", "0.002"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        admin = proc.stdout.readline().split()[-1].removesuffix("/v1") + "/_sandbox"
        assert "webhook retries after 0.12, 0.24, 0.48, 0.96, 1.92 s" in proc.stderr.readline()
        assert httpx.get(admin + "/state", timeout=10).json()["time_scale"] == 0.002
        httpx.post(admin + "/subscriptions", json={"url": f"http://127.0.0.1:{refusing}/hook", "secret": "s"},
                   timeout=10).raise_for_status()
        httpx.post(admin + "/events", json={"league": "NFL"}, timeout=10).raise_for_status()
        attempts: list[dict[str, object]] = []
        deadline = time.monotonic() + 60  # a bound on the wait, not a timing assertion
        while time.monotonic() < deadline:
            attempts = httpx.get(admin + "/deliveries", timeout=10).json()["items"]
            if len(attempts) >= 6 and all(a["finished_at"] for a in attempts):
                break
            time.sleep(0.05)  # polling another process's progress
        assert [a["attempt"] for a in attempts] == [1, 2, 3, 4, 5, 6]
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize("value", ["0", "-1", "nan", "1001", "fast"])
def test_a_time_scale_out_of_range_is_refused(value: str) -> None:
    import io

    from sports_posts.cli import main

    err = io.StringIO()
    assert main(["sandbox", "--time-scale", value], out=io.StringIO(), err=err) == 2
    assert "--time-scale" in err.getvalue()
