"""Run a piece of a test in a forked child (``os.fork``, or multiprocessing's fork start
method) and get its JSON-able result back; every wait is bounded, and a child that raised,
hung or died fails the test with what it said."""

from __future__ import annotations

import json
import multiprocessing
import os
import select
import warnings
from typing import Any, Callable

Work = Callable[[], dict[str, Any]]

CHILD_BOUND = 60.0
"""How long the parent waits for a child's answer at most (a hung child fails the test)."""


def with_os_fork(work: Work) -> dict[str, Any]:
    """``work()`` in a child of ``os.fork``; its result (or error) comes back as JSON."""
    read, write = os.pipe()
    with warnings.catch_warnings():  # "multi-threaded, fork() may deadlock": what is tested
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            try:
                result = work()
            except BaseException as exc:
                result, code = {"error": repr(exc)}, 1
            os.write(write, json.dumps(result).encode())
        finally:
            os._exit(code)
    os.close(write)
    try:
        chunks = []
        while True:
            ready, _, _ = select.select([read], [], [], CHILD_BOUND)
            assert ready, "the child did not answer"
            chunk = os.read(read, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read)
        _, status = os.waitpid(pid, 0)
    answer: dict[str, Any] = json.loads(b"".join(chunks) or b"{}")
    assert "error" not in answer, answer
    assert os.waitstatus_to_exitcode(status) == 0, answer
    return answer


def _mp_child(work: Work, conn: Any) -> None:
    try:
        conn.send(work())
    except BaseException as exc:
        conn.send({"error": repr(exc)})


def with_multiprocessing(work: Work) -> dict[str, Any]:
    """``work()`` in a child of multiprocessing's fork start method (nothing is pickled)."""
    context = multiprocessing.get_context("fork")
    parent_end, child_end = context.Pipe(duplex=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        process = context.Process(target=_mp_child, args=(work, child_end))
        process.start()
    child_end.close()
    try:
        assert parent_end.poll(CHILD_BOUND), "the child did not answer"
        result: dict[str, Any] = parent_end.recv()
    finally:
        process.join(CHILD_BOUND)
        if process.is_alive():
            process.kill()
            process.join()
    assert "error" not in result, result
    assert process.exitcode == 0
    return result
