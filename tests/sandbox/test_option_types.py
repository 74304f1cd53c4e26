"""The sandbox's keyword-option TypedDicts name exactly the parameters they stand for, so a
type checker accepts every option the sandbox takes and refuses a misspelt one."""

from __future__ import annotations

import inspect
from dataclasses import fields

from sports_posts.sandbox import (
    BreakingNewsOptions,
    KeyChanges,
    KeyConfig,
    Sandbox,
    SandboxOptions,
    UpdateOptions,
)
from sports_posts.sandbox.news import breaking_news_data, update_data


def _keywords(func: object, *leave_out: str) -> set[str]:
    parameters = inspect.signature(func).parameters.values()  # type: ignore[arg-type]
    return {p.name for p in parameters
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in leave_out}


def test_sandbox_options_are_the_sandbox_parameters() -> None:
    assert set(SandboxOptions.__annotations__) == _keywords(Sandbox.__init__, "self")


def test_breaking_news_options_are_what_the_event_builder_takes() -> None:
    assert set(BreakingNewsOptions.__annotations__) == _keywords(breaking_news_data, "world", "rng", "league")


def test_update_options_are_what_the_update_builder_takes() -> None:
    assert set(UpdateOptions.__annotations__) == _keywords(update_data, "world", "rng", "original", "whats_new")


def test_key_changes_are_fields_of_a_key() -> None:
    assert set(KeyChanges.__annotations__) <= {f.name for f in fields(KeyConfig)}


def test_update_key_takes_endpoints_and_leagues_as_add_key_does() -> None:
    sandbox = Sandbox(seed=1, posts=10)
    key = sandbox.add_key("paid")
    sandbox.update_key(key, endpoints=["posts"], leagues="nfl,nba", plan="free")
    account = sandbox.accounts.get(key)
    assert account is not None
    assert account.config.endpoints == frozenset({"posts"})
    assert account.config.leagues == frozenset({"NFL", "NBA"})
    assert account.config.plan == "free"
