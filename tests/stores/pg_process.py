"""A private PostgreSQL the fault tests can restart, freeze (SIGSTOP) and thaw on one port."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile

import pytest

from support.servers import ServerError, free_port, postgres_bindir


class PostgresProcess:
    """initdb'd in a temp dir, run with pg_ctl; as root, as Debian's ``postgres`` user."""

    def __init__(self) -> None:
        try:
            self.bindir = postgres_bindir()
        except ServerError as exc:
            pytest.fail(str(exc))
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.dir = tempfile.mkdtemp(prefix="sp-postgres-faults-")
        if self.as_postgres:
            shutil.chown(self.dir, "postgres")
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        self._frozen: list[int] = []
        done = subprocess.run(
            [*self.as_postgres, os.path.join(self.bindir, "initdb"), "-D", self.data, "-A", "trust",
             "-U", "test", "--no-sync"], capture_output=True, text=True, check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"initdb failed: {done.stderr[-500:]}")

    @property
    def url(self) -> str:
        return f"postgresql://test@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str) -> None:
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
                   " -c synchronous_commit=off")
        done = subprocess.run(
            [*self.as_postgres, os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-l",
             os.path.join(self.dir, "log"), "-o", options, "-w", "-t", "30", *args],
            capture_output=True, text=True, check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"pg_ctl {' '.join(args)} failed: {done.stderr[-500:]}")

    def start(self) -> None:
        self._ctl("start")

    def restart(self) -> None:
        """A fast restart: every connection is terminated, the server is back on the same port."""
        self._ctl("-m", "fast", "restart")

    def _pids(self) -> list[int]:
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            postmaster = int(f.readline())
        pids = [postmaster]
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == postmaster:
                    pids.append(int(entry))
        return pids

    def freeze(self) -> None:
        """SIGSTOP the postmaster and every backend: a paused VM, as the client sees it."""
        self._frozen = self._pids()
        for pid in self._frozen:
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        for pid in self._frozen:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        self._frozen = []

    def close(self) -> None:
        self.thaw()
        subprocess.run([*self.as_postgres, os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m",
                        "immediate", "stop"], capture_output=True, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> PostgresProcess:
        """Started; closed (stopped, its files removed) when the ``with`` block ends."""
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
