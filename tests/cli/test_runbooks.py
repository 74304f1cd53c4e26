"""Every command of docs/operations.md's runbooks, run as written against a real store in the
state its runbook is for (issue 50): a command a page tells an operator to type must work,
with the exit status the command line documents."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from sports_posts import CallBudget
from sports_posts.polling import Lease
from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox

from .conftest import run

RUNBOOKS = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")


def commands() -> list[str]:
    """The ``sports-posts ...`` commands of the Runbooks section, each on one line, in the
    page's order (a runbook looks before it acts)."""
    section = RUNBOOKS[RUNBOOKS.index("## Runbooks"):]
    text = " ".join(section.split())  # a command may wrap across lines of the page
    return list(dict.fromkeys(re.findall(r"`(sports-posts [^`]+)`", text)))


def test_the_runbooks_name_their_commands() -> None:
    found = commands()
    assert len(found) >= 9, found
    for needed in ("claim release", "claim status", "inbox active", "lease release", "budget status"):
        assert any(command.startswith(f"sports-posts {needed}") for command in found), needed


def test_every_runbook_command_runs_as_written(pg: str) -> None:
    tag = uuid.uuid4().hex[:8]
    # The state the runbooks are for: a dead letter, a story another worker holds, a stuck
    # lease, a budget in use.
    inbox = PostgresInbox(pg, max_attempts=1)
    dead = f"dead-{tag}"
    inbox.put(dead, b'{"x":1}', "d1")
    for entry in inbox.take_due(10):
        if entry.key == dead:
            inbox.mark_failed(entry, "RuntimeError: storage down", permanent=True)
    inbox.put(f"busy-{tag}", b"{}", "d2")
    inbox.take_due(10)  # a worker holds it
    story = f"breaking_news:{tag}"
    assert PostgresDedupeStore(pg).claim(story)  # ... and died with the claim
    lease_key, budget_key = f"feed-{tag}", f"budget-{tag}"
    assert Lease(pg, key=lease_key).acquire()
    CallBudget(pg, per_minute=10, per_month=100, key=budget_key).acquire()

    ran = []
    for command in commands():
        words = command.replace("breaking_news:<post id>", story).split()[1:]
        keys = {"lease": lease_key, "budget": budget_key, "inbox": dead}
        argv = [pg if w == "URL" else keys[words[0]] if w in ("KEY", "KEY...") else w for w in words]
        status, out, err = run(*argv)
        assert status == 0, (command, argv, err)
        ran.append(words[0] + " " + words[1])
    assert {"inbox status", "inbox active", "inbox dead", "inbox requeue", "inbox purge-dead",
            "claim status", "claim release", "lease status", "lease release", "budget status"} <= set(ran)
