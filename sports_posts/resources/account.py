"""``client.account``: account information and the compliance list."""

from __future__ import annotations

from .. import _endpoints
from .._transport import AsyncRequester, SyncRequester
from ..models.account import AccountInformation, ComplianceList
from ._base import Resource

__all__ = ["Account", "AsyncAccount"]


class Account(Resource[SyncRequester]):
    """``client.account``: the account behind the API key."""

    def information(self) -> AccountInformation:
        """Plan, billing cycle and calls used (free: not counted against the quota)."""
        return self._client._request(_endpoints.account_information())

    def x_ids(self) -> ComplianceList:
        """Post ids to delete from your own storage for platform compliance."""
        return self._client._request(_endpoints.account_x_ids())


class AsyncAccount(Resource[AsyncRequester]):
    """``aclient.account``: the account behind the API key, awaited."""

    async def information(self) -> AccountInformation:
        """Plan, billing cycle and calls used (free: not counted against the quota)."""
        return await self._client._request(_endpoints.account_information())

    async def x_ids(self) -> ComplianceList:
        """Post ids to delete from your own storage for platform compliance."""
        return await self._client._request(_endpoints.account_x_ids())
