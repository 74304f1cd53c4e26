"""One signal policy for every command, checked on real processes with real signals
(docs/cli.md "Signals, pipes and exit status"): Ctrl-C ends a consumer with 130 and one
line; a server stops gracefully on SIGINT and SIGTERM, finishing what is in flight, and
exits 0; a closed stdout ends every command quietly; every failure names what failed."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Optional

import httpx
import pytest

from sports_posts import SportsPosts
from sports_posts.webhooks import build_test_request, sample_payload

from ..zygote import suite

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SECRET = "whsec_test_cli_signals"
WAIT = 60.0  # a bound on each wait for a line, never a sleep
NOISE = ("Traceback", "Broken pipe", "BrokenPipeError", "Exception ignored", "KeyboardInterrupt")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPORTS_POSTS_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    env.update(extra)
    return env


class Proc:
    """``sports-posts ARGS`` as a process (a fork of the suite's zygote, tests/zygote.py),
    its stdout and stderr read line by line."""

    def __init__(self, *args: str, stdout_closed: bool = False, **env: str) -> None:
        self.proc = suite().spawn([sys.executable, "-m", "sports_posts.cli", *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(**env))
        assert self.proc.stdout is not None and self.proc.stderr is not None
        if stdout_closed:  # `| head -0`: the reader is gone before the first write
            self.proc.stdout.close()
            self.out: queue.Queue[Optional[str]] = queue.Queue()
            self.out.put(None)
        else:
            self.out = self._reader(self.proc.stdout)
        self.err = self._reader(self.proc.stderr)
        self.err_lines: list[str] = []
        self.out_lines: list[str] = []

    @staticmethod
    def _reader(stream: IO[bytes]) -> queue.Queue[Optional[str]]:
        lines: queue.Queue[Optional[str]] = queue.Queue()

        def pump() -> None:
            for raw in iter(stream.readline, b""):
                lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        return lines

    def _until(self, lines: queue.Queue[Optional[str]], seen: list[str], pattern: str) -> str:
        while True:
            line = lines.get(timeout=WAIT)
            if line is None:
                raise AssertionError(f"ended before a line matching {pattern!r}: {seen}")
            seen.append(line)
            if re.search(pattern, line):
                return line

    def stderr_line(self, pattern: str) -> str:
        return self._until(self.err, self.err_lines, pattern)

    def stdout_line(self, pattern: str = ".") -> str:
        return self._until(self.out, self.out_lines, pattern)

    def send(self, sig: int) -> None:
        os.kill(self.proc.pid, sig)

    def finish(self) -> tuple[int, list[str]]:
        """The exit status and every stderr line."""
        status = self.proc.wait(timeout=WAIT)
        while (line := self.err.get(timeout=WAIT)) is not None:
            self.err_lines.append(line)
        return status, self.err_lines

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for proc in started:
        proc.kill()


@pytest.fixture(autouse=True)
def ctrl_c_as_in_a_terminal() -> Iterator[None]:
    """The commands get SIGINT's default disposition, as a shell gives a foreground command.

    A runner that starts the tests in the background (``cmd &`` in a script) hands them
    SIGINT ignored, which every child inherits through exec, and a Python started so rightly
    keeps ignoring Ctrl-C. A handler of this process's own is reset to the default in a child.
    """
    before = signal.getsignal(signal.SIGINT)
    if before is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if before is signal.SIG_IGN:
            signal.signal(signal.SIGINT, before)


def start(procs: list[Proc], *args: str, **kwargs: object) -> Proc:
    proc = Proc(*args, **kwargs)  # type: ignore[arg-type]
    procs.append(proc)
    return proc


def quiet(lines: list[str]) -> bool:
    return not any(word in line for line in lines for word in NOISE)


def an_hour_ago() -> str:
    """A ``--since`` whose first cycle has posts: the sandbox's seeded history is 72 hours."""
    return (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- a consumer: Ctrl-C is 130 and one line; SIGTERM a clean stop ------------------------------


def test_ctrl_c_ends_poll_with_130_and_one_interrupted_line(procs: list[Proc]) -> None:
    poll = start(procs, "poll", "--sandbox", "--json", "--interval", "10", "--since", an_hour_ago())
    poll.stdout_line()  # the first batch: the poller now waits for its next cycle
    poll.send(signal.SIGINT)
    status, err = poll.finish()
    assert status == 130
    said = [line for line in err if "interrupted" in line]
    assert len(said) == 1 and re.fullmatch(r"sports-posts: interrupted \(\d+ batch(es)?, \d+ calls?\)", said[0]), err
    assert err[-1] == said[0] and quiet(err)


def test_sigterm_stops_poll_cleanly_with_0(procs: list[Proc]) -> None:
    poll = start(procs, "poll", "--sandbox", "--json", "--interval", "10", "--since", an_hour_ago())
    poll.stdout_line()
    poll.send(signal.SIGTERM)
    status, err = poll.finish()
    assert status == 0 and re.fullmatch(r"1 batch, \d+ calls?", err[-1]) and quiet(err)


def test_ctrl_c_while_a_one_shot_command_runs_is_130_and_one_line(procs: list[Proc]) -> None:
    # `posts` prints as it pages; interrupted once its first line is out
    posts = start(procs, "posts", "--sandbox", "--json", "--limit", "1000", "--page-size", "1",
                  "--max-calls", "1000")
    posts.stdout_line()
    posts.send(signal.SIGINT)
    status, err = posts.finish()
    assert status == 130 and err[-1] == "sports-posts: interrupted" and quiet(err)


# -- servers: SIGINT and SIGTERM stop gracefully, 0 after a clean stop --------------------------


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_sandbox_stops_gracefully_on_either_signal(procs: list[Proc], sig: int) -> None:
    port = free_port()
    sandbox = start(procs, "sandbox", "--port", str(port), "--posts-per-minute", "0")
    base_url = sandbox.stdout_line("^base URL").split()[-1]
    api_key = sandbox.stdout_line("^API key").split()[-1]
    with SportsPosts(api_key=api_key, base_url=base_url, max_retries=0) as client:
        assert client.account.information().company.plan == "paid"
    sandbox.send(sig)
    status, err = sandbox.finish()
    name = signal.Signals(sig).name
    assert status == 0, err
    assert f"sports-posts: {name}: stopping (no new connections; requests in flight get up to 10 s)" in err
    assert err[-1] == "sports-posts: stopped" and quiet(err)
    with pytest.raises(httpx.ConnectError):  # stopped accepting
        httpx.get(base_url + "/account/information", timeout=5)


def test_sandbox_plan_free_rehearses_the_free_plan(procs: list[Proc]) -> None:
    sandbox = start(procs, "sandbox", "--port", "0", "--plan", "free", "--posts-per-minute", "0")
    base_url = sandbox.stdout_line("^base URL").split()[-1]
    api_key = sandbox.stdout_line("^API key").split()[-1]
    assert "free plan: 200 calls a month" in sandbox.stderr_line("^serving")
    assert api_key.startswith("sp_sandbox_free_")
    with SportsPosts(api_key=api_key, base_url=base_url, max_retries=0) as client:
        assert client.account.information().company.plan == "free"
    sandbox.send(signal.SIGTERM)
    assert sandbox.finish()[0] == 0


def test_sandbox_on_a_port_in_use_names_the_port(procs: list[Proc]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, err = start(procs, "sandbox", "--port", str(port)).finish()
    assert status == 1 and len(err) == 1, err
    assert err[0].startswith(f"sports-posts: error: SportsPostsError: cannot listen on 127.0.0.1:{port}: "
                             "Address already in use")


def _listen(procs: list[Proc], *extra: str) -> tuple[Proc, int]:
    listen = start(procs, "webhooks", "listen", "--port", "0", *extra, SPORTS_POSTS_WEBHOOK_SECRET=SECRET)
    line = listen.stderr_line("^listening on")
    port = int(re.search(r"127\.0\.0\.1:(\d+)/", line).group(1))  # type: ignore[union-attr]
    return listen, port


def _raw_delivery(port: int, post_id: str) -> tuple[socket.socket, bytes]:
    """A signed delivery sent but for its last byte: in flight until that byte comes."""
    request = build_test_request(sample_payload("breaking_news", id=post_id), SECRET)
    head = ["POST /webhooks HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(request.body)}",
            "Content-Type: application/json", "Connection: close"]
    head += [f"{k}: {v}" for k, v in request.headers.items() if k.lower() not in ("content-length", "content-type")]
    conn = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + request.body[:-1])
    return conn, request.body[-1:]


# The server's first line is written to a stream that sends SIGTERM to its own process on
# that write: the signal a supervisor sends the moment it reads the address, at the worst time.
SIGTERM_ON_FIRST_LINE = """
import io, os, signal, sys
from sports_posts.cli import main

class Tripwire(io.StringIO):
    tripped = False

    def write(self, text):
        if not self.tripped:
            self.tripped = True
            os.kill(os.getpid(), signal.SIGTERM)
        return super().write(text)

stream = Tripwire()
args = sys.argv[1:]
status = main(args, out=stream if args[0] == "sandbox" else sys.stdout,
              err=sys.stderr if args[0] == "sandbox" else stream)
sys.stderr.write(stream.getvalue())
sys.exit(status)
"""


@pytest.mark.parametrize("command", [("sandbox", "--posts-per-minute", "0"), ("webhooks", "listen")])
def test_a_sigterm_while_a_server_announces_itself_is_a_graceful_stop(command: tuple[str, ...]) -> None:
    done = suite().run([sys.executable, "-c", SIGTERM_ON_FIRST_LINE, *command, "--port", str(free_port())],
                       timeout=WAIT, env=_env(SPORTS_POSTS_WEBHOOK_SECRET=SECRET))
    assert done.returncode == 0, done.stderr  # not -15: the handlers were in place
    assert "sports-posts: SIGTERM: stopping (no new connections; requests in flight get up to 10 s)" in done.stderr
    assert "sports-posts: stopped" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_listen_finishes_a_delivery_in_flight_then_exits_0(procs: list[Proc], sig: int) -> None:
    listen, port = _listen(procs)
    conn, last = _raw_delivery(port, "in-flight-1")
    with httpx.Client() as probe:  # the request has reached the app before the signal
        assert probe.get(f"http://127.0.0.1:{port}/").status_code in (400, 401, 405)
    listen.send(sig)
    listen.stderr_line(f"sports-posts: {signal.Signals(sig).name}: stopping")
    with pytest.raises(OSError):  # no new connections once stopping
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    conn.sendall(last)
    answer = conn.recv(65536).decode()
    conn.close()
    assert answer.startswith("HTTP/1.1 20"), answer  # 2xx: acknowledged
    assert "in-flight-1" in listen.stdout_line("in-flight-1")  # handled and printed, not cut
    status, err = listen.finish()
    assert status == 0 and err[-1] == "sports-posts: stopped" and quiet(err), err


# -- closed pipes: quiet, for every command ------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("posts", "--sandbox", "--json", "--limit", "5"),
        ("teams", "--sandbox", "NBA"),
        ("account", "--sandbox"),
        ("account", "--sandbox", "--x-ids"),
        ("compliance", "sweep", "--sandbox"),
        ("poll", "--sandbox", "--json", "--max-batches", "1", "--since", an_hour_ago()),
        ("demo",),
        ("sandbox", "--port", "0"),
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_a_closed_stdout_ends_every_command_quietly(procs: list[Proc], args: tuple[str, ...]) -> None:
    status, err = start(procs, *args, stdout_closed=True).finish()
    assert status == 141, err
    assert quiet(err), err
    assert not any(line.startswith("sports-posts: error") for line in err), err


def test_webhooks_verify_on_a_closed_stdout_is_quiet(procs: list[Proc], tmp_path: Path) -> None:
    request = build_test_request(sample_payload("breaking_news"), SECRET)
    body = tmp_path / "body.json"
    body.write_bytes(request.body)
    signature = next(v for k, v in request.headers.items() if k.lower() == "x-service-signature")
    status, err = start(procs, "webhooks", "verify", str(body), "--signature", signature, stdout_closed=True,
                        SPORTS_POSTS_WEBHOOK_SECRET=SECRET).finish()
    assert status == 141 and quiet(err), err


def test_listen_whose_reader_left_ends_quietly_and_does_not_acknowledge(procs: list[Proc]) -> None:
    listen = start(procs, "webhooks", "listen", "--port", "0", stdout_closed=True, SPORTS_POSTS_WEBHOOK_SECRET=SECRET)
    port = int(re.search(r":(\d+)/", listen.stderr_line("^listening on")).group(1))  # type: ignore[union-attr]
    request = build_test_request(sample_payload("breaking_news", id="unprinted"), SECRET)
    answer = httpx.post(f"http://127.0.0.1:{port}/", content=request.body, headers=request.headers, timeout=WAIT)
    assert answer.status_code >= 500  # not printed, so not acknowledged: the service delivers it again
    status, err = listen.finish()
    assert status == 141 and quiet(err), err


# -- every failure names what failed ------------------------------------------------------------


def test_compliance_command_failures_name_the_tool_and_its_exit_status(procs: list[Proc]) -> None:
    status, err = start(procs, "compliance", "sweep", "--sandbox", "--command", "false").finish()
    assert status == 1 and quiet(err), err
    assert re.search(r"--command 'false' exited with status 1, for id '[^']+'; the sweep stopped there\. "
                     r"0 ids handled before it, not saved \(no --checkpoint\)", err[-1]), err
    assert "are saved" not in err[-1]

    status, err = start(procs, "compliance", "sweep", "--sandbox", "--command", "nosuchtool-sp --flag").finish()
    assert status == 1 and quiet(err), err
    assert err[-1] == ("sports-posts: error: SportsPostsError: --command: 'nosuchtool-sp' is not a program on "
                       "PATH (nor an executable path)")
    assert not any("using an embedded sandbox" in line for line in err)  # refused before any call


def test_compliance_command_killed_by_a_signal_says_which(procs: list[Proc], tmp_path: Path) -> None:
    script = tmp_path / "die.sh"
    script.write_text("#!/bin/sh\nkill -KILL $$\n")
    script.chmod(0o755)
    status, err = start(procs, "compliance", "sweep", "--sandbox", "--command", str(script)).finish()
    assert status == 1 and "exited with signal SIGKILL" in err[-1], err


def test_json_summary_of_a_sweep_still_parses(procs: list[Proc]) -> None:
    proc = start(procs, "compliance", "sweep", "--sandbox", "--json")
    summary = json.loads(proc.stdout_line())
    assert set(summary) == {"as_of", "deleted", "already_handled"}
    status, err = proc.finish()
    assert status == 0 and re.search(r"\d+ ids? deleted", err[-1]), err


def test_a_refused_value_says_how_to_send_it_anyway_from_the_command_line(procs: list[Proc]) -> None:
    for flags, says in ((("--teams", "1", "--id-type", "servce"), "--id-type: 'servce' is not an id_type"),
                        (("--user-location", "ZZ"), "--user-location: 'ZZ' is not an assigned")):
        status, err = start(procs, "posts", "--sandbox", *flags).finish()
        assert status == 1 and says in err[-1] and err[-1].endswith("add --unchecked."), err
        assert "Unchecked(" not in err[-1]
