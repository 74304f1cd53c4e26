"""Every Python block of README.md and docs/ runs as pasted, against a sandbox, and spends
no more billed calls than its `# costs:` comment states.

Each block is a case named ``page:line``. A block runs in a process of its own, forked from
an interpreter that has imported the SDK (tests/zygote.py), in a temp directory shared
by its page, with the environment a reader of the README has: the sandbox's
``SPORTS_POSTS_BASE_URL`` / ``SPORTS_POSTS_API_KEY`` (and ``REDIS_URL`` / ``DATABASE_URL``,
a database of their own on the suite's private servers, when a block names them). A
``sitecustomize`` refuses every address but loopback. The pages run on a few threads as soon as the first
case asks (the longest first), so the cases mostly read finished results.
Conventions: tests/docs/snippets.py and the README's Development section.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from ..zygote import CLIENT, Zygote
from .snippets import (
    ROOT,
    Outcome,
    Snippet,
    collect,
    cost,
    file_name,
    install_loopback_guard,
    run,
)

TIMEOUT = 60.0  # seconds for one block; a hung block fails with its id, the suite goes on
WORKERS = 3  # a block waits on loopback HTTP and its sandbox's threads as much as on a CPU
KEPT = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT", "TZ")


RUN_TESTS = ("test_snippet_runs", "test_snippet_spends_what_it_states")

SNIPPETS, ERRORS = collect()
RUNNABLE = [s for s in SNIPPETS if not s.fragment]
FRAGMENTS = [s for s in SNIPPETS if s.fragment]


def test_markers_sit_on_python_fences() -> None:
    assert not ERRORS, "\n".join(ERRORS)


def test_the_pages_have_blocks_to_run() -> None:
    pages_with_code = {s.page for s in RUNNABLE}
    assert {"README.md", "docs/getting-started.md", "docs/webhooks.md"} <= pages_with_code


def test_every_example_is_listed_in_the_readme_and_the_examples_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    for example in sorted((ROOT / "examples").glob("*.py")):
        assert f"`examples/{example.name}`" in readme, f"README.md's table lacks {example.name}"
        assert f"(repo:examples/{example.name})" in page, f"docs/examples.md lacks {example.name}"


@pytest.mark.parametrize("snippet", FRAGMENTS, ids=[s.id for s in FRAGMENTS])
def test_fragment_compiles(snippet: Snippet) -> None:
    compile(snippet.source, snippet.id, "exec")


@pytest.fixture(scope="session")
def snippet_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Future[Outcome]]]:
    """Start every selected block (pages in parallel, each page's blocks in order) against a
    sandbox that lives for the session; the futures by block id."""
    from sports_posts.sandbox import Sandbox

    selected = {item.callspec.params["snippet"].id for item in request.session.items  # type: ignore[attr-defined]
                if getattr(item, "originalname", "") in RUN_TESTS}
    chosen = [s for s in RUNNABLE if s.id in selected]
    by_page: dict[str, list[Snippet]] = {}
    for snippet in chosen:
        by_page.setdefault(snippet.page, []).append(snippet)
    with Sandbox(seed=7) as sandbox:
        env = {name: os.environ[name] for name in KEPT if name in os.environ}
        guard = install_loopback_guard(tmp_path_factory.mktemp("loopback-guard"))
        env.update(SPORTS_POSTS_BASE_URL=sandbox.base_url, SPORTS_POSTS_API_KEY=sandbox.api_key,
                   # this checkout's package, not whichever one the interpreter has installed
                   PYTHONPATH=os.pathsep.join([guard, str(ROOT)]))
        sources = "".join(s.source for s in chosen)
        if "REDIS_URL" in sources:
            env["REDIS_URL"] = _own_redis_db(request.getfixturevalue("redis_url"))
        if "DATABASE_URL" in sources:
            env["DATABASE_URL"] = _own_database(request.getfixturevalue("postgres_url"))

        def run_page(blocks: list[Snippet], workdir: Path) -> dict[str, Outcome]:
            page_env = {**env, "HOME": str(workdir)}
            for block in SNIPPETS:  # files other blocks of the page import
                if block.page == blocks[0].page and block.title:
                    (workdir / file_name(block)).write_text(block.source, encoding="utf-8")
            return {b.id: run_counted(b, workdir, page_env) for b in blocks}

        def run_counted(block: Snippet, workdir: Path, page_env: dict[str, str]) -> Outcome:
            """Run a block with an API key of its own, so the sandbox counts its calls alone;
            calls to a sandbox the block starts itself are counted in its interpreter."""
            key = sandbox.add_key()
            counts = workdir / f"calls-{block.line}.txt"
            block_env = {**page_env, "SPORTS_POSTS_API_KEY": key, "SPORTS_POSTS_DOCS_CALLS": str(counts)}
            outcome = run(block, workdir, block_env, sys.executable, TIMEOUT, zygote)
            own = sum(int(n) for n in counts.read_text().split()) if counts.exists() else 0
            return replace(outcome, calls=sandbox.calls(key) + own)

        # what every block imports, imported once; the guard is each block's own (its PYTHONPATH)
        zygote = Zygote(CLIENT, env={**env, "PYTHONPATH": str(ROOT)})
        try:
            with ThreadPoolExecutor(max_workers=WORKERS) as pool:
                page_runs = {
                    page: pool.submit(run_page, blocks, tmp_path_factory.mktemp(page.replace("/", "-")))
                    for page, blocks in sorted(by_page.items(), key=lambda item: -cost(item[1]))
                }
                futures: dict[str, Future[Outcome]] = {}
                for snippet in chosen:
                    futures[snippet.id] = _pick(page_runs[snippet.page], snippet.id)
                yield futures
        finally:
            zygote.close()


# The session's servers are shared with the rest of the suite: the blocks get a database of
# their own, so a table or key they create (fleet.md's `stories`) meets no other test's.
DOCS_DATABASE = "docs_snippets"
DOCS_REDIS_DB = 13


def _own_database(url: str) -> str:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DOCS_DATABASE}")
        conn.execute(f"CREATE DATABASE {DOCS_DATABASE}")
    return url.rsplit("/", 1)[0] + "/" + DOCS_DATABASE


def _own_redis_db(url: str) -> str:
    import redis

    own = url.rsplit("/", 1)[0] + f"/{DOCS_REDIS_DB}"
    client = redis.Redis.from_url(own)
    try:
        client.flushdb()
    finally:
        client.close()
    return own


def _pick(page_run: Future[dict[str, Outcome]], block: str) -> Future[Outcome]:
    """The outcome of one block out of its page's run."""
    picked: Future[Outcome] = Future()

    def done(finished: Future[dict[str, Outcome]]) -> None:
        error = finished.exception()
        if error is not None:
            picked.set_exception(error)
        else:
            picked.set_result(finished.result()[block])

    page_run.add_done_callback(done)
    return picked


@pytest.mark.parametrize("snippet", RUNNABLE, ids=[s.id for s in RUNNABLE])
def test_snippet_runs(snippet: Snippet, snippet_runs: dict[str, Future[Outcome]]) -> None:
    # Each page's blocks are bounded by TIMEOUT apiece; this wait only guards the harness.
    outcome = snippet_runs[snippet.id].result(timeout=TIMEOUT * 40)
    assert outcome.ok, (
        f"{snippet.id} failed as pasted (mark an excerpt <!-- fragment -->, a block that "
        f"needs the one above <!-- continues -->):\n{outcome.output[-4000:]}"
    )


@pytest.mark.parametrize("snippet", RUNNABLE, ids=[s.id for s in RUNNABLE])
def test_snippet_spends_what_it_states(snippet: Snippet, snippet_runs: dict[str, Future[Outcome]]) -> None:
    """A reader on a metered plan pays for what a block sends: every block that makes a
    call states the most it makes (``# costs: up to N calls``), and spends no more."""
    outcome = snippet_runs[snippet.id].result(timeout=TIMEOUT * 40)
    assert outcome.calls is not None
    stated = snippet.stated_cost
    if stated is None:
        assert outcome.calls == 0, (
            f"{snippet.id} made {outcome.calls} billed call(s) and does not say so: add a comment "
            f"such as `# costs: up to {outcome.calls} calls`")
    else:
        assert outcome.calls <= stated, f"{snippet.id} made {outcome.calls} billed calls; it states at most {stated}"
