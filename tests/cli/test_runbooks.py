"""Every command of docs/operations.md's runbooks, run as written against a real store in the
state its runbook is for (issue 50): a command a page tells an operator to type must work,
with the exit status the command line documents."""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from sports_posts import CallBudget
from sports_posts.polling import Lease
from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox, RedisInbox
from support.servers import RedisNode, cluster_port, private_redis_cluster

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


def redis_node_lost() -> list[str]:
    """The ``redis-cli ...`` commands of the "Redis node lost" runbook, in the page's order."""
    section = RUNBOOKS[RUNBOOKS.index("### Redis node lost"):]
    section = section[:section.index("\n### ")]
    return list(dict.fromkeys(re.findall(r"`(redis-cli [^`]+)`", " ".join(section.split()))))


EXPECTED = {  # what each command of that runbook shows in the state it is run in
    "cluster info": "cluster_state:ok",
    "--cluster check": "[OK] All 16384 slots covered.",
    "cluster nodes": "master,fail",
    "--cluster add-node": "[OK] New node added correctly.",
    "info replication": "master_link_status:up",
    "cluster forget": "OK",
    "cluster failover": "OK",
}


@pytest.mark.redis
@pytest.mark.slow
def test_the_redis_cluster_runbook_runs_as_written(tmp_path: Path) -> None:
    """A master of a 3 + 3 cluster dies; every command of "Redis node lost" runs as written
    on the cluster it left (a new machine replacing it), then the runbook's checks."""
    import redis

    found = redis_node_lost()
    assert [next(k for k in EXPECTED if k in c) for c in found] == list(EXPECTED), found
    with private_redis_cluster(masters=3, replicas=1) as cluster:
        key = f"feed-{uuid.uuid4().hex[:8]}"
        lost = cluster.master_of(key)
        url = f"redis+cluster://127.0.0.1:{next(p for p in cluster if p != lost)}"
        lease = Lease(url, key=key, ttl=300)
        token = lease.acquire()
        assert token
        inbox = RedisInbox(url)  # the fleet's inbox, its default prefix
        assert inbox.put(f"queued-{key}", b"{}", "d1")
        inbox.close()
        with redis.Redis(port=lost, socket_timeout=5) as master:  # the lease is on the replica too
            master.set("{" + key + "}:replicated", "1")
            assert master.execute_command("WAIT", 1, 5000) >= 1
        lost_id = cluster.ask(lost, "cluster", "myid").strip()
        cluster.kill(lost)
        promoted = cluster.wait_promoted(lost)
        new = RedisNode(str(tmp_path), cluster_port(), "--cluster-enabled", "yes", "--cluster-config-file",
                        "nodes.conf", "--cluster-node-timeout", str(cluster.node_timeout_ms))
        new.start()
        try:
            words = {"HOST": "127.0.0.1", "PORT": str(promoted), "NEW_HOST": "127.0.0.1",
                     "NEW_PORT": str(new.port), "LOST_NODE_ID": lost_id}
            for command in found:
                argv = [re.sub(r"[A-Z_]+", lambda m: words.get(m.group(0), m.group(0)), w) for w in command.split()]
                expected = next(v for k, v in EXPECTED.items() if k in command)
                deadline = time.monotonic() + 60  # a replica's first sync: polled, as the runbook says
                while True:
                    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
                    if expected in done.stdout or time.monotonic() > deadline:
                        break
                assert done.returncode == 0 and expected in done.stdout, (argv, done.stdout[-2000:], done.stderr)
            cluster.nodes[new.port] = new  # the new node takes the master role: wait for it
            deadline, again = time.monotonic() + 60, time.monotonic() + 10
            while cluster.master_of(key) != new.port:
                assert time.monotonic() < deadline, ("the manual failover did not happen", cluster.roles())
                if time.monotonic() > again:  # a manual failover that timed out: run it again, as the page says
                    cluster.ask(new.port, "cluster", "failover")
                    again = time.monotonic() + 10
            assert lease.renew() and lease.token == token  # through MOVED, with no restart
            lease.close()
            for command in ("sports-posts inbox status URL", "sports-posts lease status URL KEY"):
                assert command in " ".join(RUNBOOKS.split())
                status, out, err = run(*command.replace("URL", url).replace("KEY", key).split()[1:])
                assert status == 0, (command, out, err)
        finally:
            new.stop()
