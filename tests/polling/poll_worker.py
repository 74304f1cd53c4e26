"""A fleet worker process for the multi-process tests: a leased poller, or a budget drawer.

``python poll_worker.py poll BASE_URL STORE KEY SINCE LOG [pause]``: polls the sandbox under a
Lease on STORE and appends one JSON line per event to LOG (``lease`` when it holds the
feed, ``batch`` for each batch handed to it, ``refused`` when its save is fenced out). With
``pause`` it stops itself (SIGSTOP) inside its second save, as a process paused by the
machine would, and carries on when the test resumes it.

``python poll_worker.py draw BASE_URL STORE KEY PER_MONTH CALLS LOG``: makes CALLS calls through a
client that draws from a CallBudget, one JSON line per call (``ok`` or ``refused``).

The API key comes from the environment (``SPORTS_POSTS_API_KEY``), never the command line.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

TTL = 1.0


def emit(log: Any, **event: Any) -> None:
    log.write(json.dumps({"t": time.time(), "pid": os.getpid(), **event}) + "\n")
    log.flush()


def checkpoint_class(store: str, pause: bool, log: Any) -> Any:
    from sports_posts import RedisCheckpoint
    from sports_posts.polling import PostgresCheckpoint

    base: Any = RedisCheckpoint if store.startswith("redis") else PostgresCheckpoint

    class Pausing(base):  # type: ignore[misc,valid-type]
        saves = 0

        def save(self, state: Any) -> None:
            Pausing.saves += 1
            if pause and Pausing.saves == 3:  # the starting point, then the first batch
                emit(log, event="paused")
                os.kill(os.getpid(), signal.SIGSTOP)  # a GC pause, a VM migration...
                emit(log, event="resumed")
            super().save(state)

    return Pausing


def poll(base_url: str, store: str, key: str, since: str, path: str, pause: bool) -> int:
    from sports_posts import Poller, SportsPosts
    from sports_posts.polling import Lease, LeaseLostError

    with open(path, "a", encoding="utf-8") as log, SportsPosts(base_url=base_url) as client:
        class Announced(Lease):
            def acquire(self) -> Any:
                token = super().acquire()
                if token is not None:
                    emit(log, event="lease", token=token)
                return token

        lease = Announced(store, key=key, ttl=TTL)
        checkpoint = checkpoint_class(store, pause, log)(store, key=key)
        poller = Poller(client, lease=lease, checkpoint=checkpoint, since=since, interval=0.2, lookback=2.0)
        emit(log, event="start")
        try:
            for batch in poller:
                emit(log, event="batch", token=lease.token, ids=[p.id for p in batch])
        except LeaseLostError as exc:
            emit(log, event="refused", error=str(exc))
            return 3
    return 0


def draw(base_url: str, store: str, key: str, per_month: int, calls: int, path: str) -> int:
    from sports_posts import BudgetExhaustedError, CallBudget, SportsPosts

    budget = CallBudget(store, per_month=per_month, key=key)
    with open(path, "a", encoding="utf-8") as log, SportsPosts(base_url=base_url, budget=budget) as client:
        for _ in range(calls):
            before = client.calls
            try:
                client.posts.list(limit=1)
                emit(log, event="ok", sent=client.calls - before)
            except BudgetExhaustedError as exc:
                emit(log, event="refused", bound=exc.bound, sent=client.calls - before)
    budget.close()
    return 0


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "poll":
        sys.exit(poll(args[0], args[1], args[2], args[3], args[4], pause=args[5:] == ["pause"]))
    sys.exit(draw(args[0], args[1], args[2], int(args[3]), int(args[4]), args[5]))
