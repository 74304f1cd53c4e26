"""An interpreter that has imported the SDK once and forks a process for each block to run.

A block's own interpreter would spend most of its time importing what its first lines name
(the SDK, httpx, pydantic, pytest for a test file); a fork of this one starts with them
imported, and is otherwise the process ``python NAME.py`` makes: its own process group,
directory, environment, arguments, ``__main__`` and output, with the loopback guard and
the call counting of tests/docs/snippets.py, and its threads and ``atexit`` handlers run
out as at an interpreter's end. Nothing else is imported here: a module a block forgot to
import is still missing from its namespace.

Run as ``python zygote.py``, it reads one request per line on stdin and answers each with
two lines on stdout: the process's id once it is forked, then its exit status.
:class:`Zygote` is the caller's side.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Optional

PRELOAD = ("sports_posts", "sports_posts._client", "sports_posts.models", "pytest")
"""What every block's interpreter would import anyway; nothing of the sandbox (the call
counting hooks its first import) and nothing a block must import itself to work."""


class Zygote:
    """One zygote process; ``run`` is one block's run in a fork of it (one at a time)."""

    def __init__(self, env: dict[str, str]) -> None:
        self._outputs = Path(tempfile.mkdtemp(prefix="sp-zygote-"))
        self._proc = subprocess.Popen(
            [sys.executable, __file__], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, bufsize=0,
        )
        self._pending = b""

    def run(self, argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[Optional[int], str]:
        """``argv`` (an interpreter's command line) run in ``cwd`` with ``env``: its exit
        status (None when it was killed at ``timeout``) and its output, stderr merged."""
        assert self._proc.stdin is not None
        output = self._outputs / "output"
        request = {"argv": argv[1:], "cwd": str(cwd), "env": env, "output": str(output)}
        self._proc.stdin.write(json.dumps(request).encode() + b"\n")
        started = self._read_line(None)
        assert started is not None  # without a timeout, a line or an error
        pid = int(json.loads(started)["pid"])
        answer = self._read_line(timeout)
        killed = answer is None
        if killed:
            for kill in (os.killpg, os.kill):  # its group, and the process were it not leading one
                try:
                    kill(pid, signal.SIGKILL)
                except ProcessLookupError:  # it ended as the wait did
                    pass
            answer = self._read_line(None)
        assert answer is not None
        status: int = json.loads(answer)["status"]
        text = output.read_text(encoding="utf-8", errors="replace")
        if killed:
            return None, text + f"\n[killed after {timeout:g} s]"
        return status, text

    def _read_line(self, timeout: Optional[float]) -> Optional[str]:
        """The zygote's next line, or None when ``timeout`` passes first."""
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError(f"the zygote ended (status {self._proc.wait()})")
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line.decode()

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        shutil.rmtree(self._outputs, ignore_errors=True)

    def __enter__(self) -> Zygote:
        return self

    def __exit__(
        self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        self.close()


def _exit_code(exc: SystemExit) -> int:
    """What the interpreter makes of ``sys.exit(code)``."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _child(request: dict[str, Any]) -> None:
    """In the fork: become the block's process, run it, and end as its interpreter would."""
    import atexit
    import runpy
    import threading
    import traceback

    os.setsid()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    devnull = os.open(os.devnull, os.O_RDONLY)
    out = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(devnull, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(devnull)
    os.close(out)
    calls = os.environ.get("SPORTS_POSTS_DOCS_CALLS")
    if calls:  # the guard ran in the zygote, before this block's environment was set
        guard: Any = sys.modules["sitecustomize"]
        guard.count_calls_into(calls)
    argv: list[str] = request["argv"]
    code = 0
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            sys.path[0] = request["cwd"]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        elif argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            sys.path[0] = ""
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        else:
            sys.argv = list(argv)
            sys.path[0] = str(Path(request["cwd"], argv[0]).parent)
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        threading._shutdown()  # type: ignore[attr-defined]  # non-daemon threads, as at an interpreter's end
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def main() -> None:
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            channel.close()
            _child(request)
        channel.write(json.dumps({"pid": pid}) + "\n")
        _, status = os.waitpid(pid, 0)
        channel.write(json.dumps({"status": os.waitstatus_to_exitcode(status)}) + "\n")


if __name__ == "__main__":
    main()
