"""Loopback helpers shared by the benchmark modules (a module of its own, so that no two
benchmark modules import each other)."""

from __future__ import annotations

import socket
import subprocess
import time


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    """Wait until ``proc`` listens on ``port``; RuntimeError if it exits or never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("benchmark server exited")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)  # polling a child process's start-up
    raise RuntimeError("benchmark server did not start")
