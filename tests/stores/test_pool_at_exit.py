"""A process that never closed its PostgreSQL stores exits at once, and a forked child's exit
leaves its parent's connections alone.

psycopg_pool's threads no longer run once the interpreter is finalizing: a pool left to the
garbage collector then waited 5 s for each of them (`examples/fleet_worker.py`, which made a
lease and a checkpoint per league turn, took 30 s to exit). The stores' sync pools are closed
when their process exits (``atexit``), and only in the process that made them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid

import pytest

pytestmark = [pytest.mark.postgres, pytest.mark.processes]

SCRIPT = textwrap.dedent("""
    import json, logging, os, sys

    import psycopg

    from sports_posts.polling import Lease
    from sports_posts.webhooks import PostgresDedupeStore

    logging.basicConfig(level=logging.WARNING)  # psycopg_pool's "couldn't stop thread" lines
    url, name, fork = sys.argv[1], sys.argv[2], sys.argv[3] == "fork"
    store = PostgresDedupeStore(url + "?application_name=" + name)
    lease = Lease(url + "?application_name=" + name, key="exit-" + name, ttl=15)
    assert store.claim("story-" + name) and lease.acquire() is not None


    def backends():
        with psycopg.connect(url, autocommit=True) as conn:
            rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", (name,))
            return sorted(row[0] for row in rows)


    before = backends()
    if fork:
        pid = os.fork()
        if pid == 0:
            sys.exit(0)  # a normal exit: the child's atexit hooks run
        os.waitpid(pid, 0)
    print(json.dumps({"before": before, "after": backends(), "claimed_again": store.claim("story-" + name)}))
    # no close(): the process ends with both pools open
""")


@pytest.mark.parametrize("fork", ["fork", "no-fork"])
def test_open_pools_close_at_exit_and_a_child_leaves_the_parents_alone(pg: str, fork: str) -> None:
    name = f"exit-{uuid.uuid4().hex[:12]}"
    done = subprocess.run([sys.executable, "-c", SCRIPT, pg, name, fork], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "couldn't stop thread" not in done.stderr, done.stderr
    seen = json.loads(done.stdout)
    assert seen["before"], "the stores held no connection"
    assert seen["after"] == seen["before"]  # the child closed none of the parent's connections
    assert seen["claimed_again"] is False
