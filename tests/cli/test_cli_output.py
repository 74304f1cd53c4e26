"""The CLI does what it says: --limit N is N posts for the fewest calls, poll shows it is
alive on a terminal, tables line up, counts read as English, every option explains itself."""

from __future__ import annotations

import argparse
import io
import re
import threading
from collections.abc import Iterator
from datetime import datetime, timezone

import httpx
import pytest
import respx

import sports_posts.cli._poll as cli
from sports_posts.cli import build_parser
from sports_posts.cli._format import align, count, format_post, post_header
from sports_posts.models.post import Post
from sports_posts.sandbox import Sandbox
from tests.wire import spec_post

from .conftest import run

BASE_URL = "https://api.example.test/v1"


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def page(n: int, page_no: int, has_next: bool = True) -> dict[str, object]:
    items = [spec_post(f"{page_no}-{i}", "2026-11-21T12:00:00Z", text="post", league="NFL") for i in range(n)]
    return {"pagination": {"page": page_no, "limit": n, "has_next": has_next, "has_prev": page_no > 1},
            "items": items}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    """The environment names a (mocked) service; each GET /posts answers a full page."""
    monkeypatch.setenv("SPORTS_POSTS_API_KEY", "sk_test_cli_output")
    monkeypatch.setenv("SPORTS_POSTS_BASE_URL", BASE_URL)

    def answer(request: httpx.Request) -> httpx.Response:
        limit = int(request.url.params.get("limit", "20"))
        return httpx.Response(200, json=page(limit, int(request.url.params.get("page", "1"))))

    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        router.get("/posts").mock(side_effect=answer)
        yield router


def sent_params(router: respx.MockRouter) -> list[dict[str, str]]:
    return [dict(call.request.url.params) for call in router.calls]


# --------------------------------------------------------------------------- posts --limit


def test_limit_n_up_to_100_is_one_call_with_limit_n_on_the_wire(api: respx.MockRouter) -> None:
    status, out, err = run("posts", "--leagues", "NFL", "--limit", "2")
    assert status == 0
    assert sent_params(api) == [{"leagues": "NFL", "limit": "2"}]
    assert len(out.strip().splitlines()) == 1 + 2  # the header and two posts
    assert err.endswith("2 posts, 1 call\n")


def test_limit_over_100_takes_full_pages_and_stops_at_n(api: respx.MockRouter) -> None:
    status, out, err = run("posts", "--limit", "250", "--json")
    assert status == 0
    assert [p.get("limit") for p in sent_params(api)] == ["100", "100", "100"]
    assert [p.get("page") for p in sent_params(api)] == [None, "2", "3"]
    assert len(out.strip().splitlines()) == 250 and "250 posts, 3 calls" in err


def test_page_size_is_separate_from_limit(api: respx.MockRouter) -> None:
    status, out, err = run("posts", "--limit", "5", "--page-size", "2", "--json")
    assert status == 0
    assert [p["limit"] for p in sent_params(api)] == ["2", "2", "2"]
    assert len(out.strip().splitlines()) == 5 and "5 posts, 3 calls" in err


def test_max_calls_refuses_before_any_call(api: respx.MockRouter) -> None:
    status, out, err = run("posts", "--limit", "250", "--max-calls", "2")
    assert status == 1 and api.calls.call_count == 0 and out == ""
    assert "needs up to 3 calls" in err and "--max-calls 2" in err


@pytest.mark.parametrize("value", ["0", "-3", "two"])
def test_limit_must_be_a_positive_whole_number(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["posts", "--limit", value])
    assert exit_info.value.code == 2 and "--limit" in capsys.readouterr().err


# --------------------------------------------------------------------------- poll status line


@pytest.fixture
def live_service(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    """A sandbox on a manual clock, named by the environment; the CLI's waits move its clock."""
    # Started at the local time: the poller's first lower bound follows the local clock.
    with Sandbox(seed=5, clock="manual", posts=200, posts_per_minute=30, start=datetime.now(timezone.utc)) as sb:
        monkeypatch.setenv("SPORTS_POSTS_API_KEY", sb.api_key)
        monkeypatch.setenv("SPORTS_POSTS_BASE_URL", sb.base_url)
        yield sb


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch, live_service: Sandbox) -> list[float]:
    """Every wait of the poll command, recorded and played on the sandbox clock instead of slept."""
    recorded: list[float] = []

    def wait(event: threading.Event, seconds: float) -> bool:
        recorded.append(seconds)
        live_service.advance(seconds)
        return event.is_set()

    monkeypatch.setattr(cli, "_wait", wait)
    return recorded


