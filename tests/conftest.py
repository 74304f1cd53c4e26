"""Fixtures shared by the whole suite: the async backend, a real redis-server and a real PostgreSQL."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest

# respx mocks httpx only: clients made without an explicit stack run on httpx in this suite;
# the tests that run on both stacks (tests/stacks.py) choose theirs.
os.environ.setdefault("SPORTS_POSTS_HTTP_STACK", "httpx")


# The slow tiers, by test file name (a file moved to another folder keeps its tier) or by
# "file::test" for one test of a file that is otherwise quick. Each gets its tier's marker
# and ``slow``: CI runs the whole suite on the newest Python and ``-m "not slow"`` on the oldest.
SLOW_TIERS = {
    "test_layers.py::test_every_module_imports_alone_in_a_fresh_interpreter": "processes",
    "test_checkpoint_lock.py": "processes",
    "test_checkpoints.py::test_file_checkpoint_survives_sigkill_in_the_middle_of_writes": "processes",
    "test_crashes.py": "processes",
    "test_example.py": "processes",
    "test_examples.py": "processes",
    "test_fleet_benchmark.py": "processes",
    "test_fleet_crashes.py": "processes",
    "test_fleet_example.py": "processes",
    "test_fleet_processes.py": "processes",
    "test_pytest_plugin.py": "processes",
    "test_snippet_rules.py::test_a_test_file_block_runs_under_pytest": "processes",
    "test_webhook_lazy_import.py": "processes",
    "test_webhook_multiprocess.py": "processes",
    "test_site.py": "docs",
    "test_snippets.py": "docs",
    "test_client_options.py::test_fuzz_client_options_only_raise_sdk_errors": "fuzz",
    "test_params_fuzz.py": "fuzz",
    "test_properties.py": "fuzz",
    "test_sandbox_contract.py": "fuzz",
    "test_webhook_fuzz.py": "fuzz",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = item.path.name
        test = getattr(item, "originalname", item.name)
        tier = SLOW_TIERS.get(f"{name}::{test}") or SLOW_TIERS.get(name)
        if tier is not None:
            item.add_marker(tier)
            item.add_marker("slow")


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (the anyio pytest plugin ships with httpx's anyio)."""
    return "asyncio"


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A private redis-server on a free loopback port for the whole session.

    `.ci/run` installs Debian's redis-server; a missing binary is an error, not a skip.
    """
    from tests.servers import ServerError, private_redis

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
    from tests.servers import ServerError, private_postgres

    try:
        with private_postgres() as url:
            yield url
    except ServerError as exc:
        pytest.fail(str(exc))


@pytest.fixture(autouse=True)
def retry_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every wait the clients' retry loops ask for, recorded instead of slept.

    Autouse: the suite never sleeps for real between retries.
    """
    import sports_posts._client as client_module

    waits: list[float] = []

    def fake_sleep(seconds: float) -> None:
        waits.append(seconds)

    async def fake_async_sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(client_module, "_sleep", fake_sleep)
    monkeypatch.setattr(client_module, "_async_sleep", fake_async_sleep)
    return waits


class _SecretWatch(logging.Handler):
    """Every API key and signing secret the suite hands to the SDK, and every place one leaked."""

    MIN_LENGTH = 8  # shorter test secrets ("k1") would match ordinary words

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.secrets: set[str] = set()
        self.leaks: list[str] = []

    def register(self, value: object) -> None:
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if isinstance(value, str) and len(value) >= self.MIN_LENGTH:
            self.secrets.add(value)

    def check(self, where: str, text: str) -> None:
        for secret in self.secrets:
            if secret in text:
                self.leaks.append(f"{where}: {text[:200]!r}")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a broken log call is not ours to judge here
            return
        if record.exc_info and record.exc_info[1] is not None:
            text += " " + str(record.exc_info[1])
        self.check(f"log record {record.name}", text)


@pytest.fixture(scope="session", autouse=True)
def secrets_never_leak() -> Iterator[_SecretWatch]:
    """Suite-wide: with debug logging on, no log record and no SportsPostsError message ever
    contains an API key or a signing secret that a test gave the SDK."""
    import hmac

    import sports_posts._errors as errors
    import sports_posts._transport as transport

    watch = _SecretWatch()
    original_resolve = transport.ClientConfig.resolve.__func__  # type: ignore[attr-defined]
    original_new = hmac.new
    original_init = errors.SportsPostsError.__init__

    def resolve(cls: type, **kwargs: object) -> object:
        config = original_resolve(cls, **kwargs)
        watch.register(config.api_key)
        return config

    def new(key: bytes, msg: object = None, digestmod: object = None) -> object:  # the sandbox's and the SDK's signers
        watch.register(key)
        return original_new(key, msg, digestmod)  # type: ignore[arg-type]

    def init(self: Exception, *args: object, **kwargs: object) -> None:
        original_init(self, *args, **kwargs)
        watch.check(f"{type(self).__name__} message", " ".join(str(a) for a in args))

    transport.ClientConfig.resolve = classmethod(resolve)  # type: ignore[method-assign,assignment]
    hmac.new = new  # type: ignore[assignment]
    errors.SportsPostsError.__init__ = init  # type: ignore[method-assign]
    sdk_logger = logging.getLogger("sports_posts")
    previous_level = sdk_logger.level
    sdk_logger.setLevel(logging.DEBUG)
    root = logging.getLogger()
    root.addHandler(watch)
    try:
        yield watch
    finally:
        root.removeHandler(watch)
        sdk_logger.setLevel(previous_level)
        transport.ClientConfig.resolve = classmethod(original_resolve)  # type: ignore[method-assign,assignment]
        hmac.new = original_new
        errors.SportsPostsError.__init__ = original_init  # type: ignore[method-assign]
    assert not watch.leaks, "secrets leaked:\n" + "\n".join(watch.leaks[:20])
