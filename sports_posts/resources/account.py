"""``client.account``: account information and the compliance list."""

from __future__ import annotations

from typing_extensions import Unpack

from .. import _endpoints
from .._config import RequestOptions
from .._transport import AsyncRequester, SyncRequester
from ..models.account import AccountInformation, ComplianceList
from ._base import Resource, same

__all__ = ["Account", "AsyncAccount"]


class Account(Resource[SyncRequester]):
    """``client.account``: the account behind the API key."""

    def information(self, /, **options: Unpack[RequestOptions]) -> AccountInformation:
        """Plan, billing cycle and calls used (free: not counted against the quota)."""
        return self._client._result(_endpoints.account_information(**options), same)

    def x_ids(self, /, **options: Unpack[RequestOptions]) -> ComplianceList:
        """Post ids to delete from your own storage for platform compliance."""
        return self._client._result(_endpoints.account_x_ids(**options), same)


class AsyncAccount(Resource[AsyncRequester]):
    """``aclient.account``: the account behind the API key, awaited."""

    async def information(self, /, **options: Unpack[RequestOptions]) -> AccountInformation:
        """Plan, billing cycle and calls used (free: not counted against the quota)."""
        return await self._client._result(_endpoints.account_information(**options), same)

    async def x_ids(self, /, **options: Unpack[RequestOptions]) -> ComplianceList:
        """Post ids to delete from your own storage for platform compliance."""
        return await self._client._result(_endpoints.account_x_ids(**options), same)
