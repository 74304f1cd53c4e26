"""A block forked from the zygote runs as ``python NAME.py`` would run it: its own status,
output, directory, environment, arguments, namespace and process group; its exit handlers
and threads run out; a block that never ends is killed at its timeout."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from .snippets import install_loopback_guard
from .zygote import Zygote


@pytest.fixture(scope="module")
def zygote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zygote]:
    guard = install_loopback_guard(tmp_path_factory.mktemp("guard"))
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": guard, "PYTHONDONTWRITEBYTECODE": "1"}
    with Zygote(env) as each:
        yield each


def _run(zygote: Zygote, directory: Path, source: str, *args: str, timeout: float = 60.0,
         **env: str) -> tuple[object, str]:
    (directory / "block.py").write_text(source, encoding="utf-8")
    return zygote.run([sys.executable, "block.py", *args], directory, {"PATH": os.environ.get("PATH", ""), **env},
                      timeout)


def test_status_and_both_streams_in_order(zygote: Zygote, tmp_path: Path) -> None:
    source = "import sys\nprint('out', flush=True)\nprint('err', file=sys.stderr, flush=True)\nsys.exit(3)\n"
    assert _run(zygote, tmp_path, source) == (3, "out\nerr\n")


def test_an_exception_is_status_1_with_its_traceback_and_a_message_exit_is_1(zygote: Zygote, tmp_path: Path) -> None:
    status, output = _run(zygote, tmp_path, "raise ValueError('broken block')\n")
    assert status == 1 and "Traceback" in output and "ValueError: broken block" in output
    assert _run(zygote, tmp_path, "import sys\nsys.exit('bye')\n") == (1, "bye\n")


def test_the_block_is_main_in_its_directory_with_its_arguments_and_environment(zygote: Zygote, tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("VALUE = 'sibling'\n", encoding="utf-8")
    source = (
        "import os, sys\nimport helper\n"
        "print(__name__, os.path.basename(__file__), sys.argv, helper.VALUE)\n"
        "print(os.getcwd() == sys.argv[1], os.environ.get('ONLY_HERE'), 'PYTHONPATH' in os.environ)\n"
        "print(os.getpgid(0) == os.getpid())\n"
    )
    status, output = _run(zygote, tmp_path, source, str(tmp_path), ONLY_HERE="yes")
    assert status == 0, output
    assert output.splitlines() == [
        f"__main__ block.py ['block.py', '{tmp_path}'] sibling",
        "True yes False",  # the block's environment replaces the zygote's
        "True",  # a process group of its own, killed whole at a timeout
    ]


def test_a_name_the_block_did_not_import_is_missing_though_the_zygote_imported_it(
    zygote: Zygote, tmp_path: Path
) -> None:
    status, output = _run(zygote, tmp_path, "print(sports_posts.__name__)\n")
    assert status == 1 and "NameError: name 'sports_posts' is not defined" in output


def test_threads_and_exit_handlers_run_out_as_at_an_interpreters_end(zygote: Zygote, tmp_path: Path) -> None:
    source = (
        "import atexit, threading\n"
        "go = threading.Event()\n"
        "def late():\n    go.wait()\n    print('thread done', flush=True)\n"
        "threading.Thread(target=late).start()\n"
        "atexit.register(lambda: print('atexit', flush=True))\n"
        "go.set()\n"
    )
    assert _run(zygote, tmp_path, source) == (0, "thread done\natexit\n")


def test_a_block_that_never_ends_is_killed_with_its_children_and_the_zygote_serves_on(
    zygote: Zygote, tmp_path: Path
) -> None:
    source = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "open('child.pid', 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(600)\n"
    )
    status, output = _run(zygote, tmp_path, source, timeout=3.0)
    assert status is None and output.startswith("started\n") and "[killed after 3 s]" in output
    child = int((tmp_path / "child.pid").read_text())
    gone = threading.Event()
    for _ in range(1000):  # the kill is sent: polling for the kernel to end it, not a timed assertion
        if not _alive(child):
            gone.set()
            break
        gone.wait(0.01)
    assert gone.is_set(), "the block's child outlived the kill of its process group"
    assert _run(zygote, tmp_path, "print('next')\n") == (0, "next\n")


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_module_and_a_command_run_as_with_m_and_c(zygote: Zygote, tmp_path: Path) -> None:
    (tmp_path / "test_block.py").write_text("def test_one():\n    assert 1 + 1 == 2\n", encoding="utf-8")
    path = os.environ.get("PATH", "")
    status, output = zygote.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_block.py"],
                                tmp_path, {"PATH": path}, 60.0)
    assert status == 0 and "1 passed" in output, output
    status, output = zygote.run([sys.executable, "-c", "import sys; print(__name__, sys.argv)", "a"],
                                tmp_path, {"PATH": path}, 60.0)
    assert (status, output) == (0, "__main__ ['-c', 'a']\n")


def test_the_calls_of_a_sandbox_the_block_starts_are_counted_into_its_file(zygote: Zygote, tmp_path: Path) -> None:
    counts = tmp_path / "calls.txt"
    source = (
        "from sports_posts.sandbox import Sandbox\nimport sports_posts as sp\n"
        "with Sandbox(seed=3, posts=50) as sb, sp.SportsPosts(api_key=sb.api_key, base_url=sb.base_url) as c:\n"
        "    c.posts.list(leagues='NFL', limit=1)\n    c.posts.list(leagues='NBA', limit=1)\n"
    )
    status, output = _run(zygote, tmp_path, source, SPORTS_POSTS_DOCS_CALLS=str(counts))
    assert status == 0, output
    assert counts.read_text().split() == ["2"]
