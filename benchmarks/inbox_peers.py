"""The inbox against the Python job queues a customer would pick instead, side by side in one run.

    python -m benchmarks.run --only inbox_peers

PostgreSQL: ``PostgresInbox`` against pgqueuer and procrastinate. Redis: ``RedisInbox``
against saq and arq. Every side runs on the same private server, asyncio, one process:
put N jobs one at a time (each awaited before the next, as a receiver stores a delivery
before its 2xx), then drain them with a handler that does nothing. Each round gives each
side a fresh database (PostgreSQL) or an empty server (Redis), its schema installed before
the clock starts; the rounds are interleaved and the side that goes first alternates.

The inbox drains the way the receiver's inbox worker does (``webhooks/_inbox_worker.py``):
lease a batch of due entries (``take_due(16)``), run the handler on each, then record the
batch's outcomes, ``mark_done_many``: one statement (one script call on Redis) that checks
each entry's lease token. Its drain is timed until the last batch's completion has
committed; a peer's until its handler ran for the last job (its worker then finishes in the
background), which favours the peer. The peers run with their documented defaults through
their public API (pgqueuer: ``PgQueuer(PsycopgDriver(conn))``, ``qm.run(mode=drain)``,
batches of 10; procrastinate: ``PsycopgConnector``, ``run_worker_async(wait=False)``;
saq and arq: their burst workers).

The figure is a ratio in the same run: the inbox's rate over the best peer's (target >= 1.0x,
at or above the best peer), for puts and for the drain. A peer that does not install on this
Python (pgqueuer needs 3.10+) is reported as not measured.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import logging
import sys
import time
from collections.abc import Coroutine
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any, Callable, Optional

BATCH = 16
"""Entries the inbox leases per ``take_due``: the receiver's inbox worker's default."""

N_FULL, N_QUICK = 3000, 60
ROUNDS_FULL, ROUNDS_QUICK = 3, 1

Side = Callable[[str, int], Coroutine[Any, Any, tuple[float, float]]]
"""A side's round: (url of an empty database or server, N) -> (puts/s, drained/s)."""


def _payload() -> bytes:
    """A story as the service sends it: every side stores the same bytes."""
    from sports_posts.webhooks import sample_payload

    return json.dumps(sample_payload(id="p0000001"), separators=(",", ":")).encode()


def missing(side: str) -> Optional[str]:
    """Why ``side`` (a peer, or one package) cannot be measured here, or None when it can."""
    for package in PACKAGES.get(side, (side,)):
        if importlib.util.find_spec(package) is not None:
            continue
        if package in ("pgqueuer", "asyncpg") and sys.version_info < (3, 10):
            return "not installed (pgqueuer needs Python 3.10+)"
        return f"not installed ({package}: pip install -e '.[dev]')"
    return None


class _Finish:
    """Counts handler runs; ``done`` is set when the N-th has run."""

    def __init__(self, n: int) -> None:
        self.n, self.count, self.done, self.at = n, 0, asyncio.Event(), 0.0

    def ran(self) -> None:
        self.count += 1
        if self.count == self.n:
            self.at = time.perf_counter()
            self.done.set()


async def _drain(inbox: Any) -> int:
    """``InboxWorker.run_once`` until nothing is due, on the event loop: lease a batch, run
    the do-nothing handler on each entry, record the batch's outcomes the way the worker
    does (one ``mark_done_many`` where the inbox has it, else ``mark_done`` each)."""
    ran = 0
    many = getattr(inbox, "amark_done_many", None)
    while True:
        entries = await inbox.atake_due(BATCH)
        if not entries:
            return ran
        ran += len(entries)  # the handler: nothing
        if many is not None:
            await many(entries)
        else:
            for entry in entries:
                await inbox.amark_done(entry)


# --------------------------------------------------------------------------- PostgreSQL


async def ours_postgres(url: str, n: int) -> tuple[float, float]:
    from sports_posts.webhooks import PostgresInbox

    inbox = PostgresInbox(url)
    await inbox.amigrate()
    return await _race(inbox, n, "PostgresInbox")


async def _race(inbox: Any, n: int, name: str) -> tuple[float, float]:
    """Our side of the race on a connected inbox: ``n`` puts one at a time, then the drain;
    (puts/s, drained/s)."""
    body = _payload()
    t0 = time.perf_counter()
    for i in range(n):
        await inbox.aput(f"breaking_news:{i}", body, f"d{i}")
    put = n / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    ran = await _drain(inbox)
    drain = n / (time.perf_counter() - t0)
    counts = await inbox.acounts()
    await inbox.aclose()
    if ran != n or counts["done"] != n:
        raise RuntimeError(f"{name} drained {ran} of {n} ({counts})")
    return put, drain


