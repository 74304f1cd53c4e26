"""A process forked from the zygote (tests/zygote.py) behaves as the one ``subprocess.Popen``
would start with ``python``: its own status, streams, directory, environment and PYTHONPATH,
arguments, ``__main__``, namespace and session; its threads and exit handlers run out; its
signals are its own; the zygote serves on after any of them ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from .zygote import DEVNULL, PIPE, STDOUT, Zygote

PATH = {"PATH": os.environ.get("PATH", "")}


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    with Zygote(["sports_posts", "sports_posts._client"], env={**PATH, "PYTHONDONTWRITEBYTECODE": "1"}) as each:
        yield each


def _block(zygote: Zygote, directory: Path, source: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    (directory / "block.py").write_text(source, encoding="utf-8")
    return zygote.run([sys.executable, "block.py", *args], cwd=directory, env={**PATH, **env}, timeout=60)


def test_status_and_each_stream(zygote: Zygote, tmp_path: Path) -> None:
    done = _block(zygote, tmp_path, "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)\n")
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")


def test_stderr_into_stdout_in_order(zygote: Zygote, tmp_path: Path) -> None:
    (tmp_path / "block.py").write_text("import sys\nprint('1', flush=True)\nprint('2', file=sys.stderr)\nprint('3')\n")
    proc = zygote.spawn([sys.executable, "block.py"], cwd=tmp_path, env=PATH, stdout=PIPE, stderr=STDOUT)
    assert proc.communicate(60) == (b"1\n2\n3\n", None) and proc.returncode == 0


def test_an_exception_is_1_with_its_traceback_and_a_message_exit_is_1(zygote: Zygote, tmp_path: Path) -> None:
    done = _block(zygote, tmp_path, "raise ValueError('broken block')\n")
    assert done.returncode == 1 and "ValueError: broken block" in done.stderr and "Traceback" in done.stderr
    done = _block(zygote, tmp_path, "import sys\nsys.exit('bye')\n")
    assert (done.returncode, done.stderr) == (1, "bye\n")


def test_the_process_is_main_in_its_directory_with_its_arguments_environment_and_path(
    zygote: Zygote, tmp_path: Path
) -> None:
    (tmp_path / "helper.py").write_text("VALUE = 'sibling'\n", encoding="utf-8")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "from_path.py").write_text("VALUE = 'pythonpath'\n", encoding="utf-8")
    source = (
        "import os, sys\nimport helper, from_path\n"
        "print(__name__, os.path.basename(__file__), sys.argv[1:], helper.VALUE, from_path.VALUE)\n"
        "print(os.getcwd() == sys.argv[1], os.environ.get('ONLY_HERE'), 'PYTHONDONTWRITEBYTECODE' in os.environ)\n"
        "print(os.getpgid(0) == os.getpid(), sys.stdout.line_buffering, sys.stderr.line_buffering)\n"
    )
    done = _block(zygote, tmp_path, source, str(tmp_path), ONLY_HERE="yes", PYTHONPATH=str(extra))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"__main__ block.py ['{tmp_path}'] sibling pythonpath",
        "True yes False",  # the process's environment replaces the zygote's
        "False False True",  # the caller's session; stdout to a pipe buffered, stderr by line
    ]


def test_a_sitecustomize_on_its_pythonpath_runs_before_it(zygote: Zygote, tmp_path: Path) -> None:
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text("import builtins\nbuiltins.GUARDED = True\n", encoding="utf-8")
    done = _block(zygote, tmp_path, "print(GUARDED)\n", PYTHONPATH=str(guard))
    assert (done.returncode, done.stdout) == (0, "True\n"), done.stderr


def test_a_name_it_did_not_import_is_missing_though_the_zygote_imported_it(zygote: Zygote, tmp_path: Path) -> None:
    done = _block(zygote, tmp_path, "print(sports_posts.__name__)\n")
    assert done.returncode == 1 and "NameError: name 'sports_posts' is not defined" in done.stderr


def test_threads_and_exit_handlers_run_out_as_at_an_interpreters_end(zygote: Zygote, tmp_path: Path) -> None:
    source = (
        "import atexit, threading\n"
        "go = threading.Event()\n"
        "def late():\n    go.wait()\n    print('thread done', flush=True)\n"
        "threading.Thread(target=late).start()\n"
        "atexit.register(lambda: print('atexit', flush=True))\n"
        "go.set()\n"
    )
    done = _block(zygote, tmp_path, source)
    assert (done.returncode, done.stdout) == (0, "thread done\natexit\n"), done.stderr


def test_random_state_is_its_own(zygote: Zygote, tmp_path: Path) -> None:
    draws = {_block(zygote, tmp_path, "import random\nprint(random.random())\n").stdout for _ in range(3)}
    assert len(draws) == 3


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _signal_state(pid: int) -> str:
    """What the kernel says of ``pid``'s signals and wait (for a failure's message)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        wchan = Path(f"/proc/{pid}/wchan").read_text()
    except OSError as exc:
        return f"no /proc entry ({exc})"
    wanted = ("State", "Threads", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt")
    return ", ".join([line for line in status if line.split(":")[0] in wanted] + [f"wchan: {wchan}"])


def test_signals_end_it_as_they_end_python_and_its_session_is_killed_whole(zygote: Zygote, tmp_path: Path) -> None:
    (tmp_path / "block.py").write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(600)\n", encoding="utf-8")
    proc = zygote.spawn([sys.executable, "block.py"], cwd=tmp_path, env=PATH, stdout=PIPE, stderr=DEVNULL,
                        start_new_session=True)
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    assert proc.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(0)
    os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait(60) == -signal.SIGKILL
    gone = threading.Event()
    for _ in range(1000):  # the kill is sent: polling for the kernel to end it, not a timed assertion
        if not _alive(child):
            gone.set()
            break
        gone.wait(0.01)
    assert gone.is_set(), "the process's child outlived the kill of its session"
    # SIGINT handled, as in a terminal's foreground: a suite started in the background (`cmd &`)
    # inherits it ignored, and the process would then rightly ignore it too
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        procs = [(zygote.spawn([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(600)"],
                               env=PATH, stdout=PIPE, stderr=PIPE), sig, status)
                 for sig, status in ((signal.SIGINT, -signal.SIGINT), (signal.SIGTERM, -signal.SIGTERM))]
    finally:
        signal.signal(signal.SIGINT, before)
    for proc, sig, status in procs:
        assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
        proc.send_signal(sig)
        try:
            ended = proc.wait(60)
        except subprocess.TimeoutExpired:
            where = _signal_state(proc.pid)
            proc.kill()
            pytest.fail(f"{signal.Signals(sig).name} did not end the process: {where}")
        assert ended == status  # an uncaught KeyboardInterrupt ends Python by SIGINT
    assert _block(zygote, tmp_path, "print('next')\n").stdout == "next\n"


def test_a_signal_sent_as_it_starts_waits_until_it_is_itself(zygote: Zygote) -> None:
    proc = zygote.spawn([sys.executable, "-c", "import time; time.sleep(600)"], env=PATH, stdout=DEVNULL,
                        stderr=PIPE)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == -signal.SIGTERM
    assert proc.stderr is not None and b"zygote" not in proc.stderr.read()


def test_sigint_is_ignored_when_the_caller_ignores_it(zygote: Zygote) -> None:
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        proc = zygote.spawn([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)"],
                            env=PATH, stdout=PIPE)
    finally:
        signal.signal(signal.SIGINT, before)
    assert proc.communicate(60)[0] == b"True\n"


def test_a_module_and_a_command_run_as_with_m_and_c(zygote: Zygote, tmp_path: Path) -> None:
    (tmp_path / "test_block.py").write_text("def test_one():\n    assert 1 + 1 == 2\n", encoding="utf-8")
    done = zygote.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_block.py"],
                      cwd=tmp_path, env=PATH, timeout=60)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
    done = zygote.run([sys.executable, "-c", "import sys; print(__name__, sys.argv)", "a"], env=PATH, timeout=60)
    assert (done.returncode, done.stdout) == (0, "__main__ ['-c', 'a']\n")


def test_an_interpreter_option_it_does_not_run_is_refused(zygote: Zygote) -> None:
    with pytest.raises(ValueError, match="the zygote runs"):
        zygote.spawn([sys.executable, "-u", "block.py"])


def test_what_the_preloaded_modules_read_at_import_is_known(zygote: Zygote) -> None:
    assert "SPORTS_POSTS_LOG" in zygote.read  # sports_posts._base_client turns its logger on from it
    assert "HOME" not in zygote.read  # sysconfig's user site, which a venv does not use


@pytest.mark.parametrize("level", ["info", ""])
def test_a_variable_read_at_import_that_differs_gets_a_fresh_interpreter(
    zygote: Zygote, tmp_path: Path, level: str
) -> None:
    env = {**PATH, "PYTHONDONTWRITEBYTECODE": "1", **({"SPORTS_POSTS_LOG": level} if level else {})}
    proc = zygote.spawn([sys.executable, "-c", "import logging, sports_posts._base_client as c; "
                         "print(logging.getLevelName(c.log.level), len(c.log.handlers))"], env=env, stdout=PIPE)
    assert isinstance(proc, subprocess.Popen) == bool(level)  # forked when it would import the same
    out, _ = proc.communicate(timeout=60)
    assert out == (b"INFO 1\n" if level else b"NOTSET 0\n")


def test_a_shared_zygote_imports_with_the_environment_the_test_process_started_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from . import zygote as module

    monkeypatch.setattr(module, "_shared", {})  # as if this test were the first to ask
    monkeypatch.setenv("SPORTS_POSTS_LOG", "debug")
    first = module.shared(["sports_posts._client"])
    try:
        assert first.read["SPORTS_POSTS_LOG"] == module._STARTING_ENVIRONMENT.get("SPORTS_POSTS_LOG")
    finally:
        first.close()
