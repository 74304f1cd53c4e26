"""Private redis-server and PostgreSQL servers in temp directories on free loopback ports, for
the tests and the benchmarks (``python -m benchmarks.run`` imports this too)."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

INSTALL = "apt-get install -y postgresql"


class ServerError(RuntimeError):
    """The server could not be found or started; the message says how to fix it."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def private_redis() -> Iterator[str]:
    """Yield ``redis://127.0.0.1:PORT/0`` of a redis-server without persistence; stopped at exit."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise ServerError("redis-server is not installed: run `apt-get install -y redis-server` (.ci/test does)")
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="sp-redis-")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", workdir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise ServerError("redis-server did not start")
            time.sleep(0.02)  # polling a child process's start-up, not a timed assertion
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


def postgres_bindir() -> str:
    """Debian keeps the server binaries out of PATH: ask pg_config, else the newest version dir."""
    candidates = []
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        candidates.append(out.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]), reverse=True)
    for bindir in candidates:
        if bindir and os.access(os.path.join(bindir, "initdb"), os.X_OK):
            return bindir
    raise ServerError(f"PostgreSQL is not installed: run `{INSTALL}` (.ci/test does)")


@contextlib.contextmanager
def private_postgres() -> Iterator[str]:
    """Yield ``postgresql://test@127.0.0.1:PORT/postgres``; the server and its files go at exit.

    initdb refuses root, so as root the server runs as the ``postgres`` user of Debian's
    package in a temp directory it owns. ``fsync=off``: tests kill clients, not the machine.
    """
    bindir = postgres_bindir()
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    workdir = tempfile.mkdtemp(prefix="sp-postgres-")
    if as_postgres:
        shutil.chown(workdir, "postgres")
    data, port = os.path.join(workdir, "data"), free_port()
    pg_ctl = os.path.join(bindir, "pg_ctl")
    try:
        initdb = subprocess.run(
            [*as_postgres, os.path.join(bindir, "initdb"), "-D", data, "-A", "trust", "-U", "test", "--no-sync"],
            capture_output=True, text=True, check=False,
        )
        if initdb.returncode != 0:
            raise ServerError(f"initdb failed: {initdb.stderr[-500:]}")
        options = (f"-p {port} -k {workdir} -c listen_addresses=127.0.0.1 -c fsync=off"
                   " -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        started = subprocess.run(
            [*as_postgres, pg_ctl, "-D", data, "-l", os.path.join(workdir, "log"), "-o", options,
             "-w", "-t", "30", "start"],
            capture_output=True, text=True, check=False,
        )
        if started.returncode != 0:
            raise ServerError(f"PostgreSQL did not start: {started.stderr[-500:]}")
        yield f"postgresql://test@127.0.0.1:{port}/postgres"
    finally:
        if os.path.isdir(data):
            subprocess.run([*as_postgres, pg_ctl, "-D", data, "-m", "immediate", "stop"],
                           capture_output=True, check=False)
        shutil.rmtree(workdir, ignore_errors=True)
