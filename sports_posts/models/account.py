"""Account information and the compliance list (spec 2.6, 2.7)."""

from __future__ import annotations

from typing import Literal, Optional, Union

from ._base import SportsPostsModel, UTCDateTime

__all__ = ["AccountInformation", "BillingCycle", "Company", "ComplianceList", "Usage"]


class Company(SportsPostsModel):
    """Who the key belongs to and on which plan."""

    name: Optional[str] = None
    """Name of the company that owns the key."""

    plan: Optional[Union[Literal["free", "paid"], str]] = None
    """The plan, such as ``free`` or ``paid``."""

    subscription_status: Optional[Union[Literal["active"], str]] = None
    """State of the subscription, such as ``active``."""


class BillingCycle(SportsPostsModel):
    """The current billing period, as aware UTC datetimes."""

    current_period_start: Optional[UTCDateTime] = None
    """Start of the current billing period (aware UTC)."""

    current_period_end: Optional[UTCDateTime] = None
    """End of the current billing period (aware UTC)."""


class Usage(SportsPostsModel):
    """Calls counted against the quota in the current period."""

    current_calls: Optional[int] = None
    """Calls counted so far in the current billing period."""


class AccountInformation(SportsPostsModel):
    """The body of GET /account/information (free to call)."""
    # The three sections are required: a body without them is not account information, and
    # silently empty usage would mislead. Fields inside them stay lenient.
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

    as_of: Optional[UTCDateTime] = None
    """When the service computed the list (aware UTC)."""

