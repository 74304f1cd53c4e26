"""The suite's secret watch: no log record and no SportsPostsError message ever holds an API
key, a signing secret or a password that a test gave the SDK.

Only values with a test-secret prefix (`PREFIXES`) are watched. A value without one, such as
a Hypothesis sample handed to the SDK as a key, may well be another test's ordinary text (a
header name, say): watching it would report a leak that is not one. So every secret a test
makes carries a prefix; `SecretWatch.register` refuses one without.

Each test is checked when it ends (`secret_leaks_fail_their_test`), so a leak fails the test
that leaked it, not a later one; leaks outside any test (a session fixture's teardown) fail
the session's end.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

PREFIXES = ("sk_", "sp_", "whsec_", "pw_")
"""API keys (``sk_``, the sandbox's ``sp_sandbox_``), signing secrets, store passwords."""


class SecretWatch(logging.Handler):
    """Every secret the suite hands to the SDK, and every place one leaked."""

    MIN_LENGTH = 8  # a bare prefix ("sk_") would match ordinary words

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.secrets: set[str] = set()
        self.leaks: list[str] = []

    def notice(self, value: object) -> None:
        """Watch ``value`` if it is a test secret (the SDK was given it); ignore anything else."""
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode("utf-8", "replace")
        if isinstance(value, str) and len(value) >= self.MIN_LENGTH and value.startswith(PREFIXES):
            self.secrets.add(value)

    def register(self, value: str) -> None:
        """Watch a secret the SDK cannot announce itself (a password in a store URL)."""
        if not value.startswith(PREFIXES) or len(value) < self.MIN_LENGTH:
            raise ValueError(f"a test secret starts with one of {PREFIXES} and has {self.MIN_LENGTH}+ characters")
        self.secrets.add(value)

    def check(self, where: str, text: str) -> None:
        for secret in self.secrets:
            if secret in text:
                shown = text[:200].replace(secret, secret[:6] + "<redacted>")
                self.leaks.append(f"{where}: {shown!r}")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a broken log call is not ours to judge here
            return
        if record.exc_info and record.exc_info[1] is not None:
            text += " " + str(record.exc_info[1])
        self.check(f"log record {record.name}", text)


@pytest.fixture(scope="session", autouse=True)
def secrets_never_leak() -> Iterator[SecretWatch]:
    """Suite-wide: with debug logging on, no log record and no SportsPostsError message ever
    contains an API key or a signing secret that a test gave the SDK."""
    import hmac

    import sports_posts._config as transport
    import sports_posts._errors as errors

    watch = SecretWatch()
    original_resolve = transport.ClientConfig.resolve.__func__  # type: ignore[attr-defined]
    original_new = hmac.new
    original_init = errors.SportsPostsError.__init__

    def resolve(cls: type, **kwargs: object) -> object:
        config = original_resolve(cls, **kwargs)
        watch.notice(config.api_key)
        return config

    def new(key: bytes, msg: object = None, digestmod: object = None) -> object:  # the sandbox's and the SDK's signers
        watch.notice(key)
        return original_new(key, msg, digestmod)  # type: ignore[arg-type,call-overload]

    def init(self: Exception, *args: object, **kwargs: object) -> None:
        original_init(self, *args, **kwargs)
        watch.check(f"{type(self).__name__} message", " ".join(str(a) for a in args))

    transport.ClientConfig.resolve = classmethod(resolve)  # type: ignore[method-assign,assignment]
    hmac.new = new  # type: ignore[assignment]
    errors.SportsPostsError.__init__ = init  # type: ignore[method-assign,assignment]
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
    assert not watch.leaks, "secrets leaked outside any test (a fixture's teardown):\n" + "\n".join(watch.leaks[:20])


@pytest.fixture(autouse=True)
def secret_leaks_fail_their_test(secrets_never_leak: SecretWatch, request: pytest.FixtureRequest) -> Iterator[None]:
    """A leak during a test (its fixtures' setup and teardown included) fails that test."""
    start = len(secrets_never_leak.leaks)
    yield
    leaks = secrets_never_leak.leaks[start:]
    if leaks:
        del secrets_never_leak.leaks[start:]  # reported here, not again at the session's end
        pytest.fail(f"{request.node.nodeid} leaked a secret:\n" + "\n".join(leaks[:20]), pytrace=False)
