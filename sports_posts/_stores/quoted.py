"""A store's one-statement call with its values quoted on the client by libpq itself, its
message sent and read on psycopg's libpq connection (``Connection.pgconn``, psycopg's public
``pq`` module) without a cursor, in the caller's own task or thread: the hot path of
``PostgresInbox.put`` and ``mark_done`` and of ``PostgresDedupeStore.claim``.

The statement is written once with ``%(name)s`` placeholders (``Template``); a call quotes
its values with the connection's own escaping (``PQescapeLiteral``, ``PQescapeByteaConn``:
the connection's encoding and ``standard_conforming_strings``), so the text is what a
``ClientCursor`` would send: one simple-query message (the call's ``SET LOCAL`` settings,
then the statement), nothing prepared on the server, as a transaction-pooling PgBouncer
needs. Reading the reply on the libpq connection directly spares psycopg's cursor, its
generators and its timer per wait; running it in the caller's task spares a task and a
shield per call. Those cost more client CPU than the statement itself. A sync call waits on
the connection's socket with ``select`` (``poll`` past ``select``'s descriptor limit), the
watchdog ending it at its bound as it ends a cursor's.
"""

from __future__ import annotations

import asyncio
import math
import re
import select
import time
from collections.abc import Generator, Mapping, Sequence
from typing import Any, Optional, Union, overload

from .._utils import Done, advance
from .pools import run_on
from .watchdog import Watched

__all__ = ["Quoted", "Template", "areply", "reply"]

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


class Template:
    """A statement with ``%(name)s`` placeholders, split once into its text and its names."""

    __slots__ = ("_names", "_texts", "sql")

    def __init__(self, sql: str) -> None:
        self.sql = sql
        """The statement as written: what a cursor runs (on a connection of the customer's)."""
        pieces = _PLACEHOLDER.split(sql)
        texts = pieces[0::2]
        if any("%" in text.replace("%%", "") for text in texts):
            raise ValueError(f"a % in a statement is a placeholder %(name)s or %%: {sql!r}")
        self._texts = [text.replace("%%", "%").encode() for text in texts]
        self._names: list[str] = pieces[1::2]

    def render(self, conn: Any, values: Mapping[str, Any], head: bytes = b"") -> bytes:
        """``head``, then the statement with each value quoted for ``conn`` (psycopg's)."""
        from psycopg import pq

        escaping = pq.Escaping(conn.pgconn)
        encoding = conn.info.encoding
        parts = [head]
        texts = self._texts
        for index, name in enumerate(self._names):
            parts.append(texts[index])
            parts.append(_quote(escaping, encoding, values[name]))
        parts.append(texts[-1])
        return b"".join(parts)


Statement = tuple[str, Optional[Any]]


class Quoted(Sequence[Statement]):
    """One statement of a ``Template`` and its values, whose rowcount alone is wanted: a
    sequence of one ``(sql, values)`` statement wherever a list of statements goes (a
    customer's connection runs it so); a connection of the store's pools sends it quoted."""

    __slots__ = ("template", "values")

    def __init__(self, template: Template, values: Mapping[str, Any]) -> None:
        self.template = template
        self.values = values

    def __len__(self) -> int:
        return 1

    @overload
    def __getitem__(self, index: int) -> Statement: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Statement]: ...

    def __getitem__(self, index: Union[int, slice]) -> Union[Statement, Sequence[Statement]]:
        return [(self.template.sql, self.values)][index]


def _quote(escaping: Any, encoding: str, value: Any) -> bytes:
    """``value`` as a SQL literal, as psycopg's client-side binding writes it."""
    if value is None:
        return b"NULL"
    if isinstance(value, str):
        if "\x00" in value:  # libpq would cut the text at the NUL: refused, as psycopg does
            import psycopg

            raise psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
        return bytes(escaping.escape_literal(value.encode(encoding)))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return b"'" + bytes(escaping.escape_bytea(bytes(value))) + b"'::bytea"
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, int):
        return f"({value})".encode() if value < 0 else str(value).encode()
    if isinstance(value, float):
        if math.isnan(value):
            return b"'NaN'::float8"
        if math.isinf(value):
            return b"'Infinity'::float8" if value > 0 else b"'-Infinity'::float8"
        return f"({value!r})".encode() if value < 0 else repr(value).encode()
    raise TypeError(f"no client-side literal for a {type(value).__name__}")


def reply(conn: Any, quoted: Quoted, head: bytes, watched: Watched) -> int:
    """The rowcount of ``quoted``, sent after ``head`` on ``conn`` (a connection the call holds
    alone) under ``watched`` (the call's watchdog, not yet armed), waiting in this thread. The
    caller gives ``conn`` back, or discards it once ``watched`` fired."""
    text = quoted.template.render(conn, quoted.values, head)  # nothing sent when it raises
    with watched:
        conn.pgconn.send_query(text)
        results = _wait_results(conn)
    return int(results[-1].command_tuples or 0)


