"""A receiver process for the multi-process test: handles requests from a queue, records to a ledger."""

from __future__ import annotations

import os
import sqlite3
from typing import Any, Optional

from sports_posts.webhooks import RedisDedupeStore, SQLiteDedupeStore, WebhookEvent, WebhookReceiver

SECRET = "whsec_multi_process"


def open_ledger(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE IF NOT EXISTS handled (key TEXT, pid INTEGER, delivery TEXT)")
    conn.execute("CREATE TABLE IF NOT EXISTS failures (id TEXT PRIMARY KEY)")
    return conn


def _receiver(store_spec: tuple[str, str, str], ledger_path: str, fail_once: frozenset[str]) -> WebhookReceiver:
    kind, where, prefix = store_spec
    store: Any = SQLiteDedupeStore(where) if kind == "sqlite" else RedisDedupeStore(where, prefix=prefix)

    def handler(event: WebhookEvent) -> None:
        ledger = open_ledger(ledger_path)  # handlers run in the receiver's pool threads
        try:
            # Fail the first time a chosen story is handled anywhere: its claim must be released.
            if event.data.id in fail_once and ledger.execute(
                "INSERT OR IGNORE INTO failures (id) VALUES (?)", (event.data.id,)
            ).rowcount:
                raise RuntimeError("injected failure")
            ledger.execute(
                "INSERT INTO handled VALUES (?, ?, ?)", (event.dedupe_key, os.getpid(), event.delivery_id)
            )
        finally:
            ledger.close()

    return WebhookReceiver(SECRET, handler, store=store, max_workers=1)


def serve(inbox: Any, outbox: Any) -> None:
    """Serve until ``None``: ``("configure", store_spec, ledger, fail_once)`` or ``("request", id, body, headers)``."""
    receiver: Optional[WebhookReceiver] = None
    outbox.put(("ready", os.getpid(), 0))
    try:
        while True:
            message = inbox.get()
            if message is None:
                break
            if message[0] == "configure":
                if receiver is not None:
                    receiver.close()
                receiver = _receiver(*message[1:])
                outbox.put(("configured", os.getpid(), 0))
                continue
            assert receiver is not None
            _, request_id, body, headers = message
            response = receiver.handle(body, headers)
            receiver.wait_idle(60)  # answer the test only once the handler's effects are settled
            outbox.put((request_id, os.getpid(), response.status_code))
    finally:
        if receiver is not None:
            receiver.close()
