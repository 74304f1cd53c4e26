"""Write what a customer type-checks, in three directories (used by .ci/typecheck):

- ``code/``: every file of examples/ and tests/typecheck/customer_view.py: strict, as they are.
- ``snippets/``: every runnable Python block of README.md and docs/ that is not a test file
  (as tests/docs/snippets.py extracts it, after the blocks it continues): strict, less the
  rules a page's blocks run together break without a fault of their own (a name defined
  again by a later block, a block that only shows an import).
- ``tests/``: the blocks that are pytest files, with the page's other titled files they
  import: each checker's default mode, as most customers check their tests.

    python tests/typecheck/customer_files.py OUTDIR
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "docs"))

from snippets import ROOT, collect  # noqa: E402

KINDS = ("code", "snippets", "tests")


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
    return written


if __name__ == "__main__":
    for kind, names in write(Path(sys.argv[1])).items():
        print(kind, len(names))
