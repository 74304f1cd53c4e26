"""nox sessions: the suite on every supported Python, plus lint, types and docs.

    nox                      # everything
    nox -s tests-3.9         # one version
"""

from __future__ import annotations

import nox

PYTHONS = ["3.9", "3.10", "3.11", "3.12", "3.13"]
nox.options.sessions = [*(f"tests-{v}" for v in PYTHONS), "lint", "docs"]


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The whole suite (needs redis-server on PATH; .ci/test installs it)."""
    session.install("-e", ".[dev]")
    session.run("pytest", "-q", *session.posargs)


@nox.session(python="3.13")
def lint(session: nox.Session) -> None:
    """ruff and mypy --strict on the package, the examples, the benchmarks and their support."""
    session.install("-e", ".[dev]")
    session.run("ruff", "check", "sports_posts", "tests", "examples", "benchmarks", "support")
    session.run("mypy", "--strict", "sports_posts", "examples", "benchmarks", "support")


@nox.session(python="3.13")
def docs(session: nox.Session) -> None:
    """mkdocs build --strict."""
    session.install("-e", ".[dev]")
    session.run("mkdocs", "build", "--strict", "-d", session.create_tmp())


@nox.session(python="3.13")
def benchmarks(session: nox.Session) -> None:
    """Every benchmark, as ratios against a baseline in the same run."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "benchmarks.run", *session.posargs)
