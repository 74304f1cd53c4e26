"""Dedupe stores: the memory store against a plain dict + lock, SQLite, and Redis against its floor.

    python -m benchmarks.run --only dedupe

The memory store's figure is a ratio to a ``dict`` + ``threading.Lock`` doing the same
check-and-set (is the key held and unexpired? if not, take it with an expiry) in the same
run, so the noise of a shared machine cancels out. Redis is shown against redis-py's own
``SET NX PX`` and the same command over a bare socket.

``WebhookReceiver.handle()`` is timed with each store (and the durable SQLite inbox) beside
what a hand-written endpoint does before its handler, in the same run: an HMAC check and a
``json.loads`` of the same bodies.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from types import ModuleType
from typing import Any, Callable


def _dict_and_lock(lease: float = 300.0) -> Callable[[str], bool]:
    """The check-and-set a user would write by hand for one process."""
    entries: dict[str, tuple[str, float]] = {}
    lock = threading.Lock()

    def claim(key: str) -> bool:
        now = time.time()
        with lock:
            entry = entries.get(key)
            if entry is not None and entry[1] > now:
                return False
            entries[key] = ("1", now + lease)
            return True

    return claim


def _fresh_keys(prefix: str) -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"breaking_news:{prefix}{next(counter)}"


def _claims_per_second(claim: Callable[[str], Any], n: int) -> float:
    keys = [f"breaking_news:{i}" for i in range(n)]
    t0 = time.perf_counter()
    for key in keys:
        claim(key)
    return n / (time.perf_counter() - t0)


def _raw_socket_set_nx_per_second(port: int, n: int) -> float:
    """SET NX PX round trips over a bare TCP socket, no client library: the network's floor."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        t0 = time.perf_counter()
        for i in range(n):
            key = f"socket:{i}".encode()
            sock.sendall(b"*6\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$3\r\np:x\r\n$2\r\nNX\r\n$2\r\nPX\r\n"
                         b"$6\r\n300000\r\n" % (len(key), key))
            if sock.recv(64) != b"+OK\r\n":
                raise RuntimeError("unexpected answer from redis-server")
        return n / (time.perf_counter() - t0)


def _signed(tag: str, n: int) -> list[tuple[bytes, dict[str, str]]]:
    """``n`` (body, headers) pairs, each a new story, signed with ``SECRET``."""
    import json

    from sports_posts.webhooks import sample_payload, sign_payload

    out = []
    for i in range(n):
        body = json.dumps(sample_payload(id=f"{tag}{i:07d}"), separators=(",", ":")).encode()
        out.append((body, {"X-Service-Signature": sign_payload(body, SECRET),
                           "X-Service-Delivery": f"d{tag}{i}", "X-Service-Event": "breaking_news"}))
    return out


SECRET = "whsec_benchmark"


def _p50_microseconds(call: Callable[[bytes, dict[str, str]], Any], requests: list[tuple[bytes, dict[str, str]]]) -> float:
    times = []
    clock = time.perf_counter
    for body, headers in requests:
        t0 = clock()
        call(body, headers)
        times.append(clock() - t0)
    times.sort()
    return times[len(times) // 2] * 1e6


def _bare_check(body: bytes, headers: dict[str, str]) -> Any:
    """What a hand-written endpoint does before its handler: the HMAC check and the parse."""
    import hashlib
    import hmac
    import json

    expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, headers["X-Service-Signature"]):
        raise ValueError("bad signature")
    return json.loads(body)


_HANDLE_P50: dict[str, float] = {}


def _handle_latency(bench: ModuleType, name: str, n: int, **receiver_options: Any) -> None:
    """p50 of ``handle()`` with a no-op handler, beside the bare check on the same bodies."""
    from sports_posts.webhooks import WebhookReceiver

    receiver = WebhookReceiver(SECRET, lambda event: None, start_worker=False, **receiver_options)
    try:
        ours = _p50_microseconds(lambda b, h: receiver.handle(b, h), _signed(name[:2], n))
        if receiver.handle(*_signed("zz", 1)[0]).status != 202:
            raise RuntimeError(f"handle() with {name} did not accept a signed story")
    finally:
        receiver.close()
    if "bare" not in _HANDLE_P50:
        _HANDLE_P50["bare"] = _p50_microseconds(_bare_check, _signed("bare", n))
    bare = _HANDLE_P50["bare"]
    bench.note(f"WebhookReceiver.handle() p50 with {name}",
               f"{ours:.0f} us; the bare HMAC check + json.loads of the same bodies: {bare:.0f} us",
               microseconds=round(ours, 1), bare_microseconds=round(bare, 1))


