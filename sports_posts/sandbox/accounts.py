"""API keys, plans, quotas and burst limits: who may call, and what each call costs."""

from __future__ import annotations

import math
import random
import threading
from collections import deque
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Optional

from .config import BurstLimit, KeyConfig
from .errors import ApiError

__all__ = ["Account", "Accounts", "billing_period"]


def billing_period(now: datetime) -> tuple[datetime, datetime]:
    """The calendar month (UTC) containing ``now``: the billing cycle of every sandbox key."""
    start = now.astimezone(timezone.utc).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    end = start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)
    return start, end


@dataclass(eq=False)
class Account:
    """A key's configuration and usage. ``key`` is a secret: it is not in the repr."""

    key: str = field(repr=False)
    config: KeyConfig
    calls: int = 0
    period_start: Optional[datetime] = None
    period_end: Optional[datetime] = None
    recent: deque[datetime] = field(default_factory=deque, repr=False)


class Accounts:
    """The key table of a sandbox; thread-safe."""

    def __init__(self, seed: int, burst: Optional[BurstLimit] = None) -> None:
        self._rng = random.Random(f"{seed}:keys")
        self._lock = threading.Lock()
        self._accounts: dict[str, Account] = {}
        self.burst = burst
        self.any_chaos: bool = False
        """Whether some key has chaos settings of its own (else the sandbox's apply to every call)."""

    def add(self, config: KeyConfig, key: Optional[str] = None) -> str:
        """Register a key (random-looking, derived from the seed unless given) and return it."""
        with self._lock:
            if key is None:
                # sandbox._connect.SANDBOX_KEY_PREFIX, then the plan: such a key is never
                # mistaken for a key of the service, and it asks for a sandbox when exported
                plan = "free" if config.plan == "free" else "paid"
                key = f"sp_sandbox_{plan}_{self._rng.getrandbits(128):032x}"
            self._accounts[key] = Account(key=key, config=config)
            self._note_chaos()
            return key

    def update(self, key: str, **changes: Any) -> None:
        """Change a key's configuration (plan, active, leagues, chaos, ...)."""
        with self._lock:
            account = self._accounts[key]
            account.config = replace(account.config, **changes)
            self._note_chaos()

    def _note_chaos(self) -> None:
        """Keep ``any_chaos`` true to the configs (called under the lock after each change)."""
        self.any_chaos = any(a.config.chaos is not None for a in self._accounts.values())

    def get(self, key: str) -> Optional[Account]:
        """The account of a key, or None."""
        return self._accounts.get(key)

    def all(self) -> list[Account]:
        """Every account (keys stay out of their reprs)."""
        return list(self._accounts.values())

    def authenticate(self, authorization: Optional[str]) -> Account:
        """Both header forms of spec 5: ``Bearer <key>`` and the bare key; 401 otherwise."""
        if authorization is None or not authorization.strip():
            raise ApiError(401, "UNAUTHORIZED", "Missing API key: send 'Authorization: Bearer <API_KEY>'")
        value = authorization.strip()
        scheme, _, rest = value.partition(" ")
        if scheme.lower() == "bearer" and rest.strip():
            value = rest.strip()
        account = self._accounts.get(value)
        if account is None:
            raise ApiError(401, "UNAUTHORIZED", "Invalid API key")
        return account

    def admit(self, account: Account, now: datetime, *, counted: bool) -> None:
        """402 for an inactive key, 429 for burst or monthly quota; then count the call."""
        config = account.config
        if not config.active:
            raise ApiError(402, "PAYMENT_REQUIRED", "No active subscription for this API key")
        if not counted:
            return
        with self._lock:
            burst = config.burst or self.burst
            if burst is not None:
                horizon = burst.per_seconds
                while account.recent and (now - account.recent[0]).total_seconds() >= horizon:
                    account.recent.popleft()
                if len(account.recent) >= burst.requests:
                    wait = horizon - (now - account.recent[0]).total_seconds()
                    raise ApiError(429, "RATE_LIMITED", "Burst limit exceeded; slow down",
                                   {"Retry-After": str(max(1, math.ceil(wait)))})
                account.recent.append(now)
            period_start, period_end = account.period_start, account.period_end
            if period_start is None or period_end is None or not period_start <= now < period_end:
                period_start, period_end = billing_period(now)
                if account.period_start != period_start:
                    account.calls = 0
                account.period_start, account.period_end = period_start, period_end
            quota = config.quota
            if quota is not None and account.calls >= quota:
                # Retry-After says when the quota resets (the document declares it on every 429); the
                # SDK does not sleep a wait that long, it raises with .retry_after at once.
                reset = max(1, math.ceil((period_end - now).total_seconds()))
                raise ApiError(429, "RATE_LIMITED",
                               f"Monthly quota of {quota} calls used; it resets at {period_end.isoformat()}",
                               {"Retry-After": str(reset)})
            account.calls += 1

    def reset_usage(self, key: Optional[str] = None) -> None:
        """Zero the call counters (one key or all) and forget burst history."""
        with self._lock:
            for account in self._accounts.values():
                if key is None or account.key == key:
                    account.calls = 0
                    account.recent.clear()
