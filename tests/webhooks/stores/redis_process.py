"""A private redis-server the test can kill, pause and restart on the same port."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from typing import Optional

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisProcess:
    """redis-server on a free loopback port in a temp dir; ``persistent`` turns on the AOF."""

    def __init__(self, *, persistent: bool = False) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed: run `apt-get install -y redis-server` (.ci/test does)")
        self.binary = binary
        self.port = _free_port()
        self.dir = tempfile.mkdtemp(prefix="sp-redis-restart-")
        self.persistent = persistent
        self.proc: Optional[subprocess.Popen[bytes]] = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.persistent else ["--appendonly", "no"]
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *persistence,
             "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                pytest.fail("redis-server did not start")
            time.sleep(0.02)  # polling a child process's start-up, not a timed assertion

    def kill(self) -> None:
        """SIGKILL: no shutdown save; what a crash or an OOM kill does."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=10)

    def pause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.resume()
            self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisProcess:
        """Started; closed (stopped, its files removed) when the ``with`` block ends."""
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
