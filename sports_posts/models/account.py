"""Account information and the compliance list (spec 2.6, 2.7)."""

from __future__ import annotations

from typing import Literal, Optional, Union

from ._base import SportsPostsModel, UTCDateTime

__all__ = ["AccountInformation", "BillingCycle", "Company", "ComplianceList", "Usage"]


class Company(SportsPostsModel):
    """Who the key belongs to and on which plan."""

    name: Optional[str] = None
    plan: Optional[Union[Literal["free", "paid"], str]] = None
    subscription_status: Optional[Union[Literal["active"], str]] = None


class BillingCycle(SportsPostsModel):
    """The current billing period, as aware UTC datetimes."""

    current_period_start: Optional[UTCDateTime] = None
    current_period_end: Optional[UTCDateTime] = None


class Usage(SportsPostsModel):
    """Calls counted against the quota in the current period."""

    current_calls: Optional[int] = None


class AccountInformation(SportsPostsModel):
    """The body of GET /account/information (free to call)."""

    # The three sections are required: a body without them is not account information, and
    # silently empty usage would mislead. Fields inside them stay lenient.
    company: Company
    billing_cycle: BillingCycle
    usage: Usage


class ComplianceList(SportsPostsModel):
    """Post ids the customer must delete from its own storage (GET /account/x-ids)."""

    ids_to_delete: list[str]  # required: a missing list must not read as "nothing to delete"
    as_of: Optional[UTCDateTime] = None
