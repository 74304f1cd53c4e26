"""Receive breaking-news webhooks with FastAPI: verify, de-duplicate, answer fast, process after.

Run it:

    export SPORTS_POSTS_WEBHOOK_SECRET=whsec_...      # revealed in the dashboard
    pip install 'sports-posts[fastapi]' uvicorn
    python examples/webhook_fastapi.py               # serves http://127.0.0.1:8000/webhooks

Try it without the service, from another shell:

    python - <<'PY'
    import httpx, os
    from sports_posts.webhooks import build_test_request, sample_payload
    r = build_test_request(sample_payload(), os.environ["SPORTS_POSTS_WEBHOOK_SECRET"])
    print(httpx.post("http://127.0.0.1:8000/webhooks", content=r.body, headers=r.headers))
    PY
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, Response

from sports_posts.webhooks import (
    BreakingNewsUpdateEvent,
    SQLiteDedupeStore,
    SQLiteInbox,
    SubscriptionFilter,
    WebhookEvent,
    WebhookReceiver,
)
from sports_posts.webhooks.adapters.asgi import starlette_response

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("example")


async def on_breaking_news(event: WebhookEvent) -> None:
    """Runs from the inbox, after the 2xx (inbox mode); raise to have the inbox retry it."""
    data = event.data
    if isinstance(event, BreakingNewsUpdateEvent):
        log.info("update to %s: %s", data.update_of, data.whats_new)
    else:
        log.info("%s %s (%s, %s): %s", data.league, data.news_type, data.news_status, data.news_attribution, data.text)


receiver = WebhookReceiver(
    # During a rotation pass both secrets: [new, old].
    os.environ.get("SPORTS_POSTS_WEBHOOK_SECRET", "whsec_example_only"),
    on_breaking_news,
    # Shared by every worker process of this host; use RedisDedupeStore across hosts.
    store=SQLiteDedupeStore(os.environ.get("WEBHOOK_DEDUPE_DB", "webhook-dedupe.sqlite3")),
    # Committed before the 2xx, drained by a worker thread with retries: nothing is lost on a crash.
    inbox=SQLiteInbox(os.environ.get("WEBHOOK_INBOX_DB", "webhook-inbox.sqlite3")),
    filter=SubscriptionFilter(news_statuses=["verified", "rumor"]),
)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncGenerator[None, None]:
    receiver.start()  # drains events acknowledged before the last shutdown or crash
    yield
    await receiver.aclose()  # waits for handlers still running


app = FastAPI(lifespan=lifespan)


@app.post("/webhooks")
async def webhooks(request: Request) -> Response:
    # The adapter reads the raw body stream (up to 1 MiB): never declare a pydantic body parameter here,
    # FastAPI would parse the JSON and the signature covers the exact bytes.
    return await starlette_response(receiver, request)


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")))
