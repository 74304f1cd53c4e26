"""Write what a customer type-checks, in three directories (used by .ci/typecheck):

- ``code/``: every file of examples/ and tests/typecheck/customer_view.py: strict, as they are.
- ``snippets/``: every runnable Python block of README.md and docs/ that is not a test file
  (as tests/docs/snippets.py extracts it, after the blocks it continues): strict, less the
  rules a page's blocks run together break without a fault of their own (a name defined
  again by a later block, a block that only shows an import).
- ``tests/``: the blocks that are pytest files, with the page's other titled files they
  import: each checker's default mode, as most customers check their tests.

Beside them, each checker's settings: ``mypy-strict.ini`` and ``pyrightconfig.json`` check
``code/`` and ``snippets/`` in one run each (strict, with the snippets' rules relaxed for
the snippets' modules alone: a per-module section, an execution environment), and
``tests/pyrightconfig.json`` and ``mypy-default.ini`` leave the test files in each checker's
default mode (a file named on the command line: no configuration above the directory counts).

    python tests/typecheck/customer_files.py OUTDIR
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "docs"))

from snippets import ROOT, collect  # noqa: E402

KINDS = ("code", "snippets", "tests")
SNIPPET_RULES_OFF = ("reportUnusedImport", "reportUnusedVariable", "reportDuplicateImport")
"""basedpyright's rules a page's blocks break by running together: a block that only shows
an import, a name a later block defines again."""
SNIPPET_MYPY = ("allow_redefinition_new", "local_partial_types")
"""mypy's options for the same: a name defined again with another type, an empty value
filled in by a later block."""


def write(out: Path) -> dict[str, list[str]]:
    """Write the files under ``out``; return each directory's file names."""
    written: dict[str, list[str]] = {kind: [] for kind in KINDS}

    def put(kind: str, name: str, text: str) -> None:
        if name in written[kind]:
            raise SystemExit(f"{kind}/{name} is written twice")
        (out / kind).mkdir(parents=True, exist_ok=True)
        (out / kind / name).write_text(text, encoding="utf-8")
        written[kind].append(name)

    for example in sorted((ROOT / "examples").glob("*.py")):
        put("code", example.name, example.read_text(encoding="utf-8"))
    put("code", "customer_view.py", (HERE / "customer_view.py").read_text(encoding="utf-8"))
    found, errors = collect()
    if errors:
        raise SystemExit("\n".join(errors))
    for snippet in found:
        # fragments only compile (a signature, a call in isolation); pycon blocks are doctests
        if snippet.fragment or snippet.language == "pycon":
            continue
        if snippet.is_test_file:
            put("tests", snippet.title or "", snippet.source)
            continue
        name = snippet.title or "{}_L{}.py".format(
            re.sub(r"\W+", "_", snippet.page[: -len(".md")]), snippet.line
        )
        put("snippets", name, snippet.source)
        if snippet.title is not None:  # a page's module that its test files import
            put("tests", snippet.title, snippet.source)
    together = set(written["code"]) & set(written["snippets"])
    if together:  # one run checks both directories: a module name must be one file
        raise SystemExit(f"in code/ and in snippets/: {sorted(together)}")
    settings(out, written)
    return written


def settings(out: Path, written: dict[str, list[str]]) -> None:
    """Each checker's settings for the files ``write`` wrote (the module docstring says which)."""
    modules = ",".join(name[: -len(".py")] for name in sorted(written["snippets"]))
    options = "".join(f"{option} = True\n" for option in SNIPPET_MYPY)
    (out / "mypy-strict.ini").write_text(f"[mypy]\nstrict = True\n\n[mypy-{modules}]\n{options}", encoding="utf-8")
    relaxed = {"root": "snippets", **dict.fromkeys(SNIPPET_RULES_OFF, "none")}
    pyright = {"typeCheckingMode": "strict", "include": ["code", "snippets"],
               "executionEnvironments": [relaxed, {"root": "code"}]}
    (out / "pyrightconfig.json").write_text(json.dumps(pyright, indent=1) + "\n", encoding="utf-8")
    (out / "tests" / "pyrightconfig.json").write_text("{}\n", encoding="utf-8")
    # named on the command line, so that no configuration above the directory is read instead
    (out / "mypy-default.ini").write_text("[mypy]\n", encoding="utf-8")


if __name__ == "__main__":
    for kind, names in write(Path(sys.argv[1])).items():
        print(kind, len(names))
