"""A Celery prefork worker on the Redis broker whose tasks use a client, a
``RedisDedupeStore`` and a ``PostgresDedupeStore`` made at import, before the pool forks:
every result right, every story recorded exactly once (issue 48, item 4)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import psycopg
import pytest
from celery import Celery

from sports_posts.sandbox import Sandbox
from support.process_models import app_dir, celery_worker

from .pages import ask

pytestmark = [pytest.mark.processes, pytest.mark.slow, pytest.mark.redis, pytest.mark.postgres]

# The customer's tasks module: the client and the stores made (and used) at import.
TASKS = '''
import json
import os

import psycopg
from celery import Celery

import sports_posts as sp
from sports_posts.webhooks import PostgresDedupeStore, RedisDedupeStore

broker = os.environ["SP_CELERY_BROKER"]
app = Celery("celery_tasks", broker=broker)
app.conf.worker_prefetch_multiplier = 1

client = sp.SportsPosts(api_key=os.environ["SP_API_KEY"], base_url=os.environ["SP_BASE_URL"], max_retries=0,
                        timeout=15)
client.account.x_ids()
PG = os.environ["SP_PG"]
stores = {
    "redis": RedisDedupeStore(os.environ["SP_REDIS"], prefix=os.environ["SP_PREFIX"]),
    "postgres": PostgresDedupeStore(PG),
}
for name, store in stores.items():  # each used once before the fork
    assert store.claim(f"warm-up-{os.getpid()}")


@app.task(name="celery_tasks.work")
def work(n, params, story):
    try:
        result = {"n": n, "pid": os.getpid(), **attempt(params, story)}
    except Exception as exc:  # reported to the test, which fails on it
        result = {"n": n, "pid": os.getpid(), "error": f"{type(exc).__name__}: {exc}"[:300]}
    with psycopg.connect(PG, autocommit=True) as conn:  # the result, and a word to the test that waits
        conn.execute("INSERT INTO celery_results (n, result) VALUES (%s, %s)", (n, json.dumps(result)))
        conn.execute("NOTIFY celery_done")


def attempt(params, story):
    page = client.posts.list(**params)
    got = [sorted({post.league for post in page.items}), len(page.items), page.pagination.page,
           page.pagination.limit]
    recorded = []
    for name, store in stores.items():
        if store.claim(story):
            with psycopg.connect(PG, autocommit=True) as conn:  # the effect, to count
                conn.execute("INSERT INTO celery_effects (story, store, pid) VALUES (%s, %s, %s)",
                             (story, name, os.getpid()))
            store.complete(story)
            recorded.append(name)
    return {"page": got, "recorded": recorded}
'''


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(seed=48, clock="manual", posts=1500) as sb:
        yield sb


def test_prefork_tasks_with_a_client_and_stores_made_before_the_fork(sandbox: Sandbox, redis_url: str, pg: str) -> None:
    # Results travel through PostgreSQL (a row and a NOTIFY per task), not Celery's result
    # backend, whose AsyncResults unsubscribe from Redis when collected, after it stopped.
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS celery_effects; DROP TABLE IF EXISTS celery_results")
        conn.execute("CREATE TABLE celery_effects (story text, store text, pid int)")
        conn.execute("CREATE TABLE celery_results (n int PRIMARY KEY, result jsonb)")
    env = {"SP_API_KEY": sandbox.api_key, "SP_BASE_URL": sandbox.base_url, "SP_PG": pg, "SP_REDIS": redis_url,
           "SP_PREFIX": "celery-test:"}
    caller = Celery(broker=redis_url)
    stories = [f"story-{k}" for k in range(30)]
    jobs = [(n, stories[n % len(stories)]) for n in range(60)]  # each story delivered twice
    try:
        with app_dir({"celery_tasks": TASKS}) as where, \
                celery_worker("celery_tasks", redis_url, pythonpath=[where.path], env=env, app=caller) as worker, \
                psycopg.connect(pg, autocommit=True) as listener:
            listener.execute("LISTEN celery_done")
            for n, story in jobs:
                caller.send_task("celery_tasks.work", args=[n, ask(n), story])
            done = sum(1 for _ in listener.notifies(timeout=120, stop_after=len(jobs)))
            log = worker.log_text()
    finally:
        caller.close()
    assert done == len(jobs), f"{done} of {len(jobs)} tasks finished\n{log[-3000:]}"
    with psycopg.connect(pg, autocommit=True) as conn:
        results: dict[int, dict[str, object]] = dict(conn.execute("SELECT n, result FROM celery_results").fetchall())
        rows = conn.execute("SELECT story, store FROM celery_effects").fetchall()
    assert sorted(results) == [n for n, _ in jobs]
    errors = [r["error"] for r in results.values() if "error" in r]
    assert errors == [], f"{len(errors)} of {len(jobs)} tasks failed"
    wrong = [(ask(n), r["page"]) for n, r in results.items()
             if r["page"] != [[ask(n)["leagues"]], ask(n)["limit"], ask(n)["page"], ask(n)["limit"]]]
    assert wrong == [], f"{len(wrong)} of {len(jobs)} tasks got another page: {wrong[:3]}\n{log[-2000:]}"
    assert len({r["pid"] for r in results.values()}) == 2, "both forked pool processes ran tasks"
    counts = Counter((story, store) for story, store in rows)
    assert counts == Counter({(story, store): 1 for story in stories for store in ("redis", "postgres")})