async def _pgqueuer(url: str, n: int, connect: Callable[[], Coroutine[Any, Any, Any]]) -> tuple[float, float]:
    """pgqueuer as its README shows it: ``Queries(driver).enqueue`` one job at a time, then a
    ``PgQueuer`` worker with an entrypoint, run in drain mode (batches of 10, completions
    batched), each on a connection of its own."""
    from pgqueuer import PgQueuer
    from pgqueuer.models import Job
    from pgqueuer.queries import Queries
    from pgqueuer.types import QueueExecutionMode

    body = _payload()
    producer = await connect()
    queries = Queries(producer)
    await queries.install()
    t0 = time.perf_counter()
    for _ in range(n):
        await queries.enqueue("noop", body)
    put = n / (time.perf_counter() - t0)
    pgq = PgQueuer(await connect())
    finish = _Finish(n)

    async def noop(job: Job) -> None:
        finish.ran()

    pgq.entrypoint("noop")(noop)  # not as a decorator: untyped where pgqueuer is not installed

    t0 = time.perf_counter()
    await pgq.qm.run(mode=QueueExecutionMode.drain)
    if not finish.done.is_set():
        raise RuntimeError(f"pgqueuer drained {finish.count} of {n}")
    return put, n / (finish.at - t0)


async def pgqueuer_asyncpg(url: str, n: int) -> tuple[float, float]:
    """pgqueuer on asyncpg, the driver of its README."""
    import asyncpg
    from pgqueuer.db import AsyncpgDriver

    connections: list[Any] = []

    async def connect() -> Any:
        connections.append(await asyncpg.connect(url))
        return AsyncpgDriver(connections[-1])

    try:
        return await _pgqueuer(url, n, connect)
    finally:
        for conn in connections:
            await conn.close()


async def pgqueuer_psycopg(url: str, n: int) -> tuple[float, float]:
    """pgqueuer on psycopg (autocommit, as its driver asks), the driver the inbox uses."""
    import psycopg
    from pgqueuer.db import PsycopgDriver

    connections: list[Any] = []

    async def connect() -> Any:
        connections.append(await psycopg.AsyncConnection.connect(url, autocommit=True))
        return PsycopgDriver(connections[-1])

    try:
        return await _pgqueuer(url, n, connect)
    finally:
        for conn in connections:
            await conn.close()


async def procrastinate_side(url: str, n: int) -> tuple[float, float]:
    from procrastinate import App, PsycopgConnector

    body = _payload().decode()
    app = App(connector=PsycopgConnector(conninfo=url))
    finish = _Finish(n)

    async def noop(body: str) -> None:
        finish.ran()

    task = app.task(name="noop")(noop)  # not as a decorator: untyped where procrastinate is not installed

    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        t0 = time.perf_counter()
        for _ in range(n):
            await task.defer_async(body=body)
        put = n / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        await app.run_worker_async(wait=False, install_signal_handlers=False)
    if not finish.done.is_set():
        raise RuntimeError(f"procrastinate drained {finish.count} of {n}")
    return put, n / (finish.at - t0)


# --------------------------------------------------------------------------- Redis


async def ours_redis(url: str, n: int) -> tuple[float, float]:
    from sports_posts.webhooks import RedisInbox

    inbox = RedisInbox(url)
    await inbox.acounts()  # connected (and its group made) before the clock, as the peers' queues
    return await _race(inbox, n, "RedisInbox")


async def saq_side(url: str, n: int) -> tuple[float, float]:
    from saq import Queue, Worker

    body = _payload().decode()
    queue = Queue.from_url(url)
    await queue.connect()
    finish = _Finish(n)

    async def noop(ctx: Any, *, body: str) -> None:
        finish.ran()

    t0 = time.perf_counter()
    for _ in range(n):
        await queue.enqueue("noop", body=body)
    put = n / (time.perf_counter() - t0)
    # burst: stop once the queue is empty (saq needs a dequeue timeout for it)
    # its stop() warns of the burst's idle dequeue it cancels: not a figure, not a fault
    logging.getLogger("saq").setLevel(logging.ERROR)
    worker = Worker(queue, functions=[("noop", noop)], burst=True, dequeue_timeout=0.5)
    t0 = time.perf_counter()
    task = asyncio.ensure_future(worker.start())
    await asyncio.wait_for(finish.done.wait(), 600)
    drain = n / (finish.at - t0)
    await task
    await queue.disconnect()
    return put, drain


