"""Run as ``python -m tests.concurrency.forking MODE`` (``SP_BASE_URL``, ``SP_API_KEY``): a
``SportsPosts`` makes a call, then the process forks (``os.fork`` four times, or a
``multiprocessing`` pool of four on the fork start method) and parent and children make 150
calls in all, ``max_retries=0``. Prints one JSON object: the calls made and what went wrong.

MODE ``given``: a client on an ``http_client`` of the caller's, used before one fork; prints
what the child's calls met (its own client, a ``with_options`` copy, a client whose
``http_client`` was first used in the child), then the parent's."""

from __future__ import annotations

import json
import multiprocessing
import os
import sys

import sports_posts as sp
from tests.concurrency.pages import ask, wrong

CALLS = 150
PER_PROCESS = 30

client = sp.SportsPosts(api_key=os.environ["SP_API_KEY"], base_url=os.environ["SP_BASE_URL"], max_retries=0,
                        timeout=15)


copy = client.with_options(timeout=14)  # shares the client's pool: one per process too


def call(n: int) -> str:
    params = ask(n)
    try:
        return wrong(params, (client if n % 2 else copy).posts.list(**params))
    except sp.SportsPostsError as exc:
        return f"{type(exc).__name__}: {exc}"


def with_os_fork() -> list[str]:
    children = []
    for k in range(1, 5):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # a child: its 30 calls, then what went wrong, through the pipe
            os.close(read)
            failures = [f for f in (call(k * PER_PROCESS + i) for i in range(PER_PROCESS)) if f]
            with os.fdopen(write, "w") as out:
                json.dump(failures, out)
            os._exit(0)
        os.close(write)
        children.append((pid, read))
    failures = [f for f in (call(i) for i in range(PER_PROCESS)) if f]  # the parent's, meanwhile
    for pid, read in children:
        with os.fdopen(read) as got:
            text = got.read()
        _, status = os.waitpid(pid, 0)
        failures += json.loads(text) if text else [f"child {pid} died ({status})"]
    return failures


def with_multiprocessing() -> list[str]:
    with multiprocessing.get_context("fork").Pool(4) as pool:
        pending = pool.map_async(call, range(PER_PROCESS, CALLS), chunksize=5)
        failures = [f for f in (call(i) for i in range(PER_PROCESS)) if f]
        failures += [f for f in pending.get(timeout=120) if f]
    return failures


def given() -> None:
    import httpx

    def attempt(which: sp.SportsPosts) -> str:
        try:
            which.account.x_ids()
            return "answered"
        except sp.SportsPostsError as exc:
            return f"{type(exc).__name__}: {exc}"

    mine = sp.SportsPosts(api_key=client._config.api_key, base_url=client.base_url, http_client=httpx.Client(),
                          max_retries=0)
    unused = sp.SportsPosts(api_key=client._config.api_key, base_url=client.base_url, http_client=httpx.Client())
    mine.account.x_ids()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        with os.fdopen(write, "w") as out:
            json.dump([attempt(mine), attempt(mine.with_options(max_retries=1)), attempt(unused)], out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as got:
        child = json.loads(got.read())
    os.waitpid(pid, 0)
    print(json.dumps({"child": child, "parent": attempt(mine)}))


if __name__ == "__main__":
    if sys.argv[1] == "given":
        given()
        sys.exit(0)
    first = call(CALLS)  # the call before the fork: the pool holds a kept-alive connection
    failures = (with_os_fork if sys.argv[1] == "os.fork" else with_multiprocessing)()
    print(json.dumps({"before": first, "failures": failures}))
