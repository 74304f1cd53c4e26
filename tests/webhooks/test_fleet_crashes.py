"""Four receiver processes behind a load balancer share one inbox and one dedupe store; the
sandbox's sender delivers with the service's retries (time-scaled), and workers are SIGKILLed
at random points and restarted. Once they settle: PostgreSQL with the transactional form
holds each story's row exactly once; Redis processed each story at least once, and twice
only where a worker died in the handler; nothing is undelivered, pending or in flight."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from sports_posts.sandbox import Sandbox
from support.servers import free_port as _free_port
from tests.crash_helpers import wait_for
from tests.zygote import Process, suite

WORKER = str(Path(__file__).with_name("fleet_worker.py"))
ROOT = str(Path(__file__).resolve().parents[2])
SECRET = "whsec_fleet_crash_test_Zq81"
RECEIVERS = 4
STORIES = 30  # sent at least
MAX_STORIES = 300  # sent at most while waiting for the kills
KILLS = 4  # outside SIGKILLs at random moments


class Balancer:
    """A load balancer: each request goes to a random receiver. Like nginx's default
    ``proxy_next_upstream``, a refused connection tries another one (nothing was sent); a
    receiver that dies mid-request makes a 502, which the service retries."""

    def __init__(self, ports: list[int], rng: random.Random) -> None:
        client = httpx.Client(timeout=5.0)

        class Forward(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {k: v for k, v in self.headers.items() if k.lower().startswith(("x-", "content-type"))}
                status, payload = 502, b"no receiver up"
                for port in rng.sample(ports, len(ports)):
                    try:
                        answer = client.post(f"http://127.0.0.1:{port}/webhooks", content=body, headers=headers)
                        status, payload = answer.status_code, answer.content
                        break
                    except httpx.ConnectError:
                        continue
                    except httpx.HTTPError:
                        status, payload = 502, b"receiver died"
                        break
                self.send_response(status)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/webhooks"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()
        self._client = client

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._client.close()


class Fleet:
    """The receiver processes, restarted on the same port whenever one dies."""

    def __init__(self, engine: str, url: str, chaos_file: Path, kill_points: list[str]) -> None:
        self.engine, self.url, self.chaos_file = engine, url, str(chaos_file)
        # The first restarts die each at one of these points in their handler; the rest live.
        self.kill_points = ["none"] * RECEIVERS + kill_points
        self.spawns = 0
        self.ports = [_free_port() for _ in range(RECEIVERS)]
        self.plans = ["none"] * RECEIVERS
        self.procs: list[Process] = [self._spawn(i) for i in range(RECEIVERS)]
        self.dead_pids: set[int] = set()
        self.kills = 0

    def _spawn(self, index: int) -> Process:
        """A receiver as a process of its own (a fork of the suite's zygote, tests/zygote.py)."""
        env = {**os.environ, "PYTHONPATH": ROOT}
        kill_at = self.kill_points[self.spawns] if self.spawns < len(self.kill_points) else "none"
        self.spawns += 1
        self.plans[index] = kill_at
        return suite().spawn(
            [sys.executable, WORKER, self.engine, str(self.ports[index]), SECRET, self.url, self.chaos_file, kill_at],
            env=env, stderr=subprocess.DEVNULL,
        )

    def kill(self, rng: random.Random) -> None:
        """SIGKILL a random receiver, sparing those yet to die at their planned point."""
        index = rng.choice([i for i, plan in enumerate(self.plans) if plan == "none"])
        self.procs[index].send_signal(signal.SIGKILL)
        self.kills += 1

    def restart_the_dead(self) -> None:
        for i, proc in enumerate(self.procs):
            if proc.poll() is not None:
                self.dead_pids.add(proc.pid)
                self.procs[i] = self._spawn(i)

    def serving(self) -> int:
        """How many receivers accept connections now."""
        up = 0
        for port in self.ports:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                up += 1
            except OSError:
                pass
        return up

    def close(self) -> None:
        for proc in self.procs:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)


