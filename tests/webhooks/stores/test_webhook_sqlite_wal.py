"""Opening the SQLite stores while other processes open the same new file (WAL switch races)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sports_posts._stores.sqlite import enable_wal


class _Conn:
    """A connection whose WAL switch meets ``locked`` "database is locked" answers first."""

    def __init__(self, locked: int, mode: str = "delete", error: str = "database is locked") -> None:
        self.locked, self.mode, self.error = locked, mode, error
        self.switches = 0

    def execute(self, sql: str) -> Any:
        if sql == "PRAGMA journal_mode":
            return _Row(self.mode)
        self.switches += 1
        if self.locked:
            self.locked -= 1
            raise sqlite3.OperationalError(self.error)
        self.mode = "wal"
        return _Row("wal")


class _Row:
    def __init__(self, value: str) -> None:
        self.value = value

    def fetchone(self) -> tuple[str]:
        return (self.value,)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_a_locked_switch_is_retried_until_it_succeeds() -> None:
    conn, clock = _Conn(locked=3), _Clock()
    enable_wal(conn, 5.0, sleep=clock.sleep, clock=lambda: clock.now)  # type: ignore[arg-type]
    assert conn.mode == "wal" and conn.switches == 4
    assert clock.sleeps == [0.001, 0.002, 0.004]


def test_a_switch_still_locked_at_the_busy_timeout_raises() -> None:
    conn, clock = _Conn(locked=10_000), _Clock()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        enable_wal(conn, 1.0, sleep=clock.sleep, clock=lambda: clock.now)  # type: ignore[arg-type]
    assert 1.0 <= clock.now <= 1.1 and max(clock.sleeps) == 0.05


def test_a_file_already_in_wal_mode_is_only_read() -> None:
    conn = _Conn(locked=10_000, mode="wal")
    enable_wal(conn, 1.0, sleep=lambda s: pytest.fail("no wait"))  # type: ignore[arg-type]
    assert conn.switches == 0


def test_other_sqlite_errors_are_not_retried() -> None:
    conn = _Conn(locked=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        enable_wal(conn, 5.0, sleep=lambda s: pytest.fail("no wait"))  # type: ignore[arg-type]


def test_a_real_file_ends_in_wal_mode(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.sqlite3", isolation_level=None)
    enable_wal(conn, 1.0)
    enable_wal(conn, 1.0)  # the second open only reads the mode
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
