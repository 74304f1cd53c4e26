"""Every endpoint of the service as data: method, path, encoded query, parser (no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._params import encode_ids_params, encode_posts_params
from ._transport import APICall
from .models.account import AccountInformation, ComplianceList
from .models.ids import IdList, TeamList
from .models.post import PostsResponse

__all__ = ["account_information", "account_x_ids", "ids_list", "ids_teams", "posts_list"]


def posts_list(params: Mapping[str, Any]) -> APICall[PostsResponse]:
    """GET /posts: one endpoint, its mode inferred by the service from the parameters."""
    return APICall("GET", "/posts", encode_posts_params(params), PostsResponse.model_validate_json)


def account_information() -> APICall[AccountInformation]:
    """GET /account/information (free: does not count against the quota)."""
    return APICall("GET", "/account/information", {}, AccountInformation.model_validate_json, free=True)


def account_x_ids() -> APICall[ComplianceList]:
    """GET /account/x-ids: the post ids to delete for platform compliance."""
    return APICall("GET", "/account/x-ids", {}, ComplianceList.model_validate_json)


def ids_teams(league: str, **lookup: Any) -> APICall[TeamList]:
    """GET /ids?entity=teams; the reference column is exposed as ``Team.reference``."""
    query = encode_ids_params("teams", league, lookup)
    context = {"reference_id": lookup.get("reference_id")}
    return APICall("GET", "/ids", query, lambda body: TeamList.model_validate_json(body, context=context))


def ids_list(entity: str, league: str, **lookup: Any) -> APICall[IdList]:
    """GET /ids for any entity; items keep every field since the spec shows no shape."""
    query = encode_ids_params(entity, league, lookup)
    context = {"reference_id": lookup.get("reference_id")}
    return APICall("GET", "/ids", query, lambda body: IdList.model_validate_json(body, context=context))