def run(quick: bool, bench: ModuleType) -> None:
    from sports_posts.webhooks import MemoryDedupeStore, SQLiteDedupeStore

    store = MemoryDedupeStore()
    baseline = _dict_and_lock()
    ours_key, base_key = _fresh_keys("m"), _fresh_keys("d")  # every claim a new story, as in production
    best, median = bench.compare(lambda: store.claim(ours_key()), lambda: baseline(base_key()),
                                 number=2_000 if quick else 20_000, rounds=3 if quick else 15)
    ratio = 1 / best  # claims per second, ours over the baseline's
    bench.record("MemoryDedupeStore claims/s vs dict + threading.Lock doing the same check-and-set",
                 ratio, "x", ">= 0.7", ratio >= 0.7, median_ratio=round(1 / median, 3))

    n = 5_000 if quick else 200_000
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = SQLiteDedupeStore(os.path.join(tmp, "dedupe.sqlite3"))
        rate = _claims_per_second(sqlite.claim, n // 10)
        bench.record("SQLiteDedupeStore claims per second", rate, "claims/s", ">= 10,000", rate >= 10_000)
        sqlite.close()
        from sports_posts.webhooks import SQLiteInbox

        handled = 90 if quick else 3000
        _handle_latency(bench, "MemoryDedupeStore", handled, store=MemoryDedupeStore())
        _handle_latency(bench, "SQLiteDedupeStore", handled,
                        store=SQLiteDedupeStore(os.path.join(tmp, "handle.sqlite3")))
        _handle_latency(bench, "SQLiteInbox (durable: an fsync before the 2xx)", handled // 3,
                        inbox=SQLiteInbox(os.path.join(tmp, "inbox.sqlite3")))
    _redis(quick, bench, n // 10)


def _redis(quick: bool, bench: ModuleType, n: int) -> None:
    from sports_posts.webhooks import RedisDedupeStore

    binary = shutil.which("redis-server")
    if binary is None:
        bench.record("RedisDedupeStore claims per second", 0.0, "claims/s", ">= 10,000", False,
                     error="no redis-server: apt-get install -y redis-server")
        return
    port = bench.free_port()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no", "--dir", tmp],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            bench.wait_port(port, proc)
            import redis

            store = RedisDedupeStore(f"redis://127.0.0.1:{port}/0")
            keys = [f"breaking_news:batch:{i}" for i in range(n)]
            t0 = time.perf_counter()
            for i in range(0, len(keys), 500):
                store.claim_many(keys[i:i + 500])
            rate = len(keys) / (time.perf_counter() - t0)
            bench.record("RedisDedupeStore.claim_many (pipelined) claims per second", rate, "claims/s",
                         ">= 10,000", rate >= 10_000)

            # One claim is one round trip; its floor is the network, shown by the same command
            # sent over a bare socket and by redis-py on its own.
            floor = _raw_socket_set_nx_per_second(port, n)
            raw = redis.Redis(port=port)
            raw_rate = _claims_per_second(lambda key: raw.set("raw:" + key, "p:x", nx=True, px=300_000), n)
            raw.close()
            rate = _claims_per_second(store.claim, n)
            bench.note("RedisDedupeStore.claim, one round trip each (a script that also checks the marker key)",
                       f"{rate:,.0f} claims/s; {rate / raw_rate:.2f}x raw redis-py SET NX PX ({raw_rate:,.0f}/s), "
                       f"{rate / floor:.2f}x the same command over a bare socket ({floor:,.0f}/s)",
                       claims_per_second=round(rate), raw_redis_py_per_second=round(raw_rate),
                       bare_socket_per_second=round(floor), vs_raw_redis_py=round(rate / raw_rate, 3),
                       vs_bare_socket=round(rate / floor, 3))
            store.close()
            _handle_latency(bench, "RedisDedupeStore", 90 if quick else 3000,
                            store=RedisDedupeStore(f"redis://127.0.0.1:{port}/0"))
        finally:
            proc.terminate()
            proc.wait(timeout=10)
