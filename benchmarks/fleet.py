"""The fleet stores against their raw drivers: the same statements, the same server, one run.

PostgreSQL: ``PostgresDedupeStore.claim`` and an inbox round (``put`` + ``take_due`` +
``mark_done``) against psycopg sending the very message the store sends (its ``SET LOCAL``
and statements, nothing prepared, as behind a pooler), on a direct connection and through
PgBouncer. Redis: a
``RedisInbox`` round against redis-py calling the very scripts with ``EVALSHA``. The ratio
is the SDK's overhead over the driver (target >= 0.8x); the round trips are the same.
The figure is the median ratio of interleaved pairs, not of the best rounds (see ``ratio``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Callable


def bench_fleet(quick: bool, bench: ModuleType) -> None:
    """Each figure goes to ``bench.record``: the running ``benchmarks.run`` (as ``__main__``,
    a second import of it would keep its own list, and its figures would count nowhere)."""
    from support.servers import ServerError, private_postgres, private_redis

    compare, record, note = bench.compare, bench.record, bench.note

    number, rounds = (20, 2) if quick else (300, 9)

    def ratio(name: str, ours: Callable[[], Any], raw: Callable[[], Any], unit: str, target: bool = True) -> None:
        # The tables grow as the rounds run, and a round on a fresher table is faster: the
        # best rounds would compare the first ones, whichever side they fell to (a best-of
        # ratio swung widely between runs while the pairs' median held).
        # So both sides first bring the tables to size, and the figure is the median ratio
        # of the interleaved pairs, each pair run on tables of the same size.
        for _ in range(number):
            ours()
            raw()
        best, median = compare(ours, raw, number=number, rounds=rounds)
        speed = 1 / median  # compare() reports time ours/raw: speed is its inverse
        t0 = time.perf_counter()
        for _ in range(number):
            ours()
        rate = number / (time.perf_counter() - t0)
        title = f"{name} vs the raw driver running the same statements ({rate:,.0f} {unit}/s)"
        if not target:  # beside the direct figure, which carries the target
            note(title, f"{speed:.3f} x", speed=round(speed, 3), per_second=round(rate), per=unit)
            return
        record(title, speed, "x", ">= 0.8", speed >= 0.8, best_rounds_speed=round(1 / best, 3),
               per_second=round(rate), per=unit)

    try:
        from support.servers import private_pgbouncer

        with private_postgres() as url:
            _postgres(url, ratio)
            with private_pgbouncer(url, "transaction") as pooled:
                _postgres(pooled, ratio, where=" through PgBouncer (transaction pooling)")
    except ServerError as exc:
        record("PostgreSQL fleet stores", 0.0, "x", ">= 0.8", False, error=str(exc))

    try:
        with private_redis() as url:
            _redis(url, ratio)
    except ServerError as exc:
        record("RedisInbox", 0.0, "x", ">= 0.8", False, error=str(exc))


def _inbox_round(inbox: Any, key: str) -> None:
    """One event through the SDK's inbox: stored, leased, done."""
    inbox.put(key, b"{}")
    for entry in inbox.take_due(1):
        inbox.mark_done(entry)


def _postgres(url: str, ratio: Callable[..., None], where: str = "") -> None:
    """``where``: a pooler in between, whose figures are reported beside the direct ones."""
    import psycopg

    from sports_posts.webhooks import PostgresDedupeStore, PostgresInbox

    store, inbox = PostgresDedupeStore(url), PostgresInbox(url)
    inbox.migrate()
    # The driver as a pooler needs it (psycopg's advice for PgBouncer: nothing prepared), sending
    # the very message the store sends: its SET LOCAL and its statements, values bound alike.
    raw = psycopg.connect(url, autocommit=True, prepare_threshold=None, cursor_factory=psycopg.ClientCursor)
    ids = itertools.count()

    def raw_run(statements: Sequence[tuple[str, Any]]) -> list[Any]:
        with raw.cursor() as cur:
            cur.execute(store._db.wire(cur, statements))
            for _ in store._db._settings(store._db.statement_timeout):
                cur.nextset()
            out = []
            for index in range(len(statements)):
                if index:
                    cur.nextset()
                out.append(cur.fetchall() if cur.description else cur.rowcount)
            return out

    ratio(f"PostgresDedupeStore.claim{where}", lambda: store.claim(f"c{next(ids)}"),
          lambda: raw_run(store._claim_sql(f"r{next(ids)}", "t")), "claims", not where)

    def ours_round() -> None:
        _inbox_round(inbox, f"o{next(ids)}")

    def raw_round() -> None:
        raw_run(inbox._put_sql(f"r{next(ids)}", b"{}", None))
        for row in raw_run(inbox._take_sql(1))[0]:
            entry = inbox._taken([(1, [row])])[0]
            raw_run(inbox._done_sql(entry))

    ratio(f"PostgresInbox put + take_due + mark_done{where}", ours_round, raw_round, "rounds", not where)
    raw.close()
    store.close()
    inbox.close()


def _redis(url: str, ratio: Callable[..., None]) -> None:
    import redis

    from sports_posts.webhooks import RedisInbox

    inbox = RedisInbox(url)
    raw = redis.Redis.from_url(url)
    ids = itertools.count()
    inbox.put("warm", b"{}")  # creates the group; both sides then run on it
    scripts: dict[str, str] = {}

    def raw_call(call: tuple[str, list[str], list[Any]]) -> Any:
        source, keys, args = call
        if source not in scripts:
            scripts[source] = str(raw.script_load(source))
        sha = scripts[source]
        return raw.evalsha(sha, len(keys), *keys, *args)

    def ours_round() -> None:
        _inbox_round(inbox, f"o{next(ids)}")

    def raw_round() -> None:
        raw_call(inbox._put_call(f"r{next(ids)}", b"{}", None))
        for entry in inbox._taken(raw_call(inbox._take_call(1))):
            raw_call(inbox._done_call(entry))

    ratio("RedisInbox put + take_due + mark_done", ours_round, raw_round, "rounds")
    raw.close()
    inbox.close()
