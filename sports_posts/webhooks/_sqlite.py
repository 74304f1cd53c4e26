"""The SQLite connection the dedupe store and the inbox share the rules of."""

from __future__ import annotations

import os
import sqlite3
import threading
from typing import Literal, Optional


def thread_connection(
    local: threading.local, path: str, busy_timeout: float, synchronous: Literal["NORMAL", "FULL"]
) -> sqlite3.Connection:
    """This thread's connection to ``path`` in WAL mode, opened anew after a fork (a
    connection must not cross processes)."""
    conn: Optional[sqlite3.Connection] = getattr(local, "conn", None)
    if conn is not None and getattr(local, "pid", None) == os.getpid():
        return conn
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    local.conn = conn
    local.pid = os.getpid()
    return conn
