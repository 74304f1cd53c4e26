"""Statements on the customer's own psycopg connection: inside their transaction if one is
open, never prepared (their pooler may be one that cannot keep a prepared statement), with
their settings and their bounds."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Optional

from .._errors import ParameterError
from .errors import import_driver

__all__ = ["aon_given", "check_in_transaction", "on_given"]

Statement = tuple[str, Optional[Any]]
Result = tuple[int, list[tuple[Any, ...]]]


def on_given(conn: Any, statements: Sequence[Statement], *, atomic: bool = False) -> list[Result]:
    """Run on the customer's connection, inside their transaction if one is open, never
    prepared (their pooler may be one that cannot keep a prepared statement). Several
    statements (or ``atomic``) go all or nothing: in a transaction, or a savepoint in theirs."""
    results: list[Result] = []
    with conn.transaction() if atomic or len(statements) > 1 else contextlib.nullcontext(), conn.cursor() as cur:
        for sql, params in statements:
            cur.execute(sql, params, prepare=False)
            results.append((cur.rowcount, cur.fetchall() if cur.description else []))
    return results


async def aon_given(conn: Any, statements: Sequence[Statement], *, atomic: bool = False) -> list[Result]:
    if atomic or len(statements) > 1:
        async with conn.transaction(), conn.cursor() as cur:
            return await _aexecute_given(cur, statements)
    async with conn.cursor() as cur:
        return await _aexecute_given(cur, statements)


async def _aexecute_given(cur: Any, statements: Sequence[Statement]) -> list[Result]:
    results: list[Result] = []
    for sql, params in statements:
        await cur.execute(sql, params, prepare=False)
        results.append((cur.rowcount, await cur.fetchall() if cur.description else []))
    return results


def check_in_transaction(owner: str, conn: Any) -> None:
    """A claim outside a transaction would commit alone, and the exactly-once promise with it.

    Inside ``with conn.transaction():``, or on a connection not in autocommit mode (its
    first statement opens the transaction that the caller commits), the claim is theirs.
    """
    psycopg = import_driver("psycopg", owner)
    if conn.autocommit and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        raise ParameterError(
            "claim_in needs the connection inside your transaction (with conn.transaction(): ...)",
            parameter="connection",
        )
