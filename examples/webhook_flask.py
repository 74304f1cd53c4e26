"""Receive breaking-news webhooks with Flask: verify, de-duplicate, answer fast, process after.

Run it:

    export SPORTS_POSTS_WEBHOOK_SECRET=whsec_...      # revealed in the dashboard
    pip install 'sports-posts[flask]'
    python examples/webhook_flask.py                 # serves http://127.0.0.1:5000/webhooks

Under gunicorn (several processes), keep the SQLite store on a shared local path, or use
``RedisDedupeStore(os.environ["REDIS_URL"])`` when several hosts receive. Behind a proxy
that renames the ``X-Service-*`` headers, set ``WEBHOOK_HEADER_PREFIX=X-Acme-``.
"""

from __future__ import annotations

import logging
import os

from flask import Flask

from sports_posts.webhooks import (
    SQLiteDedupeStore,
    WebhookEvent,
    WebhookHeaders,
    WebhookReceiver,
    thread_stories,
)
from sports_posts.webhooks.adapters.wsgi import flask_view

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("example")
recent: list[WebhookEvent] = []


def on_breaking_news(event: WebhookEvent) -> None:
    """Runs before the answer (no inbox), within handler_timeout; raise and the answer is a 503,
    so the service retries."""
    recent.append(event)
    for story in thread_stories(recent):
        latest = story.latest.data
        log.info("story %s: %d update(s), %d alt source(s); latest: %s",
                 story.event_id, len(story.updates), len(story.alt_sources), latest.text)


prefix = os.environ.get("WEBHOOK_HEADER_PREFIX")  # X-Acme-: read X-Acme-Signature, ...
receiver = WebhookReceiver(
    os.environ.get("SPORTS_POSTS_WEBHOOK_SECRET", "whsec_example_only"),
    on_breaking_news,
    store=SQLiteDedupeStore(os.environ.get("WEBHOOK_DEDUPE_DB", "webhook-dedupe.sqlite3")),
    header_names=WebhookHeaders.with_prefix(prefix) if prefix else None,
)

app = Flask(__name__)
# flask_view reads request.stream (the raw bytes, up to 1 MiB), never request.get_json().
app.add_url_rule("/webhooks", view_func=flask_view(receiver), methods=["POST"])


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(os.environ.get("PORT", "5000")))