async def arq_side(url: str, n: int) -> tuple[float, float]:
    from arq import Worker, create_pool
    from arq.connections import RedisSettings
    from arq.worker import func

    body = _payload().decode()
    pool = await create_pool(RedisSettings.from_dsn(url))
    finish = _Finish(n)

    async def noop(ctx: Any, body: str) -> None:
        finish.ran()

    t0 = time.perf_counter()
    for _ in range(n):
        await pool.enqueue_job("noop", body)
    put = n / (time.perf_counter() - t0)
    worker = Worker(functions=[func(noop, name="noop")], redis_pool=pool, burst=True, handle_signals=False)
    t0 = time.perf_counter()
    await worker.async_run()
    if not finish.done.is_set():
        raise RuntimeError(f"arq drained {finish.count} of {n}")
    drain = n / (finish.at - t0)
    await worker.close()
    await pool.aclose()
    return put, drain


# --------------------------------------------------------------------------- the run


def _fresh_database(url: str, name: str) -> str:
    """``url`` of a new empty database ``name`` on the server of ``url``."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return url.rsplit("/", 1)[0] + "/" + name


def _flushed(url: str, name: str) -> str:
    """``url`` of the Redis server emptied (``name`` is unused: one server, emptied each round)."""
    import redis

    client = redis.Redis.from_url(url)
    client.flushall()
    client.close()
    return url


def race(sides: dict[str, Side], fresh: Callable[[str], str], n: int, rounds: int) -> dict[str, dict[str, float]]:
    """Best put and drain rate of each side over ``rounds`` interleaved rounds."""
    best: dict[str, dict[str, float]] = {name: {"put": 0.0, "drain": 0.0} for name in sides}
    order = list(sides)
    for round_ in range(rounds):
        for name in order if round_ % 2 == 0 else order[::-1]:
            where = fresh("".join(c if c.isalnum() else "_" for c in f"r{round_}_{name}".lower()))
            put, drain = asyncio.run(sides[name](where, n))
            best[name]["put"] = max(best[name]["put"], put)
            best[name]["drain"] = max(best[name]["drain"], drain)
    return best


def _report(bench: ModuleType, ours: str, figures: dict[str, dict[str, float]], skipped: dict[str, str],
            n: int) -> None:
    for name, why in skipped.items():
        bench.note(f"{name} (against {ours})", f"not measured: {why}", skipped=why)
    rates = "; ".join(f"{name} {f['put']:,.0f} puts/s, {f['drain']:,.0f} drained/s" for name, f in figures.items())
    bench.note(f"{ours} and its peers, N = {n:,}", rates,
               **{name: {k: round(v) for k, v in f.items()} for name, f in figures.items()})
    peers = [name for name in figures if name != ours]
    if not peers:
        return
    for what, unit in (("put", "puts one at a time"), ("drain", "drain with a do-nothing handler")):
        top = max(peers, key=lambda name: figures[name][what])
        ratio = figures[ours][what] / figures[top][what]
        bench.record(f"{ours} {unit} vs the best of {', '.join(peers)} ({top}), N = {n:,}", ratio, "x",
                     ">= 1.0", ratio >= 1.0, ours_per_second=round(figures[ours][what]),
                     peer=top, peer_per_second=round(figures[top][what]))


PEERS_POSTGRES: dict[str, Side] = {
    "pgqueuer on asyncpg": pgqueuer_asyncpg,
    "pgqueuer on psycopg": pgqueuer_psycopg,
    "procrastinate": procrastinate_side,
}
PACKAGES = {"pgqueuer on asyncpg": ("pgqueuer", "asyncpg"), "pgqueuer on psycopg": ("pgqueuer",)}
"""The packages a side needs, where its name is not the one package."""
PEERS_REDIS: dict[str, Side] = {"saq": saq_side, "arq": arq_side}


def run(quick: bool, bench: ModuleType) -> None:
    """Each figure goes to ``bench.record`` / ``bench.note`` (the running ``benchmarks.run``)."""
    from support.servers import private_postgres, private_redis

    n, rounds = (N_QUICK, ROUNDS_QUICK) if quick else (N_FULL, ROUNDS_FULL)
    _engine(bench, "PostgresInbox", ours_postgres, PEERS_POSTGRES, private_postgres, _fresh_database, n, rounds)
    _engine(bench, "RedisInbox", ours_redis, PEERS_REDIS, private_redis, _flushed, n, rounds)


def _engine(bench: ModuleType, ours: str, side: Side, peers: dict[str, Side],
            server: Callable[[], AbstractContextManager[str]], fresh: Callable[[str, str], str], n: int,
            rounds: int) -> None:
    from support.servers import ServerError

    skipped = {name: why for name in peers if (why := missing(name)) is not None}
    sides: dict[str, Side] = {ours: side, **{k: v for k, v in peers.items() if k not in skipped}}
    try:
        with server() as url:
            figures = race(sides, functools.partial(fresh, url), n, rounds)
    except ServerError as exc:
        bench.record(f"{ours} vs its peers", 0.0, "x", ">= 1.0", False, error=str(exc))
        return
    _report(bench, ours, figures, skipped, n)
