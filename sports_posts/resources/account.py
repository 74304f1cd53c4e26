"""``client.account``: account information and the compliance list."""

from __future__ import annotations

import functools
from datetime import timedelta
from typing import TYPE_CHECKING, Callable, Final, Optional, Union

from typing_extensions import Unpack

from .. import _endpoints
from .._config import RequestOptions
from ..models.account import AccountInformation, ComplianceList
from ._base import (
    AsyncResource,
    SyncResource,
    async_to_raw_response_wrapper,
    same,
    to_raw_response_wrapper,
)

if TYPE_CHECKING:
    from ..polling.checkpoints import Checkpoint
    from .compliance import AsyncComplianceSweeper, ComplianceSweeper, SweepResult

__all__ = ["Account", "AccountWithRawResponse", "AsyncAccount", "AsyncAccountWithRawResponse"]


class Account(SyncResource):
    """``client.account``: the account behind the API key."""

    def information(self, /, **options: Unpack[RequestOptions]) -> AccountInformation:
        """Plan, billing cycle and calls used (free: not counted against the quota)."""
        return self._client._result(_endpoints.account_information(**options), same)

    def x_ids(self, /, **options: Unpack[RequestOptions]) -> ComplianceList:
        """Post ids to delete from your own storage for platform compliance."""
        return self._client._result(_endpoints.account_x_ids(**options), same)

    @functools.cached_property
    def with_raw_response(self) -> AccountWithRawResponse:
        """``information`` and ``x_ids``, each answering a ``RawResponse``."""
        return AccountWithRawResponse(self._raw_twin())

    def compliance_sweep(self, /, *, delete: Callable[[str], object],
                         checkpoint: Optional[Checkpoint] = None) -> SweepResult:
        """Call ``delete(post_id)`` for every listed id no earlier sweep on ``checkpoint``
        handled (at-least-once); see [the compliance sweep][compliance-sweep]."""
        return self.compliance_sweeper(delete=delete, checkpoint=checkpoint).sweep()

    def compliance_sweeper(self, /, *, delete: Callable[[str], object], checkpoint: Optional[Checkpoint] = None,
                           every: Union[float, timedelta, None] = None) -> ComplianceSweeper:
        """A sweeper to keep running: ``run_forever()`` sweeps every ``every`` (default a
        day) until ``stop()``."""
        from .compliance import ComplianceSweeper

        return ComplianceSweeper(self._client, delete=delete, checkpoint=checkpoint, every=every)


class AsyncAccount(AsyncResource):
    """``aclient.account``: the account behind the API key, awaited."""

    async def information(self, /, **options: Unpack[RequestOptions]) -> AccountInformation:
        """Plan, billing cycle and calls used (free: not counted against the quota)."""
        return await self._client._result(_endpoints.account_information(**options), same)

    async def x_ids(self, /, **options: Unpack[RequestOptions]) -> ComplianceList:
        """Post ids to delete from your own storage for platform compliance."""
        return await self._client._result(_endpoints.account_x_ids(**options), same)

    @functools.cached_property
    def with_raw_response(self) -> AsyncAccountWithRawResponse:
        """``information`` and ``x_ids``, each awaited for a ``RawResponse``."""
        return AsyncAccountWithRawResponse(self._raw_twin())

    async def compliance_sweep(self, /, *, delete: Callable[[str], object],
                               checkpoint: Optional[Checkpoint] = None) -> SweepResult:
        """Call ``delete(post_id)`` (a function or a coroutine function) for every listed
        id no earlier sweep on ``checkpoint`` handled (at-least-once)."""
        return await self.compliance_sweeper(delete=delete, checkpoint=checkpoint).sweep()

    def compliance_sweeper(self, /, *, delete: Callable[[str], object], checkpoint: Optional[Checkpoint] = None,
                           every: Union[float, timedelta, None] = None) -> AsyncComplianceSweeper:
        """An async sweeper to keep running: ``await run_forever()`` until ``stop()``."""
        from .compliance import AsyncComplianceSweeper

        return AsyncComplianceSweeper(self._client, delete=delete, checkpoint=checkpoint, every=every)


class AccountWithRawResponse:
    """``client.with_raw_response.account``: ``information`` and ``x_ids``, raw (not the
    sweep: it makes many calls, so there is no one answer to hand back raw)."""

    def __init__(self, account: Account) -> None:
        self.information: Final = to_raw_response_wrapper(account.information)
        self.x_ids: Final = to_raw_response_wrapper(account.x_ids)


class AsyncAccountWithRawResponse:
    """``aclient.with_raw_response.account``: ``information`` and ``x_ids``, raw."""

    def __init__(self, account: AsyncAccount) -> None:
        self.information: Final = async_to_raw_response_wrapper(account.information)
        self.x_ids: Final = async_to_raw_response_wrapper(account.x_ids)
