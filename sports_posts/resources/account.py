"""``client.account``: account information and the compliance list."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, Optional, Union, cast

from typing_extensions import Unpack

from .. import _endpoints
from .._config import RequestOptions
from .._transport import AsyncRequester, SyncRequester
from ..models.account import AccountInformation, ComplianceList
from ._base import Resource, same

if TYPE_CHECKING:
    from .._compliance import (
        AsyncComplianceClient,
        AsyncComplianceSweeper,
        ComplianceClient,
        ComplianceSweeper,
        SweepResult,
    )
    from ..polling.checkpoints import Checkpoint

__all__ = ["Account", "AsyncAccount"]


class Account(Resource[SyncRequester]):
    """``client.account``: the account behind the API key."""

    def information(self, /, **options: Unpack[RequestOptions]) -> AccountInformation:
        """Plan, billing cycle and calls used (free: not counted against the quota)."""
        return self._client._result(_endpoints.account_information(**options), same)

    def x_ids(self, /, **options: Unpack[RequestOptions]) -> ComplianceList:
        """Post ids to delete from your own storage for platform compliance."""
        return self._client._result(_endpoints.account_x_ids(**options), same)

    def compliance_sweep(self, /, *, delete: Callable[[str], Any],
                         checkpoint: Optional[Checkpoint] = None) -> SweepResult:
        """Call ``delete(post_id)`` for every listed id no earlier sweep on ``checkpoint``
        handled (at-least-once); see [the compliance sweep][compliance-sweep]."""
        return self.compliance_sweeper(delete=delete, checkpoint=checkpoint).sweep()

    def compliance_sweeper(self, /, *, delete: Callable[[str], Any], checkpoint: Optional[Checkpoint] = None,
                           every: Union[float, timedelta, None] = None) -> ComplianceSweeper:
        """A sweeper to keep running: ``run_forever()`` sweeps every ``every`` (default a
        day) until ``stop()``."""
        from .._compliance import ComplianceSweeper

        # this resource belongs to a SportsPosts: the sweeper calls its account.x_ids
        return ComplianceSweeper(cast("ComplianceClient", self._client), delete=delete, checkpoint=checkpoint, every=every)


class AsyncAccount(Resource[AsyncRequester]):
    """``aclient.account``: the account behind the API key, awaited."""

    async def information(self, /, **options: Unpack[RequestOptions]) -> AccountInformation:
        """Plan, billing cycle and calls used (free: not counted against the quota)."""
        return await self._client._result(_endpoints.account_information(**options), same)

    async def x_ids(self, /, **options: Unpack[RequestOptions]) -> ComplianceList:
        """Post ids to delete from your own storage for platform compliance."""
        return await self._client._result(_endpoints.account_x_ids(**options), same)

    async def compliance_sweep(self, /, *, delete: Callable[[str], Any],
                               checkpoint: Optional[Checkpoint] = None) -> SweepResult:
        """Call ``delete(post_id)`` (a function or a coroutine function) for every listed
        id no earlier sweep on ``checkpoint`` handled (at-least-once)."""
        return await self.compliance_sweeper(delete=delete, checkpoint=checkpoint).sweep()

    def compliance_sweeper(self, /, *, delete: Callable[[str], Any], checkpoint: Optional[Checkpoint] = None,
                           every: Union[float, timedelta, None] = None) -> AsyncComplianceSweeper:
        """An async sweeper to keep running: ``await run_forever()`` until ``stop()``."""
        from .._compliance import AsyncComplianceSweeper

        return AsyncComplianceSweeper(cast("AsyncComplianceClient", self._client), delete=delete, checkpoint=checkpoint, every=every)
