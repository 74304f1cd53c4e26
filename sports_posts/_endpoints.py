"""Every endpoint of the service as data: method, path, encoded query, parser (no I/O).

Each function also takes the per-call options (``extra_headers``, ``extra_query``,
``timeout``): they are split off and checked here, before an endpoint's own parameters
go to their encoder, so that encoder still refuses a parameter the service does not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._config import CallOptions, split_request_options
from ._errors import ParameterError
from ._params import encode_ids_params, encode_posts_params
from ._request import APICall
from .models.account import AccountInformation, ComplianceList
from .models.ids import IdList, TeamList
from .models.post import PostsResponse

__all__ = ["account_information", "account_x_ids", "ids_list", "ids_teams", "posts_list"]


def posts_list(params: Mapping[str, Any]) -> APICall[PostsResponse]:
    """GET /posts: one endpoint, its mode inferred by the service from the parameters."""
    options, query = split_request_options(params)
    return APICall("GET", "/posts", encode_posts_params(query), PostsResponse.model_validate_json, options)


def account_information(**options: Any) -> APICall[AccountInformation]:
    """GET /account/information (free: does not count against the quota)."""
    return APICall("GET", "/account/information", {}, AccountInformation.model_validate_json, _only(options), free=True)


def account_x_ids(**options: Any) -> APICall[ComplianceList]:
    """GET /account/x-ids: the post ids to delete for platform compliance."""
    return APICall("GET", "/account/x-ids", {}, ComplianceList.model_validate_json, _only(options))


def ids_teams(league: str, **lookup: Any) -> APICall[TeamList]:
    """GET /ids?entity=teams; the reference column is exposed as ``Team.reference``."""
    options, lookup = split_request_options(lookup)
    query = encode_ids_params("teams", league, lookup)
    context = {"reference_id": lookup.get("reference_id")}
    return APICall("GET", "/ids", query, lambda body: TeamList.model_validate_json(body, context=context), options)


def ids_list(entity: str, league: str, **lookup: Any) -> APICall[IdList]:
    """GET /ids for any entity; items keep every field since the spec shows no shape."""
    options, lookup = split_request_options(lookup)
    query = encode_ids_params(entity, league, lookup)
    context = {"reference_id": lookup.get("reference_id")}
    return APICall("GET", "/ids", query, lambda body: IdList.model_validate_json(body, context=context), options)


def _only(options: Mapping[str, Any]) -> CallOptions:
    """The per-call options of an endpoint that has no parameters of its own."""
    checked, rest = split_request_options(options)
    if rest:
        name = sorted(rest)[0]
        raise ParameterError(f"unknown parameter {name!r}", parameter=name)
    return checked
