"""The benchmark runner works on every supported Python: a stack the interpreter cannot
install is reported as not measured, and the server CPU reading behind the steadier figures
reads this process's own."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import pytest

from benchmarks import run
from benchmarks.sandbox_load import server_cpu


def test_httpx_is_measured_everywhere() -> None:
    assert run.stack_missing("httpx") is None


@pytest.mark.skipif(sys.version_info >= (3, 10), reason="httpx2 installs on Python 3.10 and later")
def test_httpx2_on_the_oldest_python_is_reported_as_needing_3_10() -> None:
    assert run.stack_missing("httpx2") == "not installed (httpx2 needs Python 3.10+)"


def test_a_stack_that_is_not_installed_names_the_extra() -> None:
    assert run.stack_missing("no_such_stack_xyz") == "not installed (pip install 'sports-posts[no_such_stack_xyz]')"


def test_the_client_section_skips_a_missing_stack_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    measured: list[str] = []

    def in_fresh_processes(call: str, quick: bool) -> dict[str, Any]:
        measured.append(call)
        return {"sync": 1.0, "sync_median": 1.0, "vs_json": 1.2, "async": 1.0, "async_median": 1.0,
                "sync_cpu": 1.0, "async_cpu": 1.0, "async_vs_gathered": 0.97,
                "processes": [{"sync": 1.0, "async": 1.0}]}

    monkeypatch.setattr(run, "stack_missing", lambda stack: "not installed (test)" if stack == "httpx2" else None)
    # the stacks are this test's subject; making clients (a CA bundle each) is not
    monkeypatch.setattr(run, "bench_client_construction", lambda quick: None)
    monkeypatch.setattr(run, "in_fresh_processes", in_fresh_processes)
    monkeypatch.setattr(run, "RESULTS", [])
    monkeypatch.setattr(run, "INFO", [])
    run.bench_client(quick=True)
    assert len(measured) == 1 and "'httpx'" in measured[0]
    assert {"name": "fetch + parse vs httpx2", "stack": "httpx2", "skipped": "not installed (test)"} in run.INFO
    gathered = "async: 50 concurrent pages vs httpx.AsyncClient answers gathered first, then parsed"
    assert {"name": gathered, "ratio": 0.97} in run.INFO


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")
def test_server_cpu_reads_a_process_cpu_time() -> None:
    before = server_cpu(os.getpid())
    assert before is not None
    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass
    after = server_cpu(os.getpid())
    assert after is not None and after >= before


def test_server_cpu_of_no_process_is_none() -> None:
    assert server_cpu(2**22 + 12345) is None


def test_skip_leaves_a_section_out_and_only_keeps_the_rest(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    ran: list[str] = []
    monkeypatch.setattr(run, "SECTIONS", {name: (lambda quick, name=name: ran.append(name))
                                          for name in run.SECTIONS})
    assert run.main(["--quick", "--only", "parse", "--only", "poller", "--skip", "poller"]) == 0
    assert ran == ["parse"]
    ran.clear()
    assert run.main(["--quick", "--skip", "fleet", "--skip", "inbox_peers"]) == 0
    assert "fleet" not in ran and "inbox_peers" not in ran and "parse" in ran and len(ran) == len(run.SECTIONS) - 2
