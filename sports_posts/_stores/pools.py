"""What the PostgreSQL stores' pools are made with: psycopg_pool itself (or the missing-extra
error), connection classes that remember why a connection could not be opened, the close of
a per-loop pool when its loop ends, and the hosts of a multi-host URL."""

from __future__ import annotations

import asyncio
import contextlib
import select
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from .errors import missing_extra

__all__ = ["arecording", "close_with_the_loop", "consume", "host_count", "pool_module", "quiet", "recording"]


def recording(base: Any, record: Callable[[BaseException], None]) -> Any:
    """``base`` (``psycopg.Connection``) whose failed connection attempts, made by the pool in
    its own threads, are told to ``record``: a call that waited in vain says why."""

    class Recording(base):  # type: ignore[misc]
        @classmethod
        def connect(cls, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().connect(*args, **kwargs)
            except Exception as exc:
                record(exc)
                raise

    return Recording


def arecording(base: Any, record: Callable[[BaseException], None]) -> Any:
    class Recording(base):  # type: ignore[misc]
        @classmethod
        async def connect(cls, *args: Any, **kwargs: Any) -> Any:
            try:
                return await super().connect(*args, **kwargs)
            except Exception as exc:
                record(exc)
                raise

    return Recording


async def close_with_the_loop(pool: Any) -> None:
    """Wait until this loop's tasks are cancelled (the loop ends), then close ``pool``."""
    try:
        await asyncio.get_running_loop().create_future()
    finally:
        with contextlib.suppress(Exception):
            await pool.close(timeout=1.0)


def consume(task: asyncio.Future[Any]) -> None:
    """Read the end of a call whose caller was cancelled: nothing left unretrieved."""
    if not task.cancelled():
        task.exception()


def pool_module(owner: str) -> Any:
    try:
        import psycopg_pool
    except ImportError:
        raise missing_extra(owner, "postgres") from None
    return psycopg_pool


def host_count(url: Optional[str]) -> int:
    """Hosts a libpq multi-host URL names (each gets ``connect_timeout`` in turn)."""
    if url is None:
        return 1
    try:
        hosts = urlsplit(url).netloc.rpartition("@")[2]
    except ValueError:
        return 1
    return hosts.count(",") + 1


def quiet(conn: Any) -> bool:
    """Whether an idle connection of the pool is open and the server sent it nothing: a
    server that restarted, terminated the backend or closed the socket has said so (a FATAL
    message, an end of file), which makes the socket readable. Looked at without waiting,
    only on a connection no call holds."""
    if conn.closed or conn.broken:
        return False
    try:
        readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    except Exception:  # no socket any more: the full check decides (and fails)
        return False
    return not readable