def test_poll_shows_a_status_line_on_a_terminal(waits: list[float]) -> None:
    terminal = Terminal()
    status, out, err = run("poll", "--leagues", "NFL,NBA", "--interval", "10", "--max-batches", "2",
                           "--json", err=terminal)
    assert status == 0, err
    assert waits and all(0 < w <= 1.0 for w in waits)  # rewritten once a second
    lines = re.findall(r"\rleagues=NFL,NBA: next call in (\d+) s, (\d+) calls? spent\x1b\[K", err)
    assert [int(s) for s, _ in lines[:10]] == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
    final = re.search(r"2 batches, (\d+) calls\n", err)
    assert final is not None and int(lines[-1][1]) < int(final.group(1))
    assert "\r\x1b[K" in err  # cleared before the next batch prints


def test_poll_is_quiet_when_not_a_terminal(waits: list[float]) -> None:
    status, out, err = run("poll", "--leagues", "NFL,NBA", "--interval", "10", "--max-batches", "2", "--json")
    assert status == 0, err
    assert waits and "next call" not in err and "\r" not in err


def test_poll_takes_a_page_size(waits: list[float]) -> None:
    status, out, err = run("poll", "--leagues", "NFL,NBA", "--page-size", "2", "--max-batches", "1", "--json")
    assert status == 0, err
    assert len(out.splitlines()) > 0 and "error" not in err


# --------------------------------------------------------------------------- tables


def make_post(**fields: object) -> Post:
    base: dict[str, object] = {**spec_post("1", text="text"), "created_at": datetime(2026, 11, 21, 12, tzinfo=timezone.utc)}
    return Post.model_validate({**base, **fields})


def test_post_rows_line_up_under_the_header_whatever_the_values() -> None:
    posts = [
        make_post(league="NFL", author_username="a", like_count=3, media_type="photo"),
        make_post(league="CRICKET", author_username="A_really_long_username_here", like_count=98_765_432,
                  media_type="animated_gif"),
        make_post(league="", author_username=None, like_count=0, media_type="none", text="line\nbreak"),
    ]
    header = post_header(120)
    start = header.index("text")
    for line in (format_post(p, 120) for p in posts):
        assert len(line) <= 120 and "\n" not in line
        assert line[start - 2:start] == "  " and line[start] != " "
    assert "animated_gif" in format_post(posts[1], 120) and "99M" in format_post(posts[1], 120)


def test_align_pads_each_column_to_its_widest_cell() -> None:
    lines = align([["id", "team", "x"], ["1029", "Arizona Cardinals", "NFC"], ["7", "Bills", "AFC"]], right=[0])
    assert lines == ["  id  team               x", "1029  Arizona Cardinals  NFC", "   7  Bills              AFC"]


def test_teams_table_columns_line_up() -> None:
    status, out, _ = run("teams", "--league", "NFL")
    assert status == 0
    header, *rows = out.splitlines()
    column = header.index("conference")
    assert all(row[column - 2:column] == "  " and row[column] != " " for row in rows)


@pytest.mark.parametrize(("n", "text"), [(0, "0 posts"), (1, "1 post"), (2, "2 posts")])
def test_counts_are_english(n: int, text: str) -> None:
    assert count(n, "post") == text
    assert count(1, "batch", "batches") == "1 batch" and count(3, "batch", "batches") == "3 batches"


# --------------------------------------------------------------------------- help


def test_teams_help_shows_the_league_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["teams", "--help"])
    help_text = capsys.readouterr().out
    assert "--league LEAGUE" in help_text and "sports-posts teams --league NBA" in help_text


def test_teams_without_a_league_says_how(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run("teams")
    assert status == 1 and "--league NBA" in err


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield name, child
                for sub_name, grandchild in _subparsers(child):
                    yield f"{name} {sub_name}", grandchild


def test_every_option_of_every_command_has_a_help_text() -> None:
    missing = [
        f"{name} {action.option_strings or action.dest}"
        for name, parser in _subparsers(build_parser())
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) and not action.help
    ]
    assert missing == []
    sandbox = dict(_subparsers(build_parser()))["sandbox"]
    assert {a.dest for a in sandbox._actions} >= {"port", "seed", "posts_per_minute", "author_shape"}
