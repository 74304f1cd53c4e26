"""CONTRIBUTING.md's "Adding an endpoint" stays true: its blocks, applied as written to a
copy of the package, touch four files and give a working, exactly typed endpoint; and every
resource keeps its raw view next to it, one line per method."""

from __future__ import annotations

import ast
import filecmp
import importlib
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "sports_posts"
BLOCK = re.compile(r"<!-- endpoint: (\S+) \(([^)]+)\) -->\n```python\n(.*?)```", re.S)
FOUR = {"_endpoints.py", "_client.py", "models/leagues.py", "resources/leagues.py"}


def _blocks() -> list[tuple[str, str, str]]:
    section = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").split("## Adding an endpoint", 1)[1]
    return [(path, where, code) for path, where, code in BLOCK.findall(section.split("\n## ", 1)[0])]


def _insert(source: str, where: str, code: str) -> str:
    """``code`` placed in ``source`` as a contributor would: after the last top-level import,
    at the end of the ``TYPE_CHECKING`` imports, at the end of a class, or at the end."""
    lines = source.splitlines()
    tree = ast.parse(source)
    if where == "end":
        return source.rstrip("\n") + "\n\n\n" + code
    if where == "imports":
        last = max(n.end_lineno or 0 for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
        at, indent = last, ""
    elif where == "TYPE_CHECKING":
        block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
        at, indent = block.end_lineno or 0, "    "
    else:
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == where)
        at, indent, code = cls.end_lineno or 0, "    ", "\n" + code
    added = [indent + line if line else line for line in code.rstrip("\n").splitlines()]
    return "\n".join(lines[:at] + added + lines[at:]) + "\n"


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package with the example's blocks applied; its parent goes on the path."""
    root = tmp_path_factory.mktemp("contributing")
    package = root / "sports_posts"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    for path, where, code in _blocks():
        target = package / path
        if where == "new":
            assert not target.exists(), f"{path} is not a new module"
            target.write_text(code, encoding="utf-8")
        else:
            target.write_text(_insert(target.read_text(encoding="utf-8"), where, code), encoding="utf-8")
    return root


def _differing(left: Path, right: Path, prefix: str = "") -> set[str]:
    compared = filecmp.dircmp(left, right, ignore=["__pycache__"])
    out = {prefix + name for name in compared.left_only + compared.right_only + compared.diff_files}
    for name, sub in compared.subdirs.items():
        out |= _differing(Path(sub.left), Path(sub.right), f"{prefix}{name}/")
    return out


def test_the_example_names_the_four_files_and_touches_no_other(changed: Path) -> None:
    assert {path for path, _, _ in _blocks()} == FOUR
    assert _differing(PACKAGE, changed / "sports_posts") == FOUR


CALLS = """
import asyncio, httpx
from sports_posts import SportsPosts, AsyncSportsPosts, RawResponse
from sports_posts.models.leagues import LeagueList

BODY = {"items": [{"code": "NFL", "name": "National Football League"}]}
seen = []

def answer(request):
    seen.append((request.method, request.url.path))
    return httpx.Response(200, json=BODY, headers={"X-Example": "1"})

with SportsPosts(api_key="k", base_url="https://api.example.test/v1",
                 http_client=httpx.Client(transport=httpx.MockTransport(answer))) as client:
    assert client.leagues.list().items[0].code == "NFL"
    raw = client.with_raw_response.leagues.list()
    assert isinstance(raw, RawResponse) and raw.headers["X-Example"] == "1"
    assert isinstance(raw.parse(), LeagueList)
    assert isinstance(client.leagues.with_raw_response.list(), RawResponse)
    assert client.calls == 3

async def main():
    async with AsyncSportsPosts(api_key="k", base_url="https://api.example.test/v1",
                                http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer))) as aclient:
        assert (await aclient.leagues.list()).items[0].name.startswith("National")
        raw = await aclient.with_raw_response.leagues.list()
        assert isinstance(raw, RawResponse) and isinstance(raw.parse(), LeagueList)

asyncio.run(main())
assert seen == [("GET", "/v1/leagues")] * 5, seen
print("served")
"""

TYPES = """
from typing_extensions import assert_type
from sports_posts import AsyncSportsPosts, RawResponse, SportsPosts
from sports_posts.models.leagues import LeagueList

def sync(client: SportsPosts) -> None:
    assert_type(client.leagues.list(), LeagueList)
    assert_type(client.leagues.list(timeout=3.0), LeagueList)
    assert_type(client.with_raw_response.leagues.list(), RawResponse[LeagueList])
    assert_type(client.leagues.with_raw_response.list(), RawResponse[LeagueList])
    client.leagues.list(league="NFL")  # type: ignore[call-arg]

async def aio(aclient: AsyncSportsPosts) -> None:
    assert_type(await aclient.leagues.list(), LeagueList)
    assert_type(await aclient.with_raw_response.leagues.list(), RawResponse[LeagueList])
"""


def test_the_example_endpoint_is_served_sync_async_and_raw(changed: Path) -> None:
    result = subprocess.run([sys.executable, "-c", CALLS], cwd=changed, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "served", result.stderr


@pytest.mark.slow
def test_the_example_endpoint_is_exactly_typed(changed: Path) -> None:
    (changed / "customer.py").write_text(TYPES, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(changed / ".mypy"), "--no-error-summary",
         "--config-file", str(ROOT / "pyproject.toml"), "sports_posts", "customer.py"],
        cwd=changed, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr


RESOURCES = ("posts", "account", "ids")
MANY_CALLS = {"poll", "compliance_sweep", "compliance_sweeper"}
"""Methods that make many calls: there is no one answer to hand back raw."""


@pytest.mark.parametrize("name", RESOURCES)
def test_every_resource_method_has_its_raw_line_next_to_it(name: str) -> None:
    module = importlib.import_module(f"sports_posts.resources.{name}")
    for kind in ("", "Async"):
        resource = getattr(module, kind + name.capitalize())
        view = getattr(module, f"{kind}{name.capitalize()}WithRawResponse")
        methods = {m for m, _ in inspect.getmembers(resource, callable) if not m.startswith("_")} - MANY_CALLS
        source = inspect.getsource(view.__init__)  # the view's, or the one both clients' views share
        lines = set(re.findall(r"self\.(\w+): Final = \w+\(\w+\.(\1)[,)]", source))
        assert {m for m, _ in lines} == methods, f"{view.__name__} and {resource.__name__} differ"


def test_every_resource_of_the_client_has_a_raw_view() -> None:
    from sports_posts._client import AsyncSportsPostsWithRawResponse, SportsPostsWithRawResponse

    for view in (SportsPostsWithRawResponse, AsyncSportsPostsWithRawResponse):
        assert {n for n in vars(view) if not n.startswith("_")} == {*RESOURCES, "with_options"}
