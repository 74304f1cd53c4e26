"""The process models customers run, as real processes on loopback: gunicorn ``--preload``
with uvicorn workers (the app imported once, then forked) and a Celery prefork worker on the
Redis broker. For the tests and the benchmarks.

Each starter writes nothing of its own into the app: the caller gives the module's source
(written to a temp directory put first on the ``PYTHONPATH``) and its environment; the
starter waits for readiness (an HTTP answer on the port, Celery's ``ping``), never on a
sleep, and stops the process by its PID at the end (SIGTERM, then SIGKILL), with the log at
hand for the caller's assertion messages.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from .servers import ServerError, free_port

__all__ = ["AppDir", "CeleryWorker", "Gunicorn", "app_dir", "celery_worker", "gunicorn"]


@dataclass
class AppDir:
    """A temp directory on the processes' ``PYTHONPATH`` holding the caller's modules."""

    path: Path

    def write(self, module: str, source: str) -> Path:
        """``module.py`` (a dotted name makes packages) holding ``source``."""
        parts = module.split(".")
        where = self.path.joinpath(*parts[:-1])
        where.mkdir(parents=True, exist_ok=True)
        for depth in range(1, len(parts)):
            init = self.path.joinpath(*parts[:depth], "__init__.py")
            if not init.exists():
                init.write_text("")
        target = where / f"{parts[-1]}.py"
        target.write_text(source)
        return target


@contextlib.contextmanager
def app_dir(modules: Optional[Mapping[str, str]] = None) -> Iterator[AppDir]:
    """A fresh ``AppDir`` with ``modules`` (name -> source) written; removed at exit."""
    path = Path(tempfile.mkdtemp(prefix="sp-app-"))
    made = AppDir(path)
    try:
        for name, source in (modules or {}).items():
            made.write(name, source)
        yield made
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _environment(pythonpath: Sequence[os.PathLike[str] | str], env: Optional[Mapping[str, str]]) -> dict[str, str]:
    """This process's environment, ``env`` on top, ``pythonpath`` first on the path (the
    repository's root after it, so the processes import this checkout's ``sports_posts``)."""
    merged = dict(os.environ)
    merged.update(env or {})
    root = str(Path(__file__).resolve().parent.parent)
    paths = [str(p) for p in pythonpath] + [root] + [p for p in merged.get("PYTHONPATH", "").split(os.pathsep) if p]
    merged["PYTHONPATH"] = os.pathsep.join(paths)
    merged.setdefault("PYTHONUNBUFFERED", "1")
    return merged


def _stop(proc: subprocess.Popen[bytes], grace: float = 10) -> None:
    """SIGTERM the process by its PID, then SIGKILL if it outlives ``grace`` seconds."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=grace)


def _poll(what: str, ready: Callable[[], bool], proc: subprocess.Popen[bytes], log: Path, seconds: float) -> None:
    """Poll ``ready`` until it holds: a bounded loop over a child's start-up, not a timed
    assertion. A child that exits first, or a start-up past ``seconds``, is a ``ServerError``
    carrying the end of its log."""
    deadline = time.monotonic() + seconds
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            state = f"exited with {proc.returncode}" if proc.returncode is not None else f"not ready in {seconds:g} s"
            raise ServerError(f"{what} {state}; the end of its log:\n{_tail(log)}")
        time.sleep(0.05)  # polling a child process's start-up, not a timed assertion


def _tail(log: Path, lines: int = 40) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class Gunicorn:
    """A running gunicorn: its master's PID, its address and its log."""

    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        """Everything the master and its workers wrote so far."""
        return self.log.read_text(errors="replace")


def _answers(url: str) -> bool:
    """Whether ``url`` gives an HTTP answer below 500 (a worker is serving)."""
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return int(answer.status) < 500
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except OSError:
        return False


@contextlib.contextmanager
def gunicorn(
    app: str,
    *,
    pythonpath: Sequence[os.PathLike[str] | str] = (),
    env: Optional[Mapping[str, str]] = None,
    workers: int = 4,
    worker_class: str = "uvicorn.workers.UvicornWorker",
    preload: bool = True,
    ready_path: str = "/",
    extra_args: Sequence[str] = (),
    start_timeout: float = 60,
) -> Iterator[Gunicorn]:
    """``gunicorn [--preload] -w WORKERS -k WORKER_CLASS APP -b 127.0.0.1:PORT`` (``app``:
    ``module:attribute``, the module found on ``pythonpath``), ready once ``ready_path``
    answers below 500; stopped by its master's PID at exit (which stops its workers)."""
    port = free_port()
    logdir = Path(tempfile.mkdtemp(prefix="sp-gunicorn-"))
    log = logdir / "gunicorn.log"
    command = [sys.executable, "-m", "gunicorn", *(["--preload"] if preload else []), "-w", str(workers),
               "-k", worker_class, "-b", f"127.0.0.1:{port}", "--graceful-timeout", "5",
               "--error-logfile", "-", *extra_args, app]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=_environment(pythonpath, env), stdout=out, stderr=subprocess.STDOUT,
                                cwd=str(logdir))
    try:
        server = Gunicorn(proc, port, log)
        _poll(f"gunicorn {app}", lambda: _answers(server.url + ready_path), proc, log, start_timeout)
        yield server
    finally:
        _stop(proc)
        shutil.rmtree(logdir, ignore_errors=True)


@dataclass
class CeleryWorker:
    """A running Celery worker: its PID, the app's module and its log."""

    proc: subprocess.Popen[bytes]
    module: str
    log: Path
    hostname: str
    broker_url: str
    env: dict[str, str] = field(repr=False, default_factory=dict)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextlib.contextmanager
def celery_worker(
    module: str,
    broker_url: str,
    *,
    pythonpath: Sequence[os.PathLike[str] | str] = (),
    env: Optional[Mapping[str, str]] = None,
    concurrency: int = 2,
    pool: str = "prefork",
    app: Any = None,
    start_timeout: float = 60,
) -> Iterator[CeleryWorker]:
    """``celery -A MODULE worker -P POOL -c CONCURRENCY --without-mingle --without-gossip``
    on ``broker_url`` (``SP_CELERY_BROKER`` in the worker's environment holds it too, for
    the module to read); ready once it answers Celery's ``ping`` (through ``app``, the
    caller's Celery app for the same broker, or one made here); stopped by its PID at exit.
    """
    from celery import Celery

    hostname = f"sp-{os.getpid()}-{free_port()}@127.0.0.1"
    logdir = Path(tempfile.mkdtemp(prefix="sp-celery-"))
    log = logdir / "celery.log"
    environment = _environment(pythonpath, {**(env or {}), "SP_CELERY_BROKER": broker_url})
    command = [sys.executable, "-m", "celery", "-A", module, "worker", "-P", pool, "-c", str(concurrency),
               "--without-mingle", "--without-gossip", "--without-heartbeat", "-n", hostname, "-l", "info"]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=environment, stdout=out, stderr=subprocess.STDOUT, cwd=str(logdir))
    caller = app if app is not None else Celery(broker=broker_url)
    try:
        worker = CeleryWorker(proc, module, log, hostname, broker_url, environment)

        def pong() -> bool:
            answers = caller.control.ping(destination=[hostname], timeout=0.5)
            return any(hostname in answer for answer in answers or [])

        _poll(f"celery worker {module}", pong, proc, log, start_timeout)
        yield worker
    finally:
        _stop(proc, grace=15)
        if app is None:
            caller.close()
        shutil.rmtree(logdir, ignore_errors=True)
