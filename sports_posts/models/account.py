"""Account information and the compliance list (spec 2.6, 2.7)."""

from __future__ import annotations

from typing import Literal, Union

from ._base import SportsPostsModel, UTCDateTime

__all__ = ["AccountInformation", "BillingCycle", "Company", "ComplianceList", "Usage"]


class Company(SportsPostsModel):
    """Who the key belongs to and on which plan."""

    name: str
    """Name of the company that owns the key."""

    plan: Union[Literal["free", "paid"], str]
    """The plan, such as ``free`` or ``paid``."""

    subscription_status: Union[Literal["active"], str]
    """State of the subscription, such as ``active``."""


class BillingCycle(SportsPostsModel):
    """The current billing period, as aware UTC datetimes."""

    current_period_start: UTCDateTime
    """Start of the current billing period (aware UTC)."""

    current_period_end: UTCDateTime
    """End of the current billing period (aware UTC)."""


class Usage(SportsPostsModel):
    """Calls counted against the quota in the current period."""

    current_calls: int
    """Calls counted so far in the current billing period."""


class AccountInformation(SportsPostsModel):
    """The body of GET /account/information (free to call)."""
    company: Company
    """Who the key belongs to and on which plan."""

    billing_cycle: BillingCycle
    """The current billing period."""

    usage: Usage
    """Calls counted in that period."""


class ComplianceList(SportsPostsModel):
    """Post ids the customer must delete from its own storage (GET /account/x-ids)."""

    ids_to_delete: list[str]  # required: a missing list must not read as "nothing to delete"
    """Post ids to remove from your own storage."""

    as_of: UTCDateTime
    """When the service computed the list (aware UTC)."""

