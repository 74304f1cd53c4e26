"""Where a poller keeps its ``PollState`` between runs: memory, a file, Redis or PostgreSQL.

A checkpoint has two methods, ``load() -> PollState | None`` and ``save(state)``. The
poller calls ``save`` only after the consumer has finished with a batch, so a crash at
any point repeats at most the last batch and never skips one. The async poller calls
these (blocking) methods in a worker thread, except for ``MemoryCheckpoint``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Union

from typing_extensions import Protocol, runtime_checkable

from ._lease import FEED_KEY, LeaseLostError, checked_key, fenced_out
from ._state import CheckpointError, PollState

if TYPE_CHECKING:
    from .._stores import RedisTarget
    from .._stores.postgres import PostgresTarget

__all__ = [
    "Checkpoint",
    "CheckpointConflictError",
    "CheckpointError",
    "CheckpointLockedError",
    "CheckpointMismatchError",
    "FencedCheckpoint",
    "FileCheckpoint",
    "MemoryCheckpoint",
    "PostgresCheckpoint",
    "RedisCheckpoint",
    "hold",
    "release",
]


@runtime_checkable
class Checkpoint(Protocol):
    """Stores one [`PollState`][sports_posts.PollState]; ``load()`` returns ``None`` when nothing is stored yet."""

    def load(self) -> Optional[PollState]: ...

    def save(self, state: PollState) -> None: ...


@runtime_checkable
class FencedCheckpoint(Checkpoint, Protocol):
    """A checkpoint that refuses saves older than a lease's fencing token (``RedisCheckpoint``,
    ``PostgresCheckpoint``): what a poller with ``lease=`` needs."""

    def fence(self, token: int) -> None: ...


class CheckpointConflictError(CheckpointError):
    """Another worker saved the same redis checkpoint since this one loaded it.

    Two pollers on one key would deliver the same posts twice; the second one stops here
    instead. Give each worker its own key (one per league, say).
    """


class CheckpointLockedError(CheckpointError):
    """Another poller holds this checkpoint file (two processes started by mistake, say).

    Both would deliver the same posts; the second stops before its first call instead.
    """


class CheckpointMismatchError(CheckpointError):
    """The checkpoint was written by a poller with other filters (another league, say).

    Its watermark says nothing about this feed's posts: resuming from it would skip them in
    silence. ``differences`` lists each filter that differs, stored and now. Give each feed
    its own checkpoint (path or key), or delete this one to start over.
    """

    def __init__(self, message: str, *, differences: Optional[list[str]] = None) -> None:
        super().__init__(message)
        self.differences: list[str] = list(differences or [])


def hold(checkpoint: object) -> None:
    """Take what a checkpoint holds for one poller's life (a ``FileCheckpoint``'s
    lock); a checkpoint without ``acquire()`` holds nothing."""
    acquire = getattr(checkpoint, "acquire", None)
    if callable(acquire):
        acquire()


def release(checkpoint: object) -> None:
    """Give back what ``hold`` took; safe to call when nothing is held."""
    give_back = getattr(checkpoint, "release", None)
    if callable(give_back):
        give_back()


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # OSError when another process holds it

else:
    import fcntl

    def _try_lock(fd: int) -> None:
        # flock: held by the open file, dropped by the kernel when the process dies, so a
        # killed poller never leaves a stale lock behind.
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError (EWOULDBLOCK) when held


def _holder(fd: int) -> str:
    """The process id the lock's holder wrote into the lock file, if it can be read."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 32).decode("ascii", "replace").strip()
    except OSError:
        return "unknown"
    return text if text.isdigit() else "unknown"


class MemoryCheckpoint:
    """A checkpoint in this process only: the default, lost when the process ends."""

    def __init__(self, state: Optional[PollState] = None) -> None:
        self._state = state
        self._lock = threading.Lock()

    def load(self) -> Optional[PollState]:
        with self._lock:
            return self._state

    def save(self, state: PollState) -> None:
        with self._lock:
            self._state = state

    def __repr__(self) -> str:
        return f"MemoryCheckpoint(state={self._state!r})"


