"""Checks on the documentation sources that need no build: code that fits the page, and
the licence the package metadata names."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from .site import ROOT

# The theme sets code in a 13.6 px monospace font (0.6 em per character: 8.16 px). With
# the table of contents in the left navigation (mkdocs.yml: toc.integrate), a code block
# at 1280 px is 898 px wide (110 characters), and below 1220 px, where the navigation
# folds away, 88 characters fit every window from 800 px up. A longer line scrolls
# sideways and hides its end, where trailing comments would carry the explanations.
MAX_CODE_LINE = 88
FENCE = re.compile(r"^\s*(```|~~~)")
SOURCES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]


def code_lines(path: Path) -> list[tuple[int, str]]:
    """The lines inside fenced code blocks of a markdown file, with their line numbers."""
    lines, fence = [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(line)
        if match and (fence is None or match.group(1) == fence):
            fence = None if fence else match.group(1)
        elif fence:
            lines.append((number, line))
    return lines


def test_code_lines_are_recognised() -> None:
    assert code_lines(ROOT / "docs" / "index.md"), "the landing page shows code"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_code_lines_fit_the_text_column(path: Path) -> None:
    long = [f"{path.name}:{n}: {len(line)} chars" for n, line in code_lines(path)
            if len(line) > MAX_CODE_LINE]
    assert not long, (
        f"code lines over {MAX_CODE_LINE} characters (put the comment on its own line "
        "above the code):\n" + "\n".join(long)
    )


def test_license_matches_the_package_metadata() -> None:
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^license = "MIT"$', pyproject, re.M), "pyproject.toml names MIT"
    assert license_text.startswith("MIT License")
    assert "Permission is hereby granted, free of charge" in license_text


def test_the_package_metadata_links_the_project() -> None:
    """The wheel's Project-URL lines come from [project.urls]; they name mkdocs.yml's repository."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # tomli ships with the dev tools (pytest, mypy) on 3.9 and 3.10
        import tomli as tomllib
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    repo = re.search(r"^repo_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    assert repo is not None and urls["Source"] == repo.group(1)
    assert {"Homepage", "Documentation", "Issues", "Changelog"} <= set(urls)
    assert all(url.startswith(repo.group(1)) for url in urls.values())


def test_the_readme_install_lists_every_extra_and_what_the_test_command_installs() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    development = ("dev", "test")  # CONTRIBUTING.md's, not a user's
    missing = [name for name in extras if name not in development and f"pip install 'sports-posts[{name}]'" not in install]
    assert not missing, f"README's Install does not list the extras {missing}"
    assert "bash .ci/test" in install and "PostgreSQL" in install and "redis-server" in install


def test_the_performance_page_is_written_for_users() -> None:
    """What is measured, against what, the latest figures and how to rerun; no history of
    the figures (dates, "before", "was"): the page states what holds now."""
    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", page, re.M)
    assert headings[0] == "What is measured" and "How to run the benchmarks" in headings
    assert "Latest results" in headings and "baseline in the same run" in page
    assert "python -m benchmarks.run" in page
    # each Python's section says how many targets its run met, and its table agrees
    sections = re.split(r"^### ", page.split("## Latest results", 1)[1].split("\n## ", 1)[0], flags=re.M)
    counted = 0
    for section in sections:
        said = re.search(r"\*\*(\d+) of (\d+) targets met\.\*\*", section)
        if said is None:
            continue
        counted += 1
        met, missed = len(re.findall(r"\| yes \|$", section, re.M)), len(re.findall(r"\| \*\*no\*\* \|$", section, re.M))
        assert (met, met + missed) == (int(said[1]), int(said[2])), section.splitlines()[0]
    assert counted == 2
    log = re.compile(r"\b20\d\d-\d\d-\d\d\b|\bsessions?\b|\bmorning\b|slower VM|\bearlier\b|\bBefore[:,]|\bwas \d", re.I)
    found = [line for line in page.splitlines() if log.search(line)]
    assert not found, "development log lines:\n" + "\n".join(found)


# A repository path in a code span: `tests/zygote.py`, `.ci/typecheck`, `docs/hooks/`.
REPOSITORY_PATH = re.compile(r"`((?:\.ci|benchmarks|docs|examples|sports_posts|support|tests)/[\w./-]*)`")


def test_every_repository_path_the_pages_name_exists() -> None:
    missing = []
    for source in [*SOURCES, ROOT / "CONTRIBUTING.md"]:
        for match in REPOSITORY_PATH.finditer(source.read_text(encoding="utf-8")):
            if not (ROOT / match.group(1)).exists():
                missing.append(f"{source.relative_to(ROOT)}: {match.group(1)}")
    assert not missing, "paths that are not in the repository:\n" + "\n".join(missing)
