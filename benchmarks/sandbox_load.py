"""The sandbox under load: its throughput against a bare Starlette endpoint, and its cost against world size.

    python -m benchmarks.sandbox_load            # full: worlds of 1,000 to 100,000 posts
    python -m benchmarks.sandbox_load --quick    # a smoke check with small worlds

Every server runs in its own process with the sandbox's own uvicorn settings
(``sports_posts.sandbox._http``): the sandbox, and a Starlette app whose one route answers
a fixed page (the sandbox's own answer to the first request of the mix). One load generator
(asyncio, raw HTTP/1.1 over keep-alive loopback connections) sends the same number of
requests to each, in interleaved rounds; each figure is the best round (the cost per request
is the servers' own CPU time where Linux's /proc reports it, else throughput). Targets: the
sandbox serves at least 0.5x the bare endpoint's requests per second, and a world 100x
larger costs at most 1.2x per request. The full run also draws docs/sandbox-cost.svg.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

MIX = (
    "/v1/posts?leagues=NFL",                      # league mode, trending (the default sort)
    "/v1/posts?leagues=NBA&sort=recent",           # what a poller asks
    "/v1/posts?sort=top",                          # every league, by score
    "/v1/posts",                                   # trending across every league
    "/v1/posts?leagues=MLB,NHL&highlight=true&sort=recent",
)
"""The requests of the load, in turn on every connection (20 posts a page, the default)."""
KEY = "bench-key"
CONNECTIONS = 8
CHART = Path(__file__).resolve().parent.parent / "docs" / "sandbox-cost.svg"


@dataclass
class Plan:
    """How much to measure: world sizes (the first is the base), requests per round, rounds."""

    sizes: tuple[int, ...]
    requests: int
    rounds: int
    chart: Optional[Path]


FULL = Plan(sizes=(1_000, 10_000, 100_000), requests=3_000, rounds=5, chart=CHART)
QUICK = Plan(sizes=(300, 3_000), requests=300, rounds=2, chart=None)


# --------------------------------------------------------------------------- servers


def _serve(kind: str, arg: str, port: int) -> None:
    """A server process: ``sandbox <posts>`` or ``bare <page file>``; runs until killed."""
    from sports_posts.sandbox import KeyConfig, Sandbox
    from sports_posts.sandbox._http import start_server

    if kind == "sandbox":
        Sandbox(seed=7, clock="manual", posts=int(arg), keys={KEY: KeyConfig()}, port=port).serve_forever()
    else:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route

        page = Path(arg).read_bytes()

        async def fixed(request: Request) -> Response:
            return Response(page, media_type="application/json")

        _server, thread, _port = start_server(Starlette(routes=[Route("/v1/posts", fixed)]), "127.0.0.1", port)
        thread.join()


class Server:
    """One server process on a free loopback port; ``with Server(...) as url:``."""

    def __init__(self, kind: str, arg: str) -> None:
        from benchmarks._net import free_port

        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "-m", "benchmarks.sandbox_load", "--serve", kind, arg,
                                      str(self.port)])

    def __enter__(self) -> Server:
        from benchmarks._net import wait_port

        wait_port(self.port, self.proc, timeout=600.0)  # a world of 100,000 posts takes a while to build
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


# --------------------------------------------------------------------------- load


async def _connection(port: int, paths: list[bytes], count: int, out: list[float]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for i in range(count):
            t0 = time.perf_counter()
            writer.write(paths[i % len(paths)])
            head = await reader.readuntil(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"unexpected answer: {head[:80]!r}")
            length = next(int(line.split(b":", 1)[1]) for line in head.lower().split(b"\r\n")
                          if line.startswith(b"content-length:"))
            await reader.readexactly(length)
            out.append(time.perf_counter() - t0)
    finally:
        writer.close()


def server_cpu(pid: int) -> Optional[float]:
    """CPU seconds process ``pid`` has used, every thread, from Linux's /proc: the scheduler's
    nanosecond count per thread (``schedstat``) where the kernel keeps it, else the 10 ms
    ticks of ``stat``; ``None`` where /proc is not available."""
    try:
        total = 0
        for thread in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{thread}/schedstat", "rb") as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def load(port: int, requests: int, paths: tuple[str, ...] = MIX, deadline: float = 120.0) -> float:
    """Requests per second over ``CONNECTIONS`` keep-alive connections (bounded in count and time)."""
    raw = [f"GET {p} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\n\r\n".encode() for p in paths]

    async def run() -> float:
        latencies: list[float] = []
        per = max(1, requests // CONNECTIONS)
        t0 = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(*(
            _connection(port, raw[i % len(raw):] + raw[:i % len(raw)], per, latencies) for i in range(CONNECTIONS)
        )), timeout=deadline)
        return len(latencies) / (time.perf_counter() - t0)

    return asyncio.run(run())


def fetch(port: int, path: str) -> bytes:
    """One answer's body (the bare endpoint serves the sandbox's own page)."""
    import httpx

    return httpx.get(f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {KEY}"}).content


# --------------------------------------------------------------------------- chart


def chart(sizes: list[int], cost_us: list[float], bare_us: float) -> str:
    """Microseconds per request against world size (sizes grow tenfold: a log scale), bare as a line."""
    from benchmarks.charts import Reference, Series, line_chart

    return line_chart(
        title="Sandbox cost per request", x_title="posts in the world (log scale)", y_title="µs per request",
        x_labels=[f"{size:,}" for size in sizes], series=[Series("sandbox (GET /posts mix)", "#1f77b4", cost_us)],
        reference=Reference("bare Starlette, fixed page", "#d62728", bare_us, "µs"), point_labels=True,
    )


# --------------------------------------------------------------------------- the benchmark


def bench_sandbox(quick: bool, record: Callable[..., None]) -> None:
    """Record the two targets through ``record(name, value, unit, target, ok, **detail)``."""
    plan = QUICK if quick else FULL
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.json"
        with ExitStack() as stack:
            servers = [Server("sandbox", str(size)) for size in plan.sizes]  # their worlds build at once
            for server in servers:
                stack.enter_context(server)
            page.write_bytes(fetch(servers[0].port, MIX[0]))
            bare = stack.enter_context(Server("bare", str(page)))
            best = dict.fromkeys(["bare", *map(str, plan.sizes)], 0.0)
            cpu = dict.fromkeys(map(str, plan.sizes), math.inf)  # server CPU seconds per request
            for server in [bare, *servers]:  # warm up
                load(server.port, plan.requests // 4)
            for _ in range(plan.rounds):
                best["bare"] = max(best["bare"], load(bare.port, plan.requests, MIX[:1]))
                for size, server in zip(plan.sizes, servers):
                    before = server_cpu(server.proc.pid)
                    best[str(size)] = max(best[str(size)], load(server.port, plan.requests))
                    after = server_cpu(server.proc.pid)
                    if before is not None and after is not None:
                        cpu[str(size)] = min(cpu[str(size)], (after - before) / plan.requests)
    base, largest = plan.sizes[0], plan.sizes[-1]
    ratio = best[str(base)] / best["bare"]
    record(f"sandbox GET /posts mix vs a bare Starlette endpoint answering a fixed page (world of {base:,} posts)",
           ratio, "x throughput", ">= 0.5", ratio >= 0.5, sandbox_rps=round(best[str(base)]),
           bare_rps=round(best["bare"]), requests_per_round=plan.requests, rounds=plan.rounds)
    by_throughput = best[str(base)] / best[str(largest)]
    by_cpu = cpu[str(largest)] / cpu[str(base)] if math.isfinite(cpu[str(largest)]) and cpu[str(base)] > 0 else None
    # The servers' own CPU time per request where the system reports it: other processes on
    # the machine (the load generator included) then cost neither world.
    growth = by_cpu if by_cpu is not None else by_throughput
    record(f"sandbox cost per request, world of {largest:,} vs {base:,} posts ({largest // base}x)",
           growth, "x", "<= 1.2", growth <= 1.2, measured="server CPU time" if by_cpu is not None else "throughput",
           by_throughput=round(by_throughput, 3),
           cpu_us_per_request={str(s): round(cpu[str(s)] * 1e6, 1) for s in plan.sizes if math.isfinite(cpu[str(s)])},
           requests_per_second={str(s): round(best[str(s)]) for s in plan.sizes})
    cost = [1e6 / best[str(s)] for s in plan.sizes]
    svg = chart(list(plan.sizes), cost, 1e6 / best["bare"])
    if plan.chart is not None:
        plan.chart.write_text(svg, encoding="utf-8")
        print(f"        chart: {plan.chart}", flush=True)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small worlds and few requests: a smoke check")
    parser.add_argument("--serve", nargs=3, metavar=("KIND", "ARG", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        kind, arg, port = args.serve
        _serve(kind, arg, int(port))
        return 0
    missed: list[str] = []

    def record(name: str, value: float, unit: str, target: str, ok: bool, **detail: Any) -> None:
        print(f"  [{'ok ' if ok else 'MISS'}] {name}: {value:.3f} {unit} (target {target}) {detail}", flush=True)
        if not ok:
            missed.append(name)

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores", flush=True)
    bench_sandbox(args.quick, record)
    return 1 if missed and not args.quick else 0


if __name__ == "__main__":
    sys.exit(main())
