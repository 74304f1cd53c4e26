"""The operators' view of the fleet objects on each engine: CallBudget.status, Lease.status
and Lease.force_release (what `sports-posts` operations commands build on)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from sports_posts import BudgetDraw, BudgetStatus, CallBudget, PollState, RedisCheckpoint
from sports_posts.polling import Lease, LeaseLostError, LeaseStatus, PostgresCheckpoint

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def test_budget_status_reads_the_counters_without_drawing(store_url: str, key: str) -> None:
    budget = CallBudget(store_url, per_minute=1000, per_month=50, key=key)
    empty = budget.status()
    assert isinstance(empty, BudgetStatus) and re.fullmatch(r"\d{4}-\d{2}", empty.month)
    assert (empty.minute_used, empty.month_used, empty.minute_left, empty.month_left) == (0, 0, 1000, 50)
    budget.seed(10)
    draw = budget.try_acquire()
    assert isinstance(draw, BudgetDraw) and draw.granted
    status = budget.status()
    assert status.month_used == 11 and status.month_left == 39
    assert status.per_minute == 1000 and status.per_month == 50
    assert budget.status().month_used == 11, "status draws nothing"
    assert status.month == f"{draw.month // 100:04d}-{draw.month % 100:02d}"
    budget.close()


def test_budget_status_leaves_an_unset_bound_none(store_url: str, key: str) -> None:
    budget = CallBudget(store_url, per_month=5, key=key)
    budget.try_acquire()
    status = budget.status()
    assert status.per_minute is None and status.minute_left is None and status.month_left == 4
    budget.close()


def test_lease_status_shows_the_holder_token_and_expiry(store_url: str, key: str) -> None:
    lease = Lease(store_url, key=key, ttl=30)
    free = lease.status()
    assert free == LeaseStatus(key=key, holder=None, token=0, expires_in=None)
    token = lease.acquire()
    held = lease.status()
    assert held.holder == lease.holder and held.token == token
    assert held.expires_in is not None and 0 < held.expires_in <= 30
    lease.release()
    released = lease.status()
    assert released.holder is None and released.expires_in is None and released.token == token
    lease.close()


def test_force_release_frees_any_holder_and_keeps_the_fence(store_url: str, key: str) -> None:
    holder, operator, successor = (Lease(store_url, key=key, ttl=30) for _ in range(3))
    old_token = holder.acquire()
    assert old_token is not None
    old_checkpoint = (RedisCheckpoint if store_url.startswith("redis") else PostgresCheckpoint)(store_url, key=key)
    old_checkpoint.fence(old_token)
    assert successor.acquire() is None
    assert operator.force_release() is True
    assert operator.status().holder is None
    assert operator.force_release() is False, "nothing held any more"
    new_token = successor.acquire()
    assert new_token is not None and new_token > old_token
    new_checkpoint = (RedisCheckpoint if store_url.startswith("redis") else PostgresCheckpoint)(store_url, key=key)
    new_checkpoint.fence(new_token)
    with pytest.raises(LeaseLostError):
        old_checkpoint.save(PollState.start(T0))  # the old holder's save is fenced out
    assert holder.renew() is False, "the old holder learns it lost the lease"
    for lease in (holder, operator, successor):
        lease.close()
    old_checkpoint.close()
    new_checkpoint.close()
