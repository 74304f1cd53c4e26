"""The webhook sender's 10 s are for the whole answer: a receiver trickling a 2xx has failed."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Callable, Optional

import pytest

from sports_posts.sandbox import Sandbox
from sports_posts.sandbox._deadline import AnswerError, DeadlineExceeded, post_within

SECRET = "whsec_test_deadline"


class Trickler:
    """A raw loopback HTTP server that reads a request, then sends its answer one byte at a time.

    ``before_byte`` runs before each byte (a test advances a fake clock there); ``gap`` is the
    real pause between bytes. It stops when the client hangs up.
    """

    def __init__(self, answer: bytes, *, gap: float = 0.0,
                 before_byte: Optional[Callable[[], None]] = None) -> None:
        self.answer = answer
        self.gap = gap
        self.before_byte = before_byte or (lambda: None)
        self.requests = 0
        self.request_lines: list[bytes] = []
        self.stopped = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                self.requests += 1
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(4096)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        self.request_lines.append(head.split(b"\r\n")[0])
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        while len(body) < length:
            body += conn.recv(4096)
        for i in range(len(self.answer)):
            if self.stopped.wait(self.gap) if self.gap else self.stopped.is_set():
                return
            self.before_byte()
            try:
                conn.sendall(self.answer[i:i + 1])
            except OSError:  # the sender gave up: the point of the test
                return

    def close(self) -> None:
        self.stopped.set()
        self.sock.close()
        self.thread.join(5)


OK_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 40\r\n\r\n" + b"x" * 40


class FakeMonotonic:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.now += seconds


@pytest.fixture
def fake() -> FakeMonotonic:
    return FakeMonotonic()


@pytest.fixture
def trickle(fake: FakeMonotonic) -> Iterator[Trickler]:
    # One second of (fake) time per byte: the 2xx takes over a hundred seconds to arrive, each
    # byte well inside any per-read timeout.
    server = Trickler(OK_ANSWER, before_byte=lambda: fake.advance(1.0))
    yield server
    server.close()


def test_a_trickled_2xx_is_a_timeout_and_is_retried(trickle: Trickler, fake: FakeMonotonic) -> None:
    with Sandbox(seed=4, clock="manual", posts=50) as sb:
        assert sb.sender.timeout == 10.0  # the service's deadline, unscaled
        sb.sender.monotonic = fake
        sb.subscribe(trickle.url, SECRET)
        sb.send_breaking_news("NFL")
        sb.wait_for_deliveries(timeout=30)
        first = sb.deliveries[0]
        assert first.status_code is None and first.error is not None
        assert "no complete answer within 10 s" in first.error
        assert first.outcome == "retry_scheduled" and sb.delivery_jobs[0].state == "pending"
        # The retry falls due a minute later (sandbox time) and is a new attempt.
        sb.advance(60)
        sb.wait_for_deliveries(timeout=30)
        assert [a.attempt for a in sb.deliveries] == [1, 2]
        assert sb.deliveries[1].delivery_id != first.delivery_id
    assert trickle.requests == 2


def test_a_real_trickle_fails_at_the_deadline_not_at_its_end() -> None:
    # Real time: a byte every 50 ms is inside any per-read timeout, yet the answer needs seconds.
    server = Trickler(OK_ANSWER, gap=0.05)
    try:
        with pytest.raises(DeadlineExceeded):
            post_within(server.url, b"{}", {"Content-Type": "application/json"}, 0.3)
    finally:
        server.close()


def test_a_prompt_answer_counts_whatever_its_framing(fake: FakeMonotonic) -> None:
    answers = {
        b"HTTP/1.1 204 No Content\r\n\r\n": 204,
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\nok": 202,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nok\r\n0\r\nT: 1\r\n\r\n": 200,
        b"HTTP/1.0 500 Oops\r\n\r\nuntil the close": 500,
    }
    for answer, status in answers.items():
        server = Trickler(answer)
        try:
            assert post_within(server.url, b"{}", {}, 10.0, monotonic=fake) == status
        finally:
            server.close()


@pytest.mark.parametrize(
    "answer",
    [b"SMTP ready\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: nine\r\n\r\n",
     b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
     b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"],
)
def test_a_broken_answer_is_an_answer_error(answer: bytes, fake: FakeMonotonic) -> None:
    server = Trickler(answer)
    try:
        with pytest.raises(AnswerError) as info:
            post_within(server.url, b"{}", {}, 10.0, monotonic=fake)
        assert not isinstance(info.value, DeadlineExceeded)
    finally:
        server.close()


def test_the_request_target_is_percent_encoded(fake: FakeMonotonic) -> None:
    server = Trickler(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    try:
        url = server.url.replace("/hook", "/hooks/caf\u00e9 bar?team=a b")
        assert post_within(url, b"{}", {}, 10.0, monotonic=fake) == 200
        assert server.request_lines == [b"POST /hooks/caf%C3%A9%20bar?team=a%20b HTTP/1.1"]
    finally:
        server.close()
