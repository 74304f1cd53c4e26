"""Receive breaking-news webhooks on many machines sharing one PostgreSQL: each story's row once.

Run it on every machine behind your load balancer:

    export SPORTS_POSTS_WEBHOOK_SECRET=whsec_...      # revealed in the dashboard
    export DATABASE_URL=postgresql://app@db.internal:5432/app
    pip install 'sports-posts[postgres]' uvicorn
    python examples/webhook_fleet_postgres.py        # serves http://0.0.0.0:8000/webhooks

Each receiver commits the event to the shared inbox before answering 2xx; workers on any
machine drain it. The handler claims the story inside its own transaction, so its row and
the "done" mark commit together: a crash anywhere never writes a story twice.
"""

from __future__ import annotations

import logging
import os

import psycopg

from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox, WebhookEvent, WebhookReceiver
from sports_posts.webhooks.adapters.asgi import WebhookASGIApp

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("example")

DATABASE_URL = os.environ.get("DATABASE_URL", "postgresql://localhost/postgres")
store = PostgresDedupeStore(DATABASE_URL)


def on_breaking_news(event: WebhookEvent) -> None:
    """Runs in an inbox worker on any machine; raise to have the event retried with backoff."""
    # prepare_threshold=None: nothing prepared on the server, so PgBouncer's transaction pooling works
    with psycopg.connect(DATABASE_URL, autocommit=True, prepare_threshold=None) as conn, conn.transaction():
        if not store.claim_in(conn, event.dedupe_key):
            log.info("%s already stored by a committed transaction", event.dedupe_key)
            return
        conn.execute(
            "CREATE TABLE IF NOT EXISTS stories (id text, league text, text text)"  # your migration's job
        )
        conn.execute("INSERT INTO stories (id, league, text) VALUES (%s, %s, %s)",
                     (event.data.id, event.data.league, event.data.text))


receiver = WebhookReceiver(
    os.environ.get("SPORTS_POSTS_WEBHOOK_SECRET", "whsec_example_only"),
    on_breaking_news,
    store=store,
    # Shared by every machine: a machine that dies leaves its rows to the others after the lease.
    inbox=PostgresInbox(DATABASE_URL, lease=120),
)
app = WebhookASGIApp(receiver)


def main() -> None:
    import uvicorn

    receiver.start()  # drain what was left before the first request arrives
    try:
        uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8000")))
    finally:
        receiver.close()


if __name__ == "__main__":
    main()
