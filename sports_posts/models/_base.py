"""What every wire model shares: unknown fields kept, timestamps made aware UTC."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict

__all__ = ["SportsPostsModel", "UTCDateTime", "to_utc"]


def to_utc(value: datetime) -> datetime:
    """Normalise any offset to UTC; a timestamp without an offset is UTC (spec 2.1)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


UTCDateTime = Annotated[datetime, AfterValidator(to_utc)]
"""An aware ``datetime`` in UTC, whatever offset the service wrote."""


class SportsPostsModel(BaseModel):
    """Base of the wire models: fields the SDK does not know yet are kept in ``model_extra``."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
