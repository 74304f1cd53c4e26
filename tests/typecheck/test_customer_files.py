"""What .ci/typecheck hands the type checkers: every example, the assert_type file, and
every runnable Python block of the docs, each test file with the modules it imports."""

from __future__ import annotations

import ast
import configparser
import json
from pathlib import Path

from tests.docs.snippets import ROOT

from .customer_files import SNIPPET_MYPY, SNIPPET_RULES_OFF, write


def test_every_example_and_block_is_written_once_and_parses(tmp_path: Path) -> None:
    written = write(tmp_path)
    examples = {path.name for path in (ROOT / "examples").glob("*.py")}
    assert examples | {"customer_view.py"} == set(written["code"])
    assert len(written["snippets"]) > 20 and written["tests"]
    for kind, names in written.items():
        for name in names:
            ast.parse((tmp_path / kind / name).read_text(encoding="utf-8"), name)


def test_a_test_file_finds_the_page_modules_it_imports(tmp_path: Path) -> None:
    written = write(tmp_path)
    beside = set(written["tests"])
    for name in written["tests"]:
        tree = ast.parse((tmp_path / "tests" / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                top = node.module.split(".")[0]
                if (ROOT / "docs" / f"{top}.py").exists() or f"{top}.py" in written["snippets"]:
                    assert f"{top}.py" in beside, (name, top)


def test_one_run_of_each_checker_relaxes_the_snippets_rules_for_the_snippets_alone(tmp_path: Path) -> None:
    written = write(tmp_path)
    snippets = {name[: -len(".py")] for name in written["snippets"]}
    ini = configparser.ConfigParser()
    ini.read(tmp_path / "mypy-strict.ini")
    assert dict(ini["mypy"]) == {"strict": "True"}
    [section] = [name for name in ini.sections() if name != "mypy"]
    assert set(section[len("mypy-"):].split(",")) == snippets
    assert dict(ini[section]) == dict.fromkeys(SNIPPET_MYPY, "True")
    pyright = json.loads((tmp_path / "pyrightconfig.json").read_text(encoding="utf-8"))
    assert pyright["typeCheckingMode"] == "strict" and pyright["include"] == ["code", "snippets"]
    environments = {environment.pop("root"): environment for environment in pyright["executionEnvironments"]}
    assert environments == {"code": {}, "snippets": dict.fromkeys(SNIPPET_RULES_OFF, "none")}
    # the test files: each checker's default mode, from files named on the command line
    assert json.loads((tmp_path / "tests" / "pyrightconfig.json").read_text(encoding="utf-8")) == {}
    default = configparser.ConfigParser()
    default.read(tmp_path / "mypy-default.ini")
    assert default.sections() == ["mypy"] and dict(default["mypy"]) == {}
    assert not {"mypy.ini", ".mypy.ini", "setup.cfg", "pyproject.toml"} & {p.name for p in tmp_path.iterdir()}