def run_fleet(
    engine: str, url: str, tmp_path: Path, kill_points: list[str], settled: Callable[[int], bool]
) -> tuple[Sandbox, Fleet, set[str]]:
    rng = random.Random(1313)
    chaos_file = tmp_path / "chaos"
    chaos_file.touch()
    fleet = Fleet(engine, url, chaos_file, kill_points)
    # time_scale 0.02: the service's retries after 1.2, 2.4, 4.8, 9.6 and 19.2 seconds, room
    # for restarts on a loaded machine; the wait below ends as soon as everything settled.
    sandbox = Sandbox(seed=13, time_scale=0.02, webhook_timeout=5.0)
    balancer = Balancer(fleet.ports, rng)
    try:
        wait_for(lambda: fleet.serving() == RECEIVERS, "the receivers to listen")
        sandbox.start()
        sandbox.subscribe(balancer.url, SECRET)
        log = Path(f"{chaos_file}.log")

        def self_kills() -> set[str]:
            return {line.split()[0] for line in log.read_text().splitlines()} if log.exists() else set()

        # Stories keep coming until the outside kills are done and every planned point has
        # killed a worker (bounded). A kill waits until three receivers listen, so a slow
        # machine (restarts of seconds) meets the same storm, only slower.
        for n in range(MAX_STORIES):
            if n >= STORIES and fleet.kills >= KILLS and self_kills() == set(kill_points):
                break
            sandbox.send_breaking_news(rng.choice(["NFL", "NBA", "MLB"]))
            time.sleep(0.1)  # spreads the stories over the kills; paces, asserts nothing
            fleet.restart_the_dead()
            if fleet.kills < KILLS and n % 3 == 2 and fleet.serving() >= RECEIVERS - 1:
                fleet.kill(rng)
        chaos_file.unlink()  # the storm is over: restart everyone and let them settle
        fleet.restart_the_dead()

        def all_settled() -> bool:
            fleet.restart_the_dead()
            jobs = sandbox.delivery_jobs
            return all(job.state in ("delivered", "dead") for job in jobs) and settled(len(jobs))

        wait_for(all_settled, "deliveries and inbox to settle", timeout=90)
        fleet.restart_the_dead()
        assert {job.state for job in sandbox.delivery_jobs} == {"delivered"}, "nothing undelivered"
        assert fleet.kills == KILLS, "every outside kill happened"
        return sandbox, fleet, self_kills()
    finally:
        balancer.close()
        sandbox.stop()
        fleet.close()


@pytest.fixture
def story_table(pg: str) -> Iterator[str]:
    import psycopg

    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute("CREATE TABLE story_effects (story text NOT NULL, pid integer)")  # no unique key on purpose
    yield pg


def test_postgres_fleet_each_story_row_exactly_once(story_table: str, tmp_path: Path) -> None:
    import psycopg

    from sports_posts.webhooks import PostgresInbox

    inbox = PostgresInbox(story_table)

    def settled(stories: int) -> bool:
        counts = inbox.counts()
        return counts["pending"] == counts["processing"] == 0 and counts["done"] >= stories

    points = ["before_claim", "after_write", "after_commit"]
    sandbox, _, self_kills = run_fleet("postgres", story_table, tmp_path, points, settled)
    assert self_kills == set(points), "a worker died at each point of the transaction"
    with psycopg.connect(story_table) as conn:
        rows = conn.execute("SELECT story, count(*) FROM story_effects GROUP BY story").fetchall()
        claims_in_flight = conn.execute("SELECT count(*) FROM sports_posts_claims WHERE token != ''").fetchone()
    story_ids = {attempt.post_id for attempt in sandbox.deliveries}
    assert len(story_ids) == len(sandbox.delivery_jobs) >= STORIES
    assert {story for story, _ in rows} == story_ids, "every story has its row"
    assert {count for _, count in rows} == {1}, "and only one, whatever was killed where"
    assert inbox.counts() == {"pending": 0, "processing": 0, "done": len(story_ids), "dead": 0}
    assert claims_in_flight == (0,)


def test_redis_fleet_at_least_once_and_deduplicated(redis_client: Any, redis_url: str, tmp_path: Path) -> None:
    from sports_posts.webhooks import RedisInbox

    inbox = RedisInbox(redis_url)

    def settled(stories: int) -> bool:
        counts = inbox.counts()
        return counts["pending"] == counts["processing"] == 0 and counts["done"] >= stories

    points = ["before_effect", "after_effect"]
    sandbox, fleet, self_kills = run_fleet("redis", redis_url, tmp_path, points, settled)
    assert self_kills == set(points), "a worker died before and after its effect"
    handled = [line.decode().split() for line in redis_client.lrange("handled", 0, -1)]
    started = [line.decode().split() for line in redis_client.lrange("started", 0, -1)]
    story_ids = {attempt.post_id for attempt in sandbox.deliveries}
    assert {story for _, story in handled} == story_ids, "every story processed at least once"
    for story, times in Counter(story for _, story in handled).items():
        if times > 1:  # a repeat only where a worker died inside the handler of that story
            assert any(pid in {str(p) for p in fleet.dead_pids} for pid, s in started if s == story)
    assert inbox.counts() == {"pending": 0, "processing": 0, "done": len(story_ids), "dead": 0}
    assert redis_client.xlen("{sports_posts:inbox}:stream") == 0
    assert redis_client.xpending("{sports_posts:inbox}:stream", "workers")["pending"] == 0