class FileCheckpoint:
    """A checkpoint in a JSON file, replaced atomically: temp file, fsync, rename.

    A kill in the middle of ``save`` leaves either the old or the new file, never a torn
    one (a stray ``.<name>.*.tmp`` may remain; it is ignored and removed by the next
    save). A file that cannot be read back raises [`CheckpointError`][sports_posts.CheckpointError] naming the
    path: delete it to start over. So does every file error (a directory that is a file,
    a lock file that cannot be made, a permission), naming the path and the cause.

    A poller holds an OS lock on ``<path>.lock`` for its whole life (``flock``; on
    Windows ``msvcrt.locking``), so a second poller on the same file, in this process or
    another, fails at its start with ``CheckpointLockedError``. Plain ``load()`` and
    ``save()`` take no lock: reading a checkpoint a poller is using is fine.
    """

    def __init__(self, path: Union[str, os.PathLike[str]]) -> None:
        self.path: Path = Path(path)
        self.lock_path: Path = self.path.with_name(self.path.name + ".lock")
        self._lock: Optional[Callable[[], object]] = None  # closes the lock's descriptor
        self._loaded: object = None  # the file's identity when load() read it

    def __repr__(self) -> str:
        return f"FileCheckpoint({str(self.path)!r})"

    def _identity(self) -> object:
        """What changes whenever ``save`` replaces the file (a rename makes a new inode)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return "absent"
        except OSError as exc:
            raise self._error("cannot read", exc) from None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _error(self, doing: str, exc: OSError, path: Optional[Path] = None) -> CheckpointError:
        """A file error as a ``CheckpointError`` naming the path and the cause."""
        cause = exc.strerror or type(exc).__name__
        where = "it" if path is None or path == self.path else str(path)
        hint = ""
        if isinstance(exc, (NotADirectoryError, FileExistsError)):
            hint = " (a file stands where a directory of the path should be)"
        elif isinstance(exc, PermissionError):
            hint = " (check the permissions of the file and its directory)"
        return CheckpointError(f"checkpoint {self.path}: {doing} {where}: {cause}{hint}")

    def acquire(self) -> None:
        """Hold this checkpoint for one poller; ``CheckpointLockedError`` when another
        poller holds it, or saved it since this object loaded it (a stale start)."""
        if self._lock is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._error("cannot create the directory", exc, self.path.parent) from None
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise self._error("cannot make the lock file", exc, self.lock_path) from None
        try:
            _try_lock(fd)
        except OSError:
            holder = _holder(fd)
            os.close(fd)
            if holder == str(os.getpid()):
                raise CheckpointLockedError(
                    f"{self.path} is in use by another poller of this same process "
                    f"(process {holder}, lock file {self.lock_path.name}): one still open on "
                    "this file. Close it first (poller.close() or await poller.aclose(), or use "
                    "the poller in a `with` / `async with` block, which closes it), or give this "
                    "one its own file"
                ) from None
            raise CheckpointLockedError(
                f"{self.path} is in use by another poller (process {holder}, lock file "
                f"{self.lock_path.name}): two pollers on one checkpoint would both deliver "
                "the same posts; stop the other one, or give this one its own file"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        except OSError as exc:
            os.close(fd)
            raise self._error("cannot write the lock file", exc, self.lock_path) from None
        self._lock = weakref.finalize(self, os.close, fd)
        try:
            stale = self._loaded is not None and self._identity() != self._loaded
        except CheckpointError:
            self.release()
            raise
        if stale:
            self.release()
            raise CheckpointLockedError(
                f"{self.path} was saved by another poller after this one read it; "
                "start this poller again to resume from the newer state"
            )

    def release(self) -> None:
        """Let another poller take this checkpoint (closing the descriptor drops the lock)."""
        lock, self._lock = self._lock, None
        if lock is not None:
            lock()

    def load(self) -> Optional[PollState]:
        self._loaded = self._identity()  # before reading: a save in between reads as a change
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._error("cannot read", exc) from None
        try:
            return PollState.from_json(data)
        except CheckpointError as exc:
            raise CheckpointError(f"{self.path}: {exc}; delete the file to start over") from None

    def save(self, state: PollState) -> None:
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._error("cannot create the directory", exc, directory) from None
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=directory)
        except OSError as exc:
            raise self._error("cannot write a temporary file in", exc, directory) from None
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(state.to_json().encode("utf-8"))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(exc, OSError):
                raise self._error("cannot write", exc) from None
            raise
        _fsync_directory(directory)
        self._remove_stray_temps(keep=tmp)

    def _remove_stray_temps(self, keep: str) -> None:
        for stray in self.path.parent.glob(f".{self.path.name}.*.tmp"):
            if str(stray) != keep:
                with contextlib.suppress(OSError):
                    stray.unlink()


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# KEYS[1] = hash; ARGV[1] = generation the saver last saw; ARGV[2] = state; ARGV[3] = next
# generation; ARGV[4] = the saver's fencing token (0 without a lease): an older one is refused.
_SAVE_SCRIPT = """
if tonumber(redis.call('HGET', KEYS[1], 'fence') or '0') > tonumber(ARGV[4]) then return -1 end
local current = redis.call('HGET', KEYS[1], 'generation')
if current == false then current = '0' end
if current ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'generation', ARGV[3])
return 1
"""


class RedisCheckpoint:
    """A checkpoint in a redis hash, for fleets of workers (extra ``redis``).

    ``save`` is a compare-and-set on a generation counter: if another worker saved the
    same key since this one loaded it, [`CheckpointConflictError`][sports_posts.CheckpointConflictError] is raised rather
    than both delivering the same posts. ``url_or_client`` is a ``redis://`` URL
    (``redis+cluster://``, ``redis+sentinel://`` too), a ``redis.Redis`` or a
    ``redis.cluster.RedisCluster`` client (not closed by this class); the connection is made by the SDK's store layer, as for every Redis store.
    Every Redis failure is a ``CoordinationError``; ``connect_timeout`` and
    ``statement_timeout`` (seconds) bound each call on a client made from a URL.
    """

    def __init__(
        self, url_or_client: RedisTarget, *, key: str = FEED_KEY,
        connect_timeout: float = 5.0, statement_timeout: float = 5.0,
    ) -> None:
        self.key: str = checked_key(key, "RedisCheckpoint", CheckpointError)
        from .._stores import runner_for

        if not isinstance(url_or_client, str) and type(url_or_client).__module__.startswith("psycopg"):
            raise CheckpointError("RedisCheckpoint needs a redis:// URL or a redis.Redis client")
        self._runner = runner_for(
            url_or_client, owner=f"RedisCheckpoint {key!r}", parameter="url_or_client",
            connect_timeout=connect_timeout, statement_timeout=statement_timeout,
        )
        if self._runner.engine != "redis":
            raise CheckpointError("RedisCheckpoint needs a redis:// URL or a redis.Redis client")
        self._generation = 0
        self._fence = 0

    def __repr__(self) -> str:
        return f"RedisCheckpoint({self._runner!r}, key={self.key!r})"

    def load(self) -> Optional[PollState]:
        state, generation = self._runner.execute(_LOAD_SCRIPT, [self.key], [])
        self._generation = int(generation or 0)
        if state is None:
            return None
        try:
            return PollState.from_json(state)
        except CheckpointError as exc:
            raise CheckpointError(
                f"redis key {self.key!r}: {exc}; delete the key to start over"
            ) from None

    def save(self, state: PollState) -> None:
        nxt = self._generation + 1
        ok = self._runner.execute(
            _SAVE_SCRIPT, [self.key], [str(self._generation), state.to_json(), str(nxt), str(self._fence)]
        )
        if ok == -1:
            raise LeaseLostError(f"redis key {self.key!r}: {fenced_out(self._fence)}")
        if not ok:
            raise CheckpointConflictError(
                f"redis key {self.key!r} was saved by another worker; two pollers share one checkpoint"
            )
        self._generation = nxt

    def fence(self, token: int) -> None:
        """Carry ``token`` (a ``Lease``'s fencing token) on every later save, and make
        the key refuse saves with older ones from now on (``LeaseLostError`` if it has
        already seen a newer one)."""
        if not self._runner.execute(_FENCE_SCRIPT, [self.key], [str(token)]):
            raise LeaseLostError(f"redis key {self.key!r}: {fenced_out(token)}")
        self._fence = token

    def close(self) -> None:
        """Close the client made from a URL (a client passed in stays open)."""
        self._runner.close()


_LOAD_SCRIPT = "return redis.call('HMGET', KEYS[1], 'state', 'generation')"


# KEYS[1] = hash; ARGV[1] = fencing token: recorded unless a newer one is.
_FENCE_SCRIPT = """
if tonumber(redis.call('HGET', KEYS[1], 'fence') or '0') > tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'fence', ARGV[1])
return 1
"""


_LOAD = "SELECT state, generation FROM sports_posts_checkpoints WHERE key = %(key)s"
# A compare-and-set on the generation the saver loaded, refused as well when the row has
# seen a newer fencing token: one statement, so no other save can slip in between.
_SAVE = """
INSERT INTO sports_posts_checkpoints AS c (key, state, generation, fence)
VALUES (%(key)s, %(state)s, %(next)s, %(fence)s)
ON CONFLICT (key) DO UPDATE SET state = EXCLUDED.state, generation = EXCLUDED.generation
WHERE c.generation = %(generation)s AND c.fence <= EXCLUDED.fence
RETURNING generation
"""
_FENCE = """
INSERT INTO sports_posts_checkpoints AS c (key, fence) VALUES (%(key)s, %(fence)s)
ON CONFLICT (key) DO UPDATE SET fence = EXCLUDED.fence WHERE c.fence <= EXCLUDED.fence
RETURNING fence
"""
_STORED_FENCE = "SELECT fence FROM sports_posts_checkpoints WHERE key = %(key)s"


class PostgresCheckpoint:
    """A checkpoint in the table ``sports_posts_checkpoints`` (created on first use), for
    fleets of workers (extra ``postgres``).

    Like ``sports_posts.RedisCheckpoint``: ``save`` is a compare-and-set on a
    generation (``CheckpointConflictError`` when another worker saved since this one
    loaded), and after ``fence`` every save carries the lease's fencing token, refused
    with ``LeaseLostError`` once a newer token has been seen. ``url_or_connection`` is
    a ``postgresql://`` URL (a pool of at most ``pool_size`` connections per process, 10 by
    default), or a ``psycopg_pool.ConnectionPool`` or ``psycopg.Connection`` of yours (not
    closed by this class); a call ends within ``connect_timeout + statement_timeout`` seconds (4 s by default, as a
    ``Lease``'s, under its ``ttl / 3``).
    """

    def __init__(
        self, url_or_connection: PostgresTarget, *, key: str = FEED_KEY,
        connect_timeout: float = 2.0, statement_timeout: float = 2.0, pool_size: Optional[int] = None,
    ) -> None:
        self.key: str = checked_key(key, "PostgresCheckpoint", CheckpointError)
        from .._stores import CoordinationError
        from .._stores.postgres import Postgres

        self._runner = Postgres(
            f"PostgresCheckpoint {key!r}", url_or_connection, error=CoordinationError,
            parameter="url_or_connection", connect_timeout=connect_timeout,
            statement_timeout=statement_timeout, pool_size=pool_size,
        )
        self._generation = 0
        self._fence = 0

    def __repr__(self) -> str:
        return f"PostgresCheckpoint({self._runner!r}, key={self.key!r})"

    def load(self) -> Optional[PollState]:
        row = self._runner.execute(_LOAD, (), {"key": self.key})
        state, self._generation = (None, 0) if row is None else (row[0], int(row[1]))
        if state is None:
            return None
        try:
            return PollState.from_json(state)
        except CheckpointError as exc:
            raise CheckpointError(f"checkpoint row {self.key!r}: {exc}; delete the row to start over") from None

    def save(self, state: PollState) -> None:
        nxt = self._generation + 1
        params = {"key": self.key, "state": state.to_json(), "next": nxt,
                  "generation": self._generation, "fence": self._fence}
        if self._runner.execute(_SAVE, (), params) is None:
            stored = self._runner.execute(_STORED_FENCE, (), {"key": self.key})
            if stored is not None and int(stored[0]) > self._fence:
                raise LeaseLostError(f"checkpoint row {self.key!r}: {fenced_out(self._fence)}")
            raise CheckpointConflictError(
                f"checkpoint row {self.key!r} was saved by another worker; two pollers share one checkpoint"
            )
        self._generation = nxt

    def fence(self, token: int) -> None:
        """Carry ``token`` on every later save, and make the row refuse older ones from now
        on (``LeaseLostError`` if it has already seen a newer one)."""
        if self._runner.execute(_FENCE, (), {"key": self.key, "fence": token}) is None:
            raise LeaseLostError(f"checkpoint row {self.key!r}: {fenced_out(token)}")
        self._fence = token

    def close(self) -> None:
        """Close the connection made from a URL."""
        self._runner.close()
