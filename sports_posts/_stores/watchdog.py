"""The watchdog of PostgreSQL calls: it ends a call still waiting at its bound, for a server
or pooler that cannot answer at all (a frozen machine's kernel still acknowledges, so TCP
timeouts never fire). A call's cancel request goes first (PgBouncer forwards it), read until
the other side closes its socket, however long that takes, in a thread of its own: closing
it early makes PgBouncer 1.18 abort (its issue 801). The call itself ends at its bound by a
shutdown of its query socket; its connection is then discarded, never lent again.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import select
import socket
import threading
import time
from typing import Any, Callable, Optional

__all__ = ["CANCEL_SHARE", "CANCEL_TIME", "Watched"]

# Within a call's bound: the server is told to stop at 90% of it (postgres.SERVER_SHARE),
# the watchdog sends its cancel request at CANCEL_SHARE of it (or CANCEL_TIME before the
# bound, if earlier: a cancel request crosses a pooler and a busy machine too) and drops
# the socket at the bound itself.
CANCEL_SHARE = 0.95
CANCEL_TIME = 0.25


def _cancel_grace(bound: float) -> float:
    """Seconds before the bound at which a call's cancel request is sent."""
    return max(bound * (1 - CANCEL_SHARE), min(CANCEL_TIME, bound / 2))


_MIN_TICK = 0.005  # the watchdog's shortest look interval: a tiny bound never makes it spin


class _Watchdog:
    """One daemon thread that ends a call still waiting at its deadline: it sends the
    statement's cancel request, then shuts down the socket under libpq, which then reports
    the connection closed instead of waiting on a frozen server for ever (the kernel of a
    stopped server still acknowledges, so TCP timeouts never fire).

    Arming takes no lock (a dict entry, atomic under the GIL); disarming and firing take one
    short lock, so that a call that disarmed in time is never cancelled, and one that was
    fired learns it (and then discards its connection). What the end of a call needs (a
    duplicate of its socket, its cancel request) is made while the call still holds its
    connection: the connection is never closed under the watchdog. The thread is woken only
    when it sleeps for want of work, or when a shorter bound than any before shows up; while
    calls run it looks at them every sixteenth of the shortest bound seen.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._lock = threading.Lock()
        self._armed: dict[int, tuple[float, Any, float]] = {}  # ticket -> (deadline, connection, grace)
        self._fired: set[int] = set()
        self._tickets = itertools.count(1)
        self._thread: Optional[threading.Thread] = None
        self._pid = 0
        self._sleeping = False
        self._tick = 1.0

    def arm(self, seconds: float, conn: Any, grace: float) -> int:
        """End the call on ``conn`` in ``seconds`` (its cancel, then ``grace`` seconds later
        at most its socket) unless disarmed first."""
        if self._pid != os.getpid():  # first use, or a forked child: no thread here yet
            self._start()
        ticket = next(self._tickets)
        self._armed[ticket] = (time.monotonic() + seconds, conn, grace)
        if seconds / 16 < self._tick and self._tick > _MIN_TICK:
            self._tick = max(_MIN_TICK, seconds / 16)
            self._wake()
        elif self._sleeping:
            self._wake()
        return ticket

    def disarm(self, ticket: int) -> bool:
        """Whether the call's deadline passed (its end was sent: discard its connection)."""
        with self._lock:
            self._armed.pop(ticket, None)
            if ticket in self._fired:
                self._fired.discard(ticket)
                return True
        return False

    def _start(self) -> None:
        with self._cond:
            if self._pid != os.getpid():
                self._lock = threading.Lock()  # a forked child: another thread may have held it
                self._armed, self._fired, self._sleeping = {}, set(), False
                thread = threading.Thread(target=self._run, daemon=True, name="sports-posts-pg-watchdog")
                thread.start()
                self._thread, self._pid = thread, os.getpid()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify()

    def _run(self) -> None:
        while True:
            try:
                self._look()
            except Exception:  # never an unhandled exception in this thread; look again
                time.sleep(self._tick)

    def _look(self) -> None:
        now = time.monotonic()
        earliest: Optional[float] = None
        for ticket, (deadline, conn, grace) in self._armed.copy().items():
            if ticket in self._fired:
                continue
            if deadline <= now:
                self._fire(ticket, conn, grace)
            elif earliest is None or deadline < earliest:
                earliest = deadline
        with self._cond:
            if earliest is None:
                self._sleeping = True  # set before the look below: an arm after it wakes us
                if not any(t not in self._fired for t in self._armed.copy()):
                    self._cond.wait()
                self._sleeping = False
            else:
                self._cond.wait(max(0.0, min(earliest - now, self._tick)))

    def _fire(self, ticket: int, conn: Any, grace: float) -> None:
        with self._lock:
            if ticket not in self._armed:  # disarmed meanwhile: it finished in time
                return
            self._fired.add(ticket)
            # Made now, while the call holds its connection open (it cannot disarm, so cannot
            # close it, before this lock is released): never a closed connection's memory.
            end = _End(conn, grace, lambda: ticket in self._armed)
        # In its own thread: a frozen server or pooler blocks only that one.
        threading.Thread(target=end.run, daemon=True, name="sports-posts-pg-cancel").start()


