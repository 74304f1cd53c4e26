"""A receiver process of the fleet tests: a webhook endpoint plus an inbox worker, sharing one
PostgreSQL or Redis inbox and dedupe store with its peers; the test SIGKILLs it at random.

    python fleet_worker.py (postgres|redis) PORT SECRET URL CHAOS_FILE KILL_AT

While CHAOS_FILE exists, the handler of its first story kills its own process at the point
KILL_AT names (``none``: never), after writing that point to ``CHAOS_FILE.log``: inside the
transaction before the claim or after the write, or after the commit before the inbox hears.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

LEASE = 1.0  # seconds before a dead peer's claim or inbox lease is taken over


def main(engine: str, port: int, secret: str, url: str, chaos_file: str, kill_at: str) -> None:
    import uvicorn

    from sports_posts.webhooks import WebhookReceiver
    from sports_posts.webhooks.adapters.asgi import WebhookASGIApp

    local = threading.local()

    def chaos(point: str, story: str) -> None:
        if point == kill_at and os.path.exists(chaos_file):
            with open(chaos_file + ".log", "a") as log:
                log.write(f"{point} {story}\n")
                log.flush()
                os.fsync(log.fileno())
            os.kill(os.getpid(), signal.SIGKILL)

    if engine == "postgres":
        import psycopg

        from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox

        store: Any = PostgresDedupeStore(url, lease=LEASE)
        inbox: Any = PostgresInbox(url, lease=LEASE, backoff=(0.05,))

        def handler(event: Any) -> None:
            conn = getattr(local, "conn", None)
            if conn is None:
                conn = local.conn = psycopg.connect(url, autocommit=True)
            story = event.data.id
            with conn.transaction():  # the story's row and its "done" mark: together or not at all
                chaos("before_claim", story)
                if store.claim_in(conn, event.dedupe_key):
                    conn.execute("INSERT INTO story_effects (story, pid) VALUES (%s, %s)", (story, os.getpid()))
                    chaos("after_write", story)
            chaos("after_commit", story)
    else:
        import redis

        from sports_posts.webhooks import RedisDedupeStore, RedisInbox

        client = redis.Redis.from_url(url)
        store = RedisDedupeStore(url, lease=LEASE)
        inbox = RedisInbox(url, lease=LEASE, backoff=(0.05,))

        def handler(event: Any) -> None:
            story = event.data.id
            client.rpush("started", f"{os.getpid()} {story}")
            chaos("before_effect", story)
            client.rpush("handled", f"{os.getpid()} {story}")
            chaos("after_effect", story)

    receiver = WebhookReceiver(secret, handler, store=store, inbox=inbox, poll_interval=0.05,
                               in_flight_wait=0.2, max_workers=4)
    receiver.start()
    uvicorn.run(WebhookASGIApp(receiver), host="127.0.0.1", port=port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6])
