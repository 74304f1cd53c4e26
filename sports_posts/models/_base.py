"""What every wire model shares: unknown fields kept, timestamps made aware UTC."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, ClassVar, get_args

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

__all__ = ["OpenVocabulary", "SportsPostsModel", "UTCDateTime", "to_utc"]


def to_utc(value: datetime) -> datetime:
    """Normalise any offset to UTC; a timestamp without an offset is UTC (spec 2.1)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


class _UTCDateTimeSchema:
    """Validation of ``UTCDateTime``: a timestamp already in UTC never leaves pydantic-core.

    The usual ``...Z`` timestamp matches the first choice, checked in Rust; only a naive
    one or another offset reaches ``to_utc``. (A Python validator on every timestamp
    cost about a tenth of parsing a page of posts.)
    """

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.union_schema(
            [
                core_schema.datetime_schema(tz_constraint=0),
                core_schema.no_info_after_validator_function(to_utc, core_schema.datetime_schema()),
            ],
            mode="left_to_right",
            custom_error_type="utc_datetime",
            custom_error_message="Input should be an ISO 8601 date-time",
        )

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {"type": "string", "format": "date-time"}


UTCDateTime = Annotated[datetime, _UTCDateTimeSchema()]
"""An aware ``datetime`` in UTC, whatever offset the service wrote."""


class OpenVocabulary:
    """Validation of ``Annotated[Union[Literal[...], str], OpenVocabulary()]``: any string.

    The ``Literal`` names the known values for type checkers, editors and the JSON schema;
    since ``str`` takes every value anyway, pydantic-core checks one string instead of a
    union that tries the literal first.
    """

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        known = [value for choice in get_args(source) for value in get_args(choice)]
        return core_schema.str_schema(metadata={"sports_posts_known": known})

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        known = (schema.get("metadata") or {}).get("sports_posts_known") or []
        return {"anyOf": [{"enum": known, "type": "string"}, {"type": "string"}]}


class SportsPostsModel(BaseModel):
    """Base of the wire models: fields the SDK does not know yet are kept in ``model_extra``."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="allow", populate_by_name=True)