def _wait_results(conn: Any) -> list[Any]:
    """``_results`` for a sync call, waiting on the connection's socket in this thread."""
    reading, fd = _reading(conn), conn.pgconn.socket
    while True:
        step = advance(reading, None)
        if isinstance(step, Done):
            return step.value
        _wait(fd, writing=step)


def _wait(fd: int, writing: bool = False) -> None:
    """Until ``fd`` is readable (or writable); a socket the watchdog shut down is readable."""
    try:
        if writing:
            select.select([], [fd], [])
        else:
            select.select([fd], [], [])
    except ValueError:  # a descriptor past select's FD_SETSIZE
        poller = select.poll()
        poller.register(fd, select.POLLOUT if writing else select.POLLIN)
        poller.poll()


async def areply(store: Any, pool: Any, conn: Any, quoted: Quoted, head: bytes, in_task: bool) -> int:
    """The rowcount of ``quoted``, sent after ``head`` on ``conn`` (lent by ``pool``, given back
    here) under the watchdog of ``store`` (``Postgres``), within its ``statement_timeout``.
    ``in_task``: the call already runs in a task of its own (a cancelled caller's), which a
    cancellation then ends."""
    deadline = time.monotonic() + store.statement_timeout
    try:
        text = quoted.template.render(conn, quoted.values, head)
    except BaseException:
        await pool.putconn(conn)  # nothing was sent
        raise
    return await _exchange(store, pool, conn, text, store.statement_timeout, deadline, in_task, None)


async def _exchange(store: Any, pool: Any, conn: Any, text: Optional[bytes], bound: float, deadline: float,
                    in_task: bool, before: Optional[Watched]) -> int:
    """Send ``text`` (``None``: sent before the caller was cancelled, under ``before``), read
    every result of it, and give ``conn`` back idle, or discard it once a watchdog fired.
    A caller cancelled while it waits returns at once; the reading runs on in a task."""
    watched = Watched(store, conn, bound)
    kept = True
    try:
        with watched:
            if text is not None:
                conn.pgconn.send_query(text)
            try:
                results = await _results(conn)
            except asyncio.CancelledError:
                if not in_task:
                    kept = False  # the task's now: it reads the rest, then gives the connection back
                    left = max(0.001, deadline - time.monotonic())
                    run_on(_exchange(store, pool, conn, None, left, deadline, True, watched))
                raise
        return int(results[-1].command_tuples or 0)
    finally:
        if kept:
            if watched.fired or (before is not None and before.fired):
                await conn.close()  # a cancel request or a shut socket may still reach it
            # An open pool never suspends here (its lock is never held across an await), so
            # a cancellation cannot land in the middle of giving the connection back.
            await pool.putconn(conn)


async def _results(conn: Any) -> list[Any]:
    """Every result of the message sent on ``conn`` (``pq.PGresult``), the connection idle
    again after the last; psycopg's error of the first failed statement is raised then."""
    reading, fd = _reading(conn), conn.pgconn.socket
    loop = asyncio.get_running_loop()
    while True:
        step = advance(reading, None)
        if isinstance(step, Done):
            return step.value
        if step:
            await _ready(loop, fd, loop.add_writer, loop.remove_writer)
        else:
            await _ready(loop, fd, loop.add_reader, loop.remove_reader)


def _reading(conn: Any) -> Generator[bool, None, list[Any]]:
    """What reading every result of the message sent on ``conn`` takes, for the sync and the
    async driver: yields ``True`` to wait until its socket is writable (a message longer than
    the socket's buffer), ``False`` until readable; returns the results."""
    pgconn = conn.pgconn
    while pgconn.flush():
        yield True
    results: list[Any] = []
    failed: Optional[Any] = None
    while True:
        if pgconn.is_busy():
            yield False
            pgconn.consume_input()
            continue
        result = pgconn.get_result()
        if result is None:
            break
        results.append(result)
        if failed is None and result.status not in _OK:
            failed = result
    if failed is not None:
        raise _error(failed, conn.info.encoding)
    return results


async def _ready(loop: asyncio.AbstractEventLoop, fd: int, add: Any, remove: Any) -> None:
    """Wait until ``fd`` is readable or writable (``add``: ``loop.add_reader`` or ``add_writer``)."""
    future = loop.create_future()
    add(fd, _wake, future)
    try:
        await future
    finally:
        remove(fd)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


_OK = (1, 2)  # pq.ExecStatus.COMMAND_OK, TUPLES_OK (psycopg loads with a PostgreSQL store only)


def _error(result: Any, encoding: str) -> Exception:
    """psycopg's error of a failed result: the class of its SQLSTATE, its primary message."""
    from psycopg import errors, pq

    state = (result.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode("ascii", "replace")
    message = result.error_field(pq.DiagnosticField.MESSAGE_PRIMARY) or result.error_message or b""
    try:
        kind = errors.lookup(state)
    except KeyError:
        kind = errors.DatabaseError
    return kind(bytes(message).decode(encoding, "replace").strip() or f"statement failed ({state})")