_WATCHDOG = _Watchdog()


class _End:
    """How one call that overran is ended: its cancel request (through a pooler too), then,
    ``grace`` seconds later at most, its query socket shut down. The cancel request's socket
    is read until the other side closes it, however long that takes (closing it first makes
    PgBouncer 1.18 abort: its issue 801); only this thread waits for that."""

    __slots__ = ("_cancel", "_deadline", "_fd", "_waiting")

    def __init__(self, conn: Any, grace: float, waiting: Callable[[], bool]) -> None:
        self._deadline = time.monotonic() + grace
        self._waiting = waiting
        self._fd = -1
        self._cancel: Any = None
        pgconn = conn.pgconn
        try:
            self._fd = os.dup(pgconn.socket)  # ours: valid after the call closes its connection
        except Exception:  # no socket any more: nothing left to end
            return
        try:
            self._cancel = pgconn.cancel_conn()  # libpq 17+: a cancel that never blocks the GIL
        except Exception:
            try:
                self._cancel = pgconn.get_cancel()  # an older libpq: its blocking cancel
            except Exception:  # no cancel possible: the shutdown alone ends the call
                self._cancel = None

    def run(self) -> None:
        try:
            if self._fd < 0:
                return
            cancel = self._cancel
            if cancel is None:
                self._shutdown_at_deadline()
            elif hasattr(cancel, "poll"):
                self._poll(cancel)
            else:
                threading.Thread(target=_blocking_cancel, args=(cancel,), daemon=True,
                                 name="sports-posts-pg-cancel").start()
                self._shutdown_at_deadline()
        except Exception:  # never an unhandled exception in this thread
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(self._fd)

    def _shutdown_at_deadline(self) -> None:
        left = self._deadline - time.monotonic()
        if left > 0:
            time.sleep(left)  # this thread's own wait for the call's bound, no one else's
        if self._waiting():
            _shutdown(self._fd)

    def _poll(self, cancel: Any) -> None:
        from psycopg import pq

        shut = False
        try:
            cancel.start()
            status = pq.PollingStatus.WRITING
            while status not in (pq.PollingStatus.OK, pq.PollingStatus.FAILED):
                if not shut:
                    left = self._deadline - time.monotonic()
                    if left <= 0:  # the call's bound: its query socket alone is shut
                        if self._waiting():
                            _shutdown(self._fd)
                        shut = True
                        continue
                timeout = None if shut else left
                fd = cancel.socket
                if status == pq.PollingStatus.READING:
                    select.select([fd], [], [], timeout)
                else:
                    select.select([], [fd], [], timeout)
                status = cancel.poll()
        except Exception:  # the pooler or the server closed or refused it: it is over
            pass
        try:
            if not shut:
                self._shutdown_at_deadline()
        finally:
            cancel.finish()  # closed by the other side by now (or never opened)


def _blocking_cancel(cancel: Any) -> None:
    """libpq's blocking cancel: it returns when the other side closed the socket."""
    with contextlib.suppress(Exception):
        cancel.cancel()


class Watched:
    """One call's statements under the watchdog, for the sync and the async call: armed on
    entry, always disarmed on exit; a driver error once the watchdog ended the call becomes
    the store's "gave no answer" error, and ``fired`` tells the call to discard its
    connection."""

    __slots__ = ("_bound", "_conn", "_store", "_ticket", "fired")

    def __init__(self, store: Any, conn: Any, bound: float) -> None:
        self._store, self._conn, self._bound, self._ticket = store, conn, bound, 0
        self.fired = False

    def __enter__(self) -> None:
        grace = _cancel_grace(self._bound)
        self._ticket = _WATCHDOG.arm(self._bound - grace, self._conn, grace)

    def __exit__(self, kind: Any, exc: Optional[BaseException], tb: Any) -> None:
        self.fired = _WATCHDOG.disarm(self._ticket)
        if self.fired and isinstance(exc, self._store._errors):
            raise self._store._gave_up(self._bound) from None


def _shutdown(fd: int) -> None:
    """End a connection's socket under libpq: its wait returns, the connection is broken."""
    try:
        sock = socket.socket(fileno=os.dup(fd))
        try:
            sock.shutdown(socket.SHUT_RDWR)
        finally:
            sock.close()
    except OSError:
        pass  # the connection closed meanwhile: nothing left to end
