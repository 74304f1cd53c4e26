"""Write what a customer type-checks into one flat directory: every file of examples/, every
runnable Python block of README.md and docs/ (as tests/docs/snippets.py extracts it, with the
blocks it continues), and tests/typing/customer_view.py. Used by .ci/typecheck.

    python tests/typing/customer_files.py OUTDIR
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "docs"))

from snippets import ROOT, collect  # noqa: E402


def write(out: Path) -> list[str]:
    """Write the files into ``out``; return their names."""
    out.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    for example in sorted((ROOT / "examples").glob("*.py")):
        shutil.copy(example, out / example.name)
        names.append(example.name)
    shutil.copy(HERE / "customer_view.py", out / "customer_view.py")
    names.append("customer_view.py")
    found, errors = collect()
    if errors:
        raise SystemExit("\n".join(errors))
    for snippet in found:
        # fragments only compile (a signature, a call in isolation); pycon blocks are doctests
        if snippet.fragment or snippet.language == "pycon":
            continue
        name = snippet.title or "{}_L{}.py".format(
            re.sub(r"\W+", "_", snippet.page.removesuffix(".md")), snippet.line
        )
        if name in names:
            raise SystemExit(f"{snippet.id}: {name} is written twice")
        (out / name).write_text(snippet.source, encoding="utf-8")
        names.append(name)
    return names


if __name__ == "__main__":
    print("\n".join(write(Path(sys.argv[1]))))
