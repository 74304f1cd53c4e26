"""Workers that the crash tests kill with SIGKILL: a poller and a webhook receiver.

    python crash_worker.py poll BASE_URL API_KEY CHECKPOINT OUT BATCHES
    python crash_worker.py receive PORT SECRET INBOX STORE OUT (block|record)
"""

from __future__ import annotations

import os
import sys
import threading
from datetime import datetime

import httpx


def poll(base_url: str, api_key: str, checkpoint: str, out: str, batches: int) -> None:
    """Poll NFL on the parent's sandbox clock; write every post of a batch, one line each."""
    from sports_posts import FileCheckpoint, Poller, SportsPosts

    admin = httpx.Client(base_url=base_url.rsplit("/v1", 1)[0])

    def now() -> datetime:
        return datetime.fromisoformat(admin.get("/_sandbox/state").json()["now"].replace("Z", "+00:00"))

    def sleep(seconds: float) -> None:
        admin.post("/_sandbox/advance", json={"seconds": seconds})

    with SportsPosts(api_key=api_key, base_url=base_url) as client, open(out, "a") as sink:
        poller = Poller(client, filters={"leagues": "NFL"}, interval=60, checkpoint=FileCheckpoint(checkpoint),
                        clock=now, sleep=sleep)
        for n, batch in enumerate(poller, 1):
            run = os.getpid()
            for post in batch:  # stored one by one: a kill may land in the middle of a batch
                sink.write(f"{run} {n} {post.id}\n")
                sink.flush()
                os.fsync(sink.fileno())
            if n >= batches:
                break
        poller.close()


def receive(port: int, secret: str, inbox: str, store: str, out: str, mode: str) -> None:
    """Serve a receiver with a durable inbox; ``block`` never finishes a handler (the crash
    comes first), ``record`` appends each handled post id to ``out``."""
    import uvicorn

    from sports_posts.webhooks import SQLiteDedupeStore, SQLiteInbox, WebhookReceiver
    from sports_posts.webhooks.adapters.asgi import WebhookASGIApp

    lock = threading.Lock()
    never = threading.Event()

    def handler(event: object) -> None:
        if mode == "block":
            never.wait()
            return
        with lock, open(out, "a") as sink:
            sink.write(f"{event.data.id}\n")  # type: ignore[attr-defined]
            sink.flush()
            os.fsync(sink.fileno())

    # A short inbox lease: a row taken by the killed worker is taken again after one second
    # (the default, five minutes, protects a live worker elsewhere from a double run).
    receiver = WebhookReceiver(secret, handler, store=SQLiteDedupeStore(store), inbox=SQLiteInbox(inbox, lease=1.0),
                               poll_interval=0.05)
    receiver.start()
    uvicorn.run(WebhookASGIApp(receiver), host="127.0.0.1", port=port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    if sys.argv[1] == "poll":
        poll(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))
    else:
        receive(int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7])
