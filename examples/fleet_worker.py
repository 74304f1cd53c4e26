"""A fleet worker: run it on every machine; one of them polls the league, the others stand by,
and all of them draw from one call budget.

    python examples/fleet_worker.py NFL --store redis://localhost:6379/0 --for 20
    python examples/fleet_worker.py NFL --store postgresql://app@db/app

Without SPORTS_POSTS_API_KEY and SPORTS_POSTS_BASE_URL it polls an embedded sandbox. A worker
that loses the lease (another took the league over while it was paused or cut off) goes back
to standby; the batch it held is delivered again by the new holder, so store posts with an
upsert by post.id. Costs: one call per cycle (one per 100 new posts) for the holder of the
lease, none for a worker on standby; every call draws from the shared budget.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Generator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any

from sports_posts import CallBudget, Post, RedisCheckpoint, SportsPosts
from sports_posts.polling import Lease, LeaseLostError, Poller, PostgresCheckpoint


@contextmanager
def service() -> Generator[tuple[str, str], None, None]:
    """The service's key and URL from the environment, or an embedded sandbox's."""
    key, url = os.environ.get("SPORTS_POSTS_API_KEY"), os.environ.get("SPORTS_POSTS_BASE_URL")
    if key and url:
        yield key, url
        return
    from sports_posts.sandbox import Sandbox

    with Sandbox(posts_per_minute=30) as sb:
        print(f"using an embedded sandbox at {sb.base_url}", file=sys.stderr)
        yield sb.api_key, sb.base_url


def store(batch: list[Post], lease: Lease) -> None:
    """Stand-in for your database (upsert by post.id); the token says which holder wrote."""
    print("\n".join(f"[token {lease.token}] {p.league} @{p.author_username}: {p.text}" for p in batch))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("league", nargs="?", default="NFL")
    parser.add_argument("--store", required=True, help="redis://... or postgresql://...")
    parser.add_argument("--for", dest="seconds", type=float, help="stop after this many seconds")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)

    key = f"sports_posts:poll:{args.league.lower()}"
    fenced: Any = RedisCheckpoint if args.store.startswith("redis") else PostgresCheckpoint
    budget = CallBudget(args.store, per_minute=20, per_month=50_000)
    stopping = threading.Event()
    current: list[Poller] = []

    def stop(*_: object) -> None:
        stopping.set()
        for poller in current:
            poller.stop()  # ends a wait (or a standby) at once

    signal.signal(signal.SIGTERM, stop)
    with service() as (api_key, base_url), SportsPosts(api_key=api_key, base_url=base_url, budget=budget) as client:
        if args.seconds:
            threading.Timer(args.seconds, stop).start()
        budget.seed(client.account.information())  # a free call: this month's usage so far
        while not stopping.is_set():
            lease = Lease(args.store, key=key, ttl=15)
            checkpoint = fenced(args.store, key=key)
            poller = Poller(
                client,
                filters={"leagues": args.league},
                since=datetime.now(timezone.utc) - timedelta(hours=1),  # only for an empty checkpoint
                lease=lease,
                checkpoint=checkpoint,
            )
            current[:] = [poller]
            try:
                if stopping.is_set():
                    break
                with poller:
                    for batch in poller:
                        store(batch, lease)
            except LeaseLostError as exc:
                if exc.store_failed:  # Redis or PostgreSQL down: nobody took the league over
                    logging.warning("the store is unreachable, so this worker stopped the league; "
                                    "standing by until it answers (%s)", exc)
                else:
                    logging.warning("lost the league to another worker (%s); standing by again", exc)
            finally:  # each turn's own connections go with it
                checkpoint.close()
                lease.close()
    budget.close()
    print(f"{args.league}: {client.calls} call(s) from this worker", file=sys.stderr)


if __name__ == "__main__":
    main()
