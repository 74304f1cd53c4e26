"""Run every benchmark and print ratios against a baseline measured in the same run.

    python -m benchmarks.run            # all, 7 to 9 minutes on 2 cores
    python -m benchmarks.run --quick    # fewer rounds, for a smoke check
    python -m benchmarks.run --json out.json

Each comparison interleaves rounds of the SDK and of its baseline and reports the ratio of
the best rounds (the least disturbed by other processes), plus the median ratio of pairs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import hmac
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

import httpx

from benchmarks import dedupe, inbox_peers, receiver
from benchmarks._data import page_bytes
from benchmarks._net import free_port, wait_port
from benchmarks.sandbox_load import bench_sandbox

RESULTS: list[Result] = []
INFO: list[dict[str, Any]] = []  # figures without a target of their own


@dataclass
class Result:
    name: str
    value: float
    unit: str
    target: str
    ok: bool
    detail: dict[str, Any] = field(default_factory=dict)


def record(name: str, value: float, unit: str, target: str, ok: bool, **detail: Any) -> None:
    RESULTS.append(Result(name, value, unit, target, ok, detail))
    mark = "ok " if ok else "MISS"
    print(f"  [{mark}] {name}: {value:.3f} {unit} (target {target})", flush=True)


def note(name: str, text: str, **detail: Any) -> None:
    """A figure without a target of its own: printed, and kept under "info" in the JSON."""
    INFO.append({"name": name, **detail})
    print(f"  [info] {name}: {text}", flush=True)


def compare(
    ours: Callable[[], Any], baseline: Callable[[], Any], *, number: int, rounds: int,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float]:
    """(ratio of best rounds, median ratio of interleaved pairs) for ours/baseline.

    Each batch starts from a fresh collection, and the side that goes first alternates:
    whichever ran second would otherwise pay for the older-generation collections that
    the first one's garbage triggers. ``clock=time.process_time`` times work that never
    leaves this process in CPU time, which other processes on the machine do not move.
    """
    return compare_clocks(ours, baseline, number=number, rounds=rounds, clocks=[clock])[0]


def compare_clocks(
    ours: Callable[[], Any], baseline: Callable[[], Any], *, number: int, rounds: int,
    clocks: list[Callable[[], float]],
) -> list[tuple[float, float]]:
    """``compare`` timed by several clocks at once (the same rounds): a pair per clock."""
    ours(), baseline()  # warm up both paths
    times = [{"ours": [], "baseline": []} for _ in clocks]  # type: list[dict[str, list[float]]]
    sides = [("baseline", baseline), ("ours", ours)]
    for round_ in range(rounds):
        for name, run in sides if round_ % 2 == 0 else sides[::-1]:
            gc.collect()
            starts = [clock() for clock in clocks]
            for _ in range(number):
                run()
            ends = [clock() for clock in clocks]
            for kept, t0, t1 in zip(times, starts, ends):
                kept[name].append(t1 - t0)
    return [ratios(kept) for kept in times]


def ratios(times: dict[str, list[float]]) -> tuple[float, float]:
    """(ratio of best rounds, median ratio of interleaved pairs) of ``times["ours"]`` to ``times["baseline"]``."""
    pairs = [o / b for o, b in zip(times["ours"], times["baseline"])]
    return min(times["ours"]) / min(times["baseline"]), statistics.median(pairs)


# --------------------------------------------------------------------------- client


PROCESSES = 5
"""Fresh interpreters each parse and fetch comparison runs in, one after the other."""
PROCESS_TIMEOUT = 600
"""Seconds one of those interpreters may take (about 30 are usual): past it the run stops
with the process's output instead of waiting. An asyncio run whose code raised while
httpcore requests were in flight can wait for ever cancelling them (Python 3.9)."""
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def in_fresh_processes(call: str, quick: bool) -> dict[str, Any]:
    """``call`` (a ``measure_*`` function of this module, as Python source) in fresh
    interpreters: the median of their figures, each key apart, plus every process's figures.

    A process's memory layout and hash seed move a same-process ratio between two runs of
    the same code; pyperf runs its workers in fresh processes for the same reason. The median of five
    processes is not moved by two unlucky layouts.
    """
    runs = []
    for _ in range(1 if quick else PROCESSES):
        code = f"import json; from benchmarks.run import *; print(json.dumps({call}))"
        try:
            out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                                 check=True, timeout=PROCESS_TIMEOUT)
        except subprocess.SubprocessError as exc:  # failed or stuck: say why, not a bare code
            stderr = getattr(exc, "stderr", None) or b""
            text = stderr if isinstance(stderr, str) else stderr.decode(errors="replace")
            raise SystemExit(f"benchmark process failed: {exc}\n{text[-3000:]}") from None
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    figures: dict[str, Any] = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    figures["processes"] = runs
    return figures


def bench_client(quick: bool) -> None:
    """Fetch + parse of a 100-post page, on each HTTP stack, against that stack's own client
    doing the same GET with plain pydantic models of the page (the floor API.md's models set)."""
    bench_client_construction(quick)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks._page_server", str(port)])
    try:
        wait_port(port, proc)
        for stack in ("httpx", "httpx2"):
            missing = stack_missing(stack)
            if missing:
                note(f"fetch + parse vs {stack}", f"not measured: {missing}", stack=stack, skipped=missing)
                continue
            f = in_fresh_processes(
                f"measure_client({stack!r}, 'http://127.0.0.1:{port}/v1', {quick}, server_pid={proc.pid})", quick
            )
            per_process = [round(run["sync"], 3) for run in f["processes"]]
            record(f"sync fetch + parse of a 100-post page vs {stack}.Client + plain pydantic", f["sync"], "x",
                   "<= 1.05", f["sync"] <= 1.05, median_ratio=round(f["sync_median"], 3),
                   per_process=per_process, page_bytes=len(page_bytes()))
            note(f"sync fetch vs {stack}.Client + json.loads", f"{f['vs_json']:.2f}x", ratio=round(f["vs_json"], 3))
            # The same rounds in CPU time, the client's and the server's together: steadier on a
            # busy machine, and without the waits the wall clock dilutes a difference with.
            note(f"fetch + parse vs {stack} + plain pydantic in CPU time (client + server)",
                 f"sync {f['sync_cpu']:.3f}x, async {f['async_cpu']:.3f}x",
                 sync=round(f["sync_cpu"], 3), async_=round(f["async_cpu"], 3))
            record(f"async: 50 concurrent pages vs {stack}.AsyncClient + plain pydantic", f["async"], "x",
                   "<= 1.05", f["async"] <= 1.05, median_ratio=round(f["async_median"], 3),
                   per_process=[round(run["async"], 3) for run in f["processes"]])
            note(f"async: 50 concurrent pages vs {stack}.AsyncClient answers gathered first, then parsed",
                 f"{f['async_vs_gathered']:.3f}x", ratio=round(f["async_vs_gathered"], 3))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def bench_client_construction(quick: bool) -> None:
    """Making (and closing) a client vs making an ``httpx.Client()``: the SDK's pools share
    one certificate store, where each library client loads its CA bundle again."""
    import httpx

    from sports_posts import SportsPosts

    def ours() -> None:
        SportsPosts(api_key=API_KEY, base_url="https://api.example.com/v1").close()

    def baseline() -> None:
        httpx.Client().close()

    ratio, _ = compare(ours, baseline, number=3 if quick else 20, rounds=2 if quick else 7)
    note("making and closing a client vs httpx.Client()", f"{ratio:.3f}x", ratio=round(ratio, 4))


def stack_missing(stack: str) -> Optional[str]:
    """Why ``stack`` cannot be measured on this interpreter, or None when it can.

    httpx2 supports Python 3.10+ (its extra is marked so), so the oldest supported Python
    reports it as not installed rather than stopping the run.
    """
    import importlib.util

    if importlib.util.find_spec(stack) is not None:
        return None
    if stack == "httpx2" and sys.version_info < (3, 10):
        return "not installed (httpx2 needs Python 3.10+)"
    return f"not installed (pip install 'sports-posts[{stack}]')"


def cpu_clock(server_pid: Optional[int]) -> Callable[[], float]:
    """CPU seconds of this process and of the server ``server_pid`` together, where Linux's
    /proc reports the server's; else the wall clock.

    A fetch's work is the client's and the server's: the sum of their CPU time is what a
    round costs on an otherwise idle machine, and the other processes of a busy one do not
    move it (the wall clock charges each round whatever ran beside it).
    """
    from benchmarks.sandbox_load import server_cpu

    if server_pid is None or server_cpu(server_pid) is None:
        return time.perf_counter

    def clock() -> float:
        return time.process_time() + (server_cpu(server_pid) or 0.0)

    return clock


API_KEY = "sp_live_paid_5f0c2a9e8d7b6a4c3e2f1a0b9c8d7e6f"
"""A key as long as the service's (the sandbox issues ``sp_sandbox_<plan>_`` and 32 hex digits):
the SDK scans every answer for an echo of it, and that scan's cost depends on its length."""


def measure_client(stack: str, base: str, quick: bool, server_pid: Optional[int] = None) -> dict[str, float]:
    """One process's figures for ``bench_client`` on ``stack``: best and median ratios."""
    import importlib

    from benchmarks._floor import parse_plain
    from sports_posts import AsyncSportsPosts, SportsPosts

    lib: Any = importlib.import_module(stack)
    url = base + "/posts?leagues=NFL&limit=100"
    headers = {"Authorization": f"Bearer {API_KEY}"}
    rounds = 2 if quick else 21
    number = 3 if quick else 20
    figures: dict[str, float] = {}

    with lib.Client() as raw, SportsPosts(api_key=API_KEY, base_url=base, http_client=lib.Client()) as sdk:

        def floor() -> Any:
            return parse_plain(raw.get(url, headers=headers).content)

        def ours() -> Any:
            return sdk.posts.list(leagues="NFL", limit=100)

        def json_only() -> Any:
            return json.loads(raw.get(url, headers=headers).content)

        cpu = cpu_clock(server_pid)
        (figures["sync"], figures["sync_median"]), (figures["sync_cpu"], _) = compare_clocks(
            ours, floor, number=number, rounds=rounds, clocks=[time.perf_counter, cpu])
        figures["vs_json"], _ = compare(ours, json_only, number=number, rounds=rounds)

    async def run_async() -> tuple[float, float, float, float]:
        limits = lib.Limits(max_connections=50, max_keepalive_connections=50)
        raw_a = lib.AsyncClient(limits=limits)
        sdk_a = AsyncSportsPosts(api_key=API_KEY, base_url=base, http_client=lib.AsyncClient(limits=limits))

        async def fetch_a() -> Any:
            return parse_plain((await raw_a.get(url, headers=headers)).content)

        async def floor_a() -> Any:
            # Each call parses its own page as its answer arrives, as the SDK's calls do.
            return await asyncio.gather(*(fetch_a() for _ in range(50)))

        async def gathered_a() -> Any:
            # Every answer read first, then the pages parsed one after another: the server's
            # answers are drained without a parse in between (reported, not judged).
            responses = await asyncio.gather(*(raw_a.get(url, headers=headers) for _ in range(50)))
            return [parse_plain(r.content) for r in responses]

        async def ours_a() -> Any:
            return await asyncio.gather(*(sdk_a.posts.list(leagues="NFL", limit=100) for _ in range(50)))

        await ours_a()
        await floor_a()
        await gathered_a()
        sides = [("baseline", floor_a), ("ours", ours_a), ("gathered", gathered_a)]
        times: dict[str, list[float]] = {name: [] for name, _ in sides}
        cpu_times: dict[str, list[float]] = {name: [] for name, _ in sides}
        for round_ in range(1 if quick else 21):
            # The side that goes first alternates, as in compare(): the second pays for the
            # collections the first one's garbage triggers.
            for name, run in sides if round_ % 2 == 0 else sides[::-1]:
                gc.collect()
                t0, c0 = time.perf_counter(), cpu()
                await run()
                times[name].append(time.perf_counter() - t0)
                cpu_times[name].append(cpu() - c0)
        await raw_a.aclose()
        await sdk_a.aclose()
        vs_gathered = min(times["ours"]) / min(times["gathered"])
        return (*ratios(times), ratios(cpu_times)[0], vs_gathered)

    figures["async"], figures["async_median"], figures["async_cpu"], figures["async_vs_gathered"] = \
        asyncio.run(run_async())
    return figures


def bench_parse(quick: bool) -> None:
    f = in_fresh_processes(f"measure_parse({quick})", quick)
    record("parse only: page bytes -> typed page vs plain pydantic models of the same page", f["parse"], "x",
           "<= 1.05", f["parse"] <= 1.05, median_ratio=round(f["parse_median"], 3),
           per_process=[round(run["parse"], 3) for run in f["processes"]])
    note("parse vs json.loads", f"{f['vs_json']:.2f}x", ratio=round(f["vs_json"], 3))
    note("plain pydantic models whose posts run an empty model_post_init vs the same models without it "
         "(the cost of pydantic's public per-post hook alone)", f"{f['hook']:.3f}x", ratio=round(f["hook"], 3),
         per_process=[round(run["hook"], 3) for run in f["processes"]])
    note("parse vs those plain models with the empty hook", f"{f['vs_hooked']:.3f}x", ratio=round(f["vs_hooked"], 3),
         per_process=[round(run["vs_hooked"], 3) for run in f["processes"]])
    note("parse of a page in the nested author form only vs plain pydantic models of it",
         f"{f['nested']:.3f}x", ratio=round(f["nested"], 3))
    note("parse of a page in the flat author form only (the SDK builds an Author per post)",
         f"{f['flat']:.3f}x plain models of it; {f['flat_with_authors']:.3f}x plain models plus those "
         "Authors built by hand", ratio=round(f["flat"], 3), vs_authors_by_hand=round(f["flat_with_authors"], 3))


def measure_parse(quick: bool) -> dict[str, float]:
    """One process's figures for ``bench_parse``: best and median ratios."""
    from benchmarks._floor import parse_hooked, parse_plain, parse_plain_with_authors
    from sports_posts._endpoints import posts_list
    from sports_posts._transport import parse_answer

    def parse_response(call: Any, response: httpx.Response) -> Any:
        return parse_answer(call, response.status_code, response.content, lambda: response)

    body = page_bytes(100)
    response = httpx.Response(200, content=body)
    call = posts_list({"leagues": "NFL"})
    rounds, number = (2, 5) if quick else (15, 100)
    best, median = compare(lambda: parse_response(call, response), lambda: parse_plain(body),
                           number=number, rounds=rounds, clock=time.process_time)
    vs_json, _ = compare(lambda: parse_response(call, response), lambda: json.loads(body),
                         number=number, rounds=rounds)
    figures = {"parse": best, "parse_median": median, "vs_json": vs_json}
    # The same plain models with an empty model_post_init: what pydantic's public hook costs
    # alone, and how the SDK's parse compares with models that pay it too.
    figures["hook"], _ = compare(lambda: parse_hooked(body), lambda: parse_plain(body),
                                 number=number, rounds=rounds, clock=time.process_time)
    figures["vs_hooked"], _ = compare(lambda: parse_response(call, response), lambda: parse_hooked(body),
                                      number=number, rounds=rounds, clock=time.process_time)
    # The service sends one author form; the page above carries both. A flat page makes
    # the SDK build an Author per post (API.md), which plain models of it do not hold.
    nested, flat = page_bytes(100, "nested"), page_bytes(100, "flat")
    nested_answer, flat_answer = httpx.Response(200, content=nested), httpx.Response(200, content=flat)
    figures["nested"], _ = compare(lambda: parse_response(call, nested_answer), lambda: parse_plain(nested),
                                   number=number, rounds=rounds)
    figures["flat"], _ = compare(lambda: parse_response(call, flat_answer), lambda: parse_plain(flat),
                                 number=number, rounds=rounds)
    figures["flat_with_authors"], _ = compare(lambda: parse_response(call, flat_answer),
                                              lambda: parse_plain_with_authors(flat), number=number, rounds=rounds)
    return figures


# --------------------------------------------------------------------------- webhooks


def bench_signature(quick: bool) -> None:
    from sports_posts.webhooks import sign_payload, verify_signature

    secret = "whsec_benchmark_secret"
    key = secret.encode()
    for size in (1024, 64 * 1024):
        payload = os.urandom(size)
        signature = sign_payload(payload, secret)
        expected = bytes.fromhex(signature[len("sha256="):])

        def baseline(payload: bytes = payload, expected: bytes = expected) -> bool:
            return hmac.compare_digest(hmac.new(key, payload, hashlib.sha256).digest(), expected)

        def ours(payload: bytes = payload, signature: str = signature) -> None:
            verify_signature(payload, signature, secret)

        number = 2000 if size == 1024 else 200
        best, median = compare(ours, baseline, number=number, rounds=3 if quick else 41, clock=time.process_time)
        record(f"verify_signature {size // 1024} KiB vs hmac.new().digest() + compare_digest", best, "x",
               "<= 1.05", best <= 1.05, median_ratio=round(median, 3))


def bench_poller(quick: bool) -> None:
    from benchmarks.poller import poller_calls, poller_memory

    calls = poller_calls(hours=2 if quick else 12)  # the whole day: tests/polling/test_poller_call_counts.py
    record("poller calls vs the minimum to deliver every post of the scenario through this API "
           "(an oracle that knows the scenario)", calls["ratio_oracle"], "x", "<= 1.10",
           calls["ratio_oracle"] <= 1.10, **calls)
    record("poller calls vs the minimum of any poller that catches late posts (window re-read)",
           calls["ratio_windowed"], "x", "<= 1.10", calls["ratio_windowed"] <= 1.10)
    print(f"        (for reference: {calls['ratio_naive']:.3f}x a page per 100 new posts, which would need "
          "an API that returns only the posts new to this client)")
    cycles, warmup = (300, 50) if quick else (10_000, 1_000)
    memory = poller_memory(cycles, warmup)
    growth_kib = memory["growth_bytes"] / 1024
    record(f"poller memory growth, cycle {warmup} -> {cycles}", growth_kib, "KiB", "< 1024", growth_kib < 1024,
           **memory)


def bench_imports(quick: bool) -> None:
    from benchmarks.imports import best_of

    best = best_of(1 if quick else 15)
    base = best["baseline"]
    note("import httpx, pydantic", f"{base / 1000:.1f} ms", microseconds=base)
    targets = {"client": 1.2, "package": 1.2, "signature": 0.8}
    for name, limit in targets.items():
        ratio = best[name] / base
        record(f"import time, {name}", ratio, "x import httpx, pydantic", f"<= {limit}x", ratio <= limit,
               microseconds=best[name], baseline_microseconds=base)


SECTIONS: dict[str, Callable[[bool], None]] = {
    "imports": bench_imports,
    "parse": bench_parse,
    "client": bench_client,
    "signature": bench_signature,
    "dedupe": lambda quick: dedupe.run(quick, sys.modules[__name__]),
    "poller": bench_poller,
    "sandbox": lambda quick: bench_sandbox(quick, record),
    "receiver": lambda quick: receiver.run(quick, sys.modules[__name__]),
    "fleet": lambda quick: __import__("benchmarks.fleet", fromlist=["bench_fleet"]).bench_fleet(quick, sys.modules[__name__]),
    "inbox_peers": lambda quick: inbox_peers.run(quick, sys.modules[__name__]),
}


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds: a smoke check, not figures")
    parser.add_argument("--only", action="append", choices=sorted(SECTIONS), help="run only these sections")
    parser.add_argument("--skip", action="append", choices=sorted(SECTIONS), default=[],
                        help="leave these sections out")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores, "
          f"{platform.platform()}", flush=True)
    for name, section in SECTIONS.items():
        if (args.only and name not in args.only) or name in args.skip:
            continue
        print(f"== {name}", flush=True)
        section(args.quick)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"python": platform.python_version(), "results": [asdict(r) for r in RESULTS], "info": INFO},
                      f, indent=2)
    missed = [r.name for r in RESULTS if not r.ok]
    print(f"{len(RESULTS) - len(missed)} of {len(RESULTS)} targets met", flush=True)
    # --quick checks that every benchmark runs; only a full run's figures judge the targets.
    return 1 if missed and not args.quick else 0


if __name__ == "__main__":
    sys.exit(main())
