"""sandbox.connect(): the service the environment names, a sandbox only when asked for, and
never a line printed by the library."""

from __future__ import annotations

import ast
import asyncio
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import pytest

import sports_posts
from sports_posts import (
    APIConnectionError,
    AsyncSportsPosts,
    ParameterError,
    SportsPosts,
    SportsPostsError,
)
from sports_posts.polling import MemoryCheckpoint, Poller
from sports_posts.sandbox import Sandbox, aconnect, connect
from sports_posts.sandbox._connect import SANDBOX_KEY_PREFIX, choose_target
from sports_posts.webhooks import WebhookReceiver, build_test_request, sample_payload

REAL_KEY = "sk_customer_real_key_123"


@pytest.fixture(autouse=True)
def no_service_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPORTS_POSTS_API_KEY", raising=False)
    monkeypatch.delenv("SPORTS_POSTS_BASE_URL", raising=False)


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    """A sandbox standing in for the real service, named by the environment."""
    with Sandbox(seed=8, posts=200) as sb:
        monkeypatch.setenv("SPORTS_POSTS_API_KEY", sb.api_key)
        monkeypatch.setenv("SPORTS_POSTS_BASE_URL", sb.base_url)
        yield sb


# --------------------------------------------------------------------------- the decision


@pytest.mark.parametrize(
    ("key", "url", "sandbox", "expected"),
    [
        (None, None, None, "sandbox"),
        (None, None, True, "sandbox"),
        (SANDBOX_KEY_PREFIX + "ci", None, None, "sandbox"),
        (REAL_KEY, "https://api.example.test/v1", None, "service"),
        (REAL_KEY, "https://api.example.test/v1", False, "service"),
        (SANDBOX_KEY_PREFIX + "ci", "http://127.0.0.1:8080/v1", None, "service"),  # a running sandbox
        (REAL_KEY, None, None, "SPORTS_POSTS_BASE_URL"),
        (REAL_KEY, None, False, "SPORTS_POSTS_BASE_URL"),
        (None, "https://api.example.test/v1", None, "SPORTS_POSTS_API_KEY"),
        (None, None, False, "sandbox=False"),
        (SANDBOX_KEY_PREFIX + "ci", None, False, "sandbox=False"),
    ],
)
def test_the_sandbox_is_used_only_when_asked_for(
    key: Optional[str], url: Optional[str], sandbox: Optional[bool], expected: str
) -> None:
    environ = {name: value for name, value in
               (("SPORTS_POSTS_API_KEY", key), ("SPORTS_POSTS_BASE_URL", url)) if value is not None}
    if expected in ("sandbox", "service"):
        target = choose_target(sandbox, environ)
        assert target.sandbox == (expected == "sandbox")
        assert target.base_url == (None if expected == "sandbox" else url)
        assert REAL_KEY not in repr(target)
        return
    with pytest.raises(SportsPostsError) as error:
        choose_target(sandbox, environ)
    assert expected in str(error.value) and REAL_KEY not in str(error.value)


def test_sandbox_must_be_a_bool_or_none() -> None:
    with pytest.raises(ParameterError):
        choose_target("yes", {})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- connect()


def test_without_the_environment_a_sandbox_runs_for_the_block(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="sports_posts"), connect(seed=4, posts=200) as client:
        assert isinstance(client, SportsPosts)
        assert client.account.information().company.plan == "paid"
        base_url = client.base_url
    assert any("embedded sandbox" in r.getMessage() and base_url in r.getMessage() for r in caplog.records)
    with pytest.raises(APIConnectionError), SportsPosts(api_key="sk_test_" + "k" * 10, base_url=base_url, max_retries=0) as after:
        after.account.information()  # the sandbox stopped with the block


def test_a_real_key_without_a_base_url_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", REAL_KEY)
    with pytest.raises(SportsPostsError, match="SPORTS_POSTS_BASE_URL") as error, connect():
        pytest.fail("no client may be handed out")
    assert REAL_KEY not in str(error.value)

    async def main() -> None:
        async with aconnect():
            pytest.fail("no client may be handed out")

    with pytest.raises(SportsPostsError, match="SPORTS_POSTS_BASE_URL"):
        asyncio.run(main())


def test_sandbox_true_wins_over_the_environment_with_a_warning(service: Sandbox) -> None:
    with pytest.warns(UserWarning, match="SPORTS_POSTS_BASE_URL is set but ignored"), \
            connect(sandbox=True, posts=200) as client:
        assert client.base_url != service.base_url
        client.account.x_ids()
    assert service.calls() == 0


def test_a_sandbox_key_gets_a_sandbox_that_accepts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    key = SANDBOX_KEY_PREFIX + "shared_by_ci"
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", key)
    with connect(posts=200, leagues=["NBA"]) as client:
        info = client.account.information()
        assert info.company.plan == "paid"
        # the sandbox key has the account of the sandbox's own key: its leagues too
        assert {p.league for p in client.posts.list(leagues="NBA", limit=5).items} == {"NBA"}


def test_unknown_sandbox_options_are_a_parameter_error() -> None:
    with pytest.raises(ParameterError, match="sede"), connect(sede=4):  # type: ignore[call-arg]
        pytest.fail("no client may be handed out")


def test_with_the_environment_the_named_service_is_used(service: Sandbox) -> None:
    with connect() as client:
        assert client.base_url == service.base_url
        client.account.x_ids()
    assert service.calls() == 1

    async def main() -> str:
        async with aconnect() as aclient:
            assert isinstance(aclient, AsyncSportsPosts)
            await aclient.account.x_ids()
            return aclient.base_url

    assert asyncio.run(main()) == service.base_url
    assert service.calls() == 2


# --------------------------------------------------------------------------- the library never prints


def test_the_library_paths_print_nothing(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warnings are the caller's to show, not prints
        with connect(seed=2, posts=200, clock="manual") as client:
            list(client.posts.list(leagues="NFL", limit=5).iter_items(max_items=12))
            poller = Poller(client, filters={"leagues": "NFL"}, interval=60, checkpoint=MemoryCheckpoint(),
                            since="2000-01-01T00:00:00Z", sleep=lambda seconds: None)
            with poller:
                next(iter(poller))
            monkeypatch.setenv("SPORTS_POSTS_BASE_URL", client.base_url)
            with connect(sandbox=True, posts=200):  # warns, does not print
                pass
            monkeypatch.delenv("SPORTS_POSTS_BASE_URL")

        async def main() -> None:
            async with aconnect(posts=200) as aclient:
                await aclient.account.information()

        asyncio.run(main())
        receiver = WebhookReceiver("whsec_print_test", lambda event: None)
        request = build_test_request(sample_payload(), "whsec_print_test")
        assert receiver.handle(request.body, request.headers).status // 100 == 2
        assert receiver.handle(request.body, {}).status == 401
        receiver.close()
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_no_module_but_the_cli_and_the_demo_prints() -> None:
    """Only the command line prints; the demo prints to the stream the CLI hands it."""
    package = Path(sports_posts.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package).as_posix()
        if name in ("cli.py", "_demo.py") or name.startswith(("cli/", "_cli")):
            continue  # the command line, in one module or several
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                offenders.append(f"{name}:{node.lineno} print()")
            if isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr") and \
                    isinstance(node.value, ast.Name) and node.value.id == "sys":
                offenders.append(f"{name}:{node.lineno} sys.{node.attr}")
    assert offenders == []
