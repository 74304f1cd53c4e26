"""The Python blocks of README.md and docs/, as a reader would paste them, and how to run one.

Conventions (docs/testing.md, "The documentation's own code"):

- A fenced block whose info string starts with ``python``, ``py`` or ``pycon`` runs as
  pasted, against a sandbox named by ``SPORTS_POSTS_BASE_URL`` / ``SPORTS_POSTS_API_KEY``.
- ``<!-- fragment -->`` on the line before the fence: an excerpt (a signature, a call in
  isolation) that only has to compile.
- ``<!-- continues -->`` on the line before the fence: the block runs after the previous
  runnable Python block of the page (fragments skipped), as in one interpreter session.
- ``title="name.py"`` in the info string: the block is that file in the page's directory,
  written before any block of the page runs (so others import it); ``test_*.py`` runs
  under pytest.
- ``pycon`` blocks run as doctests: the output shown must be the output printed.
- ``# costs: 1 call``, ``# costs: up to 3 calls`` or ``# costs: no calls`` in a block: the
  most billed calls it makes (a block that continues another adds to that block's). Every
  block that makes a call says so; the run counts the calls and fails a block that spends
  more than it states.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from ..zygote import Zygote

ROOT = Path(__file__).resolve().parents[2]

FRAGMENT = "<!-- fragment -->"
CONTINUES = "<!-- continues -->"
MARKERS = (FRAGMENT, CONTINUES)
LANGUAGES = {"python", "py", "python3", "py3", "pycon"}

_COSTS = re.compile(r"#\s*costs:\s*(?:(?:up to|at most)\s+)?(?P<n>no|\d+)\s+calls?\b", re.IGNORECASE)
_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_TITLE = re.compile(r"""\btitle=["']([^"']+)["']""")


class SnippetError(Exception):
    """A block or marker the conventions do not allow; the message names the line."""


@dataclass(frozen=True)
class Snippet:
    """One Python block: where it is, what it holds and how it is meant to be checked."""

    page: str
    """The page's path from the repository root: ``docs/webhooks.md``."""
    line: int
    """The line of the opening fence (1-based)."""
    language: str
    code: str
    """The block's own text, dedented to its fence."""
    fragment: bool = False
    continues: Optional[Snippet] = None
    title: Optional[str] = None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def source(self) -> str:
        """What runs: the blocks this one continues, then its own text."""
        before = self.continues.source + "\n" if self.continues is not None else ""
        return before + self.code

    @property
    def own_cost(self) -> Optional[int]:
        """The billed calls this block's ``# costs:`` comments state (None: no comment)."""
        found = [0 if m.group("n").lower() == "no" else int(m.group("n")) for m in _COSTS.finditer(self.code)]
        return sum(found) if found else None

    @property
    def stated_cost(self) -> Optional[int]:
        """The most calls a run of :attr:`source` may make: this block's and those it continues."""
        own = self.own_cost
        before = self.continues.stated_cost if self.continues is not None else 0
        if own is None:
            return before or None
        return own + (before or 0)

    @property
    def is_test_file(self) -> bool:
        return self.title is not None and Path(self.title).name.startswith("test_")


def pages() -> list[Path]:
    """README.md and every page under docs/ (the API reference pages included)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _dedent(lines: list[str], indent: str) -> str:
    return "\n".join(line[len(indent):] if line.startswith(indent) else line.lstrip()
                     for line in lines) + "\n"


def parse(page: str, text: str) -> Iterator[Snippet]:
    """The page's Python blocks in order; a misplaced marker or an unclosed fence raises."""
    lines = text.splitlines()
    previous: Optional[Snippet] = None
    number = 0
    while number < len(lines):
        line = lines[number]
        stripped = line.strip()
        if stripped in MARKERS:
            following = lines[number + 1] if number + 1 < len(lines) else ""
            opening = _OPEN.match(following)
            if opening is None or opening.group("info").split()[:1] == []:
                raise SnippetError(f"{page}:{number + 1}: {stripped} is not followed by a fence")
            language = opening.group("info").split()[0].lower()
            if language not in LANGUAGES:
                raise SnippetError(f"{page}:{number + 1}: {stripped} before a {language} block")
        opening = _OPEN.match(line)
        if opening is None:
            number += 1
            continue
        fence, indent, info = opening.group("fence"), opening.group("indent"), opening.group("info")
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = number + 1
        while end < len(lines) and not close.match(lines[end]):
            end += 1
        if end == len(lines):
            raise SnippetError(f"{page}:{number + 1}: the fence is never closed")
        words = info.split()
        language = words[0].lower() if words else ""
        if language in LANGUAGES:
            marker = lines[number - 1].strip() if number else ""
            title = _TITLE.search(info)
            if marker == CONTINUES and previous is None:
                raise SnippetError(f"{page}:{number + 1}: continues, but no runnable block is above")
            snippet = Snippet(
                page=page,
                line=number + 1,
                language=language,
                code=_dedent(lines[number + 1:end], indent),
                fragment=marker == FRAGMENT,
                continues=previous if marker == CONTINUES else None,
                title=title.group(1) if title else None,
            )
            yield snippet
            if not snippet.fragment:
                previous = snippet
        number = end + 1


