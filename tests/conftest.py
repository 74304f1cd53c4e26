"""Fixtures shared by the whole suite: the async backend, a real redis-server and a real PostgreSQL
(with its tables, behind PgBouncer or not), a fresh key per test, and each fleet store's engine."""

from __future__ import annotations

import gc
import os
import uuid
from collections.abc import Iterator

import pytest

from sports_posts.testing import RetryWaits

# The secret watch's fixtures (session-wide patching, then a check as each test ends).
from tests.secret_watch import secret_leaks_fail_their_test, secrets_never_leak  # noqa: F401

# respx mocks httpx only: clients made without an explicit stack run on httpx in this suite;
# the tests that run on both stacks (tests/stacks.py) choose theirs.
os.environ.setdefault("SPORTS_POSTS_HTTP_STACK", "httpx")


# The slow tiers, by test file name (a file moved to another folder keeps its tier) or by
# "file::test" for one test of a file that is otherwise quick; and every Hypothesis test, in
# the fuzz tier. Each gets its tier's marker and ``slow``: CI runs the whole suite on the
# newest Python and ``-m "not slow"`` on the oldest.
SLOW_TIERS = {
    "test_layers.py::test_every_module_imports_alone_in_a_fresh_interpreter": "processes",
    "test_checkpoint_lock.py": "processes",
    "test_checkpoints.py::test_file_checkpoint_survives_sigkill_in_the_middle_of_writes": "processes",
    "test_crashes.py": "processes",
    "test_examples.py": "processes",
    "test_fleet_benchmark.py": "processes",
    "test_inbox_peers_benchmark.py::test_a_quick_run_records_put_and_drain_against_the_best_installed_peer": "processes",
    "test_fleet_crashes.py": "processes",
    "test_inbox_batch_crash.py": "processes",
    "test_fleet_example.py": "processes",
    "test_fleet_processes.py": "processes",
    "test_fleet_worker_example.py": "processes",
    "test_pytest_plugin.py": "processes",
    "test_redis_deployments.py::test_a_cluster_drain_across_processes_handles_each_story_once": "processes",
    "test_store_faults.py": "processes",
    "test_snippet_rules.py::test_a_test_file_block_runs_under_pytest": "processes",
    "test_webhook_lazy_import.py": "processes",
    "test_webhook_multiprocess.py": "processes",
    "test_readme_polling.py": "docs",
    "test_site.py": "docs",
    "test_browser.py": "docs",
    "test_snippets.py": "docs",
    "test_webhooks_testing_block.py": "docs",
    "test_client_options.py::test_fuzz_client_options_only_raise_sdk_errors": "fuzz",
    "test_params_fuzz.py": "fuzz",
    "test_properties.py": "fuzz",
    "test_sandbox_contract.py": "fuzz",
    "test_webhook_fuzz.py": "fuzz",
}


def pytest_collection_finish(session: pytest.Session) -> None:
    """Leave what collection made (every module imported, every test function) out of the
    garbage collector's later full passes (``gc.freeze``): it lives for the whole run, and
    each full pass would walk it again, a large part of a worker's time in the collector.
    Only the run's own process is frozen so; the SDK never touches the collector."""
    gc.collect()
    gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the slow tiers, and put the files that hold a slow test first (each file's tests
    stay together, in their order): those wait on processes and servers the longest, so on
    several workers (``-n 2 --dist loadfile --no-loadscope-reorder``) their waits overlap
    other work, and the run ends on short files that keep every worker busy to the end."""
    slow_files = set()
    for item in items:
        name = item.path.name
        test = getattr(item, "originalname", item.name)
        tier = SLOW_TIERS.get(f"{name}::{test}") or SLOW_TIERS.get(name)
        if tier is None and getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            tier = "fuzz"  # every property-based test: generated inputs find logic, not version, faults
        if tier is not None:
            item.add_marker(tier)
            item.add_marker("slow")
            slow_files.add(item.path)
        elif item.get_closest_marker("slow") is not None:  # marked in its own file
            slow_files.add(item.path)
    items.sort(key=lambda item: item.path not in slow_files)  # stable: the rest keep their order


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (the anyio pytest plugin ships with httpx's anyio)."""
    return "asyncio"


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A private redis-server on a free loopback port for the whole session.

    `.ci/run` installs Debian's redis-server; a missing binary is an error, not a skip.
    """
    from support.servers import ServerError, private_redis

    try:
        with private_redis() as url:
            yield url
    except ServerError as exc:
        pytest.fail(str(exc))


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[object]:
    """A redis client on the session server, flushed before each test."""
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A private PostgreSQL server on a free loopback port for the whole session (user ``test``).

    `.ci/test` installs Debian's postgresql; a missing binary is an error, not a skip.
    """
    from support.servers import ServerError, private_postgres

    try:
        with private_postgres() as url:
            yield url
    except ServerError as exc:
        pytest.fail(str(exc))


@pytest.fixture
def pg(postgres_url: str) -> Iterator[str]:
    """The session server with the stores' tables created and emptied (each test starts from none)."""
    import psycopg

    from sports_posts._stores.postgres import schema_sql

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(schema_sql())
        conn.execute("TRUNCATE sports_posts_inbox, sports_posts_claims, sports_posts_effects")
        conn.execute("DROP TABLE IF EXISTS story_effects")
    yield postgres_url


@pytest.fixture
def key() -> str:
    """A key no other test uses (the session's Redis and PostgreSQL are shared)."""
    return f"test:{uuid.uuid4().hex}"


@pytest.fixture(params=["redis", "postgres"])
def store_url(request: pytest.FixtureRequest) -> str:
    """The session's Redis or PostgreSQL, by URL: every fleet object runs on both."""
    name = "redis_url" if request.param == "redis" else "postgres_url"
    return str(request.getfixturevalue(name))


def _pgbouncer(postgres_url: str, pool_mode: str) -> Iterator[str]:
    from support.servers import ServerError, private_pgbouncer

    try:
        with private_pgbouncer(postgres_url, pool_mode) as url:
            yield url
    except ServerError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def pgbouncer_transaction_url(postgres_url: str) -> Iterator[str]:
    """A PgBouncer with its default settings, transaction pooling, before the session's server."""
    yield from _pgbouncer(postgres_url, "transaction")


@pytest.fixture(scope="session")
def pgbouncer_session_url(postgres_url: str) -> Iterator[str]:
    """A PgBouncer with its default settings, session pooling, before the session's server."""
    yield from _pgbouncer(postgres_url, "session")


@pytest.fixture(params=["direct", "pgbouncer-transaction", "pgbouncer-session"])
def deployment(request: pytest.FixtureRequest, pg: str) -> str:
    """The URL the stores are given: the server itself, or a PgBouncer before it (one each per run)."""
    if request.param == "direct":
        return pg
    return str(request.getfixturevalue(request.param.replace("-", "_") + "_url"))


@pytest.fixture
def retry_waits() -> RetryWaits:
    """A client's ``sleep=`` that records each wait between retries instead of sleeping (the
    suite never sleeps for real between retries: ``tests.runner.Runner`` passes one to each
    client it makes)."""
    return RetryWaits()


@pytest.fixture
def retry_sleeps(retry_waits: RetryWaits) -> list[float]:
    """The waits ``retry_waits`` recorded, in order."""
    return retry_waits.waits


@pytest.fixture
def no_earlier_garbage() -> None:
    """Collect what earlier tests of this worker left unreachable before a test watches its
    loops' exception handlers: an unclosed driver client of theirs, collected while this
    test's loop runs, reports itself to that loop (redis-py's ``__del__`` asks the running one)."""
    gc.collect()