def collect() -> tuple[list[Snippet], list[str]]:
    """Every Python block of every page, and the error of each page that breaks a convention."""
    found: list[Snippet] = []
    errors: list[str] = []
    for path in pages():
        try:
            found += parse(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8"))
        except SnippetError as exc:
            errors.append(str(exc))
    return found, errors


# Runs a pycon block as a doctest: what the block shows after each prompt is what must print.
_DOCTEST = """
import doctest, sys
text = open(sys.argv[1], encoding="utf-8").read()
test = doctest.DocTestParser().get_doctest(text, {"__name__": "__main__"}, sys.argv[1], sys.argv[1], 0)
flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
runner = doctest.DocTestRunner(optionflags=flags)
runner.run(test)
sys.exit(1 if runner.failures else 0)
"""


@dataclass(frozen=True)
class Outcome:
    """How one run of a block ended: ``returncode`` None when it was killed at the timeout."""

    returncode: Optional[int]
    output: str
    calls: Optional[int] = None
    """The billed calls the run made, when the harness counted them."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def file_name(snippet: Snippet) -> str:
    """Where the block is written in its page's directory (its title, else its line)."""
    return snippet.title or f"snippet_{snippet.line}.{'txt' if snippet.language == 'pycon' else 'py'}"


def command(snippet: Snippet, python: str) -> list[str]:
    """What a reader runs: the file with Python, a test file with pytest, a pycon as a doctest."""
    name = file_name(snippet)
    if snippet.language == "pycon":
        return [python, "-c", _DOCTEST, name]
    if snippet.is_test_file:
        # less this suite's own schemathesis, whose plugin a reader's pytest does not load
        return [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:schemathesis", name]
    return [python, name]


def run(
    snippet: Snippet, workdir: Path, env: dict[str, str], python: str, timeout: float,
    zygote: Optional[Zygote] = None,
) -> Outcome:
    """Run the block in ``workdir`` in a fresh interpreter, or in a fork of ``zygote``
    (tests/zygote.py); kill its process group at ``timeout``."""
    import os
    import signal
    import subprocess

    (workdir / file_name(snippet)).write_text(snippet.source, encoding="utf-8")
    options: dict[str, Any] = {"cwd": workdir, "env": env, "stdout": subprocess.PIPE,
                               "stderr": subprocess.STDOUT, "start_new_session": True}
    proc = (zygote.spawn(command(snippet, python), **options) if zygote is not None
            else subprocess.Popen(command(snippet, python), stdin=subprocess.DEVNULL, **options))
    try:
        output, _ = proc.communicate(timeout=timeout)
        return Outcome(proc.returncode, (output or b"").decode("utf-8", "replace"))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        return Outcome(None, (output or b"").decode("utf-8", "replace") + f"\n[killed after {timeout:g} s]")


# Imported by every interpreter a block starts (PYTHONPATH): a block reaches loopback only,
# so a doc that names a real host fails here instead of sending a request from CI.
LOOPBACK_ONLY = '''"""A documentation block under test reaches loopback only (tests/docs/snippets.py)."""
import errno
import ipaddress
import socket

_LOCAL_NAMES = {"localhost", "localhost.localdomain", ""}


def _local(host):
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host is None or str(host).lower() in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _refuse(host):
    return OSError(errno.ENETUNREACH, f"the docs test allows loopback only, not {host!r}")


_getaddrinfo = socket.getaddrinfo
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def getaddrinfo(host, *args, **kwargs):
    if not _local(host):
        raise socket.gaierror(socket.EAI_NONAME, f"the docs test resolves loopback only, not {host!r}")
    return _getaddrinfo(host, *args, **kwargs)


def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
        raise _refuse(address[0])
    return _connect(self, address)


def connect_ex(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
        return errno.ENETUNREACH
    return _connect_ex(self, address)


socket.getaddrinfo = getaddrinfo
socket.socket.connect = connect
socket.socket.connect_ex = connect_ex


# Calls a Sandbox started inside the block counts (its own service, not the harness's):
# written to the file SPORTS_POSTS_DOCS_CALLS names when the interpreter exits.
import atexit
import importlib.abc
import importlib.machinery
import os
import sys

_CALLS_FILE = os.environ.get("SPORTS_POSTS_DOCS_CALLS")
_ACCOUNTS = "sports_posts.sandbox.accounts"
_counted = [0]


def _count_admissions(module):
    admit = module.Accounts.admit

    def counting_admit(self, account, now, *, counted):
        admit(self, account, now, counted=counted)
        if counted:
            _counted[0] += 1

    module.Accounts.admit = counting_admit


class _CountingFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _ACCOUNTS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            _count_admissions(module)

        spec.loader.exec_module = exec_module
        return spec


def _write_count():
    with open(_CALLS_FILE, "a", encoding="utf-8") as out:
        out.write(f"{_counted[0]}\\n")


if _CALLS_FILE:
    sys.meta_path.insert(0, _CountingFinder())
    atexit.register(_write_count)
'''


def install_loopback_guard(directory: Path) -> str:
    """Write the guard as ``sitecustomize.py`` in ``directory``; returns the PYTHONPATH entry."""
    (directory / "sitecustomize.py").write_text(LOOPBACK_ONLY, encoding="utf-8")
    return str(directory)


def cost(blocks: list[Snippet]) -> int:
    """A rough weight of a page's run: a test file starts a sandbox per test."""
    return sum(4 if block.is_test_file else 1 for block in blocks)
