"""Every model field against a table transcribed from the specification's sections 2.1 to 2.8.

The table is the spec's, written by hand: a model that drifts from it (a field typed
``Optional`` the spec requires, a type changed, a field added or dropped) fails here. A
field the spec lists but a documented form of the answer omits stays optional only if it
is in ``OPTIONAL_BY_FORM`` and its description (``Field(description=...)``) says why.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any, Callable, Optional, Union, get_args, get_origin

import httpx
import pytest
from pydantic import BaseModel

import sports_posts as sp
from sports_posts._endpoints import account_information, account_x_ids, ids_teams, posts_list
from sports_posts.models.post import MediaType
from tests.client.bodies import parse_response
from tests.wire import (
    spec_account,
    spec_author,
    spec_compliance,
    spec_media,
    spec_page,
    spec_pagination,
    spec_post,
    without,
)

Row = tuple[bool, Any]
"""(required by the spec, type the spec gives) of one field."""

SPEC: dict[type[BaseModel], dict[str, Row]] = {
    # 2.1 Post
    sp.Post: {
        "id": (True, str),
        "post_url": (True, str),
        "text": (True, str),
        "created_at": (True, datetime),
        "author_username": (True, str),
        "author_id": (True, str),
        "author": (True, sp.Author),
        "league": (True, str),
        "like_count": (True, int),
        "retweet_count": (True, int),
        "reply_count": (True, int),
        "quote_count": (True, int),
        "media_type": (True, MediaType),
        "highlight": (True, bool),
        "teams": (True, list[sp.TaggedTeam]),
        "players": (True, list[sp.TaggedPlayer]),
        "media": (True, list[sp.Media]),
    },
    # 2.1, the nested author form: username, name, profile_image_url, verified
    sp.Author: {
        "username": (True, str),
        "name": (True, str),
        "profile_image_url": (True, str),
        "verified": (True, bool),
    },
    # 2.2 MediaObject
    sp.Media: {
        "type": (True, MediaType),
        "url": (True, str),
        "preview_image_url": (True, str),
        "width": (True, int),
        "height": (True, int),
        "duration_ms": (True, int),
    },
    # 2.3 tagged team / player
    sp.TaggedTeam: {"provider1_guid_id": (True, str), "service_id": (True, int), "name": (True, str)},
    sp.TaggedPlayer: {"provider1_guid_id": (True, str), "service_id": (True, int), "name": (True, str)},
    # 2.4 PostsResponse
    sp.PostsResponse: {"pagination": (True, sp.Pagination), "items": (True, list[sp.Post])},
    sp.Pagination: {"page": (True, int), "limit": (True, int), "has_next": (True, bool), "has_prev": (True, bool)},
    # 2.6 account information
    sp.AccountInformation: {"company": (True, sp.Company), "billing_cycle": (True, sp.BillingCycle),
                            "usage": (True, sp.Usage)},
    sp.Company: {"name": (True, str), "plan": (True, str), "subscription_status": (True, str)},
    sp.BillingCycle: {"current_period_start": (True, datetime), "current_period_end": (True, datetime)},
    sp.Usage: {"current_calls": (True, int)},
    # 2.7 compliance list
    sp.ComplianceList: {"ids_to_delete": (True, list[str]), "as_of": (True, datetime)},
    # 2.8 team item and its envelope
    sp.Team: {
        "service_id": (True, int),
        "location": (True, str),
        "name": (True, str),
        "conference": (True, Optional[str]),
        "division": (True, Optional[str]),
        "league": (True, str),
    },
    sp.TeamList: {"ok": (True, bool), "count": (True, int), "items": (True, list[sp.Team])},
    # 4.4: the envelope of the other entities is not shown; 2.8's is the one documented
    sp.IdList: {"ok": (True, bool), "count": (True, int), "items": (True, list[sp.IdItem])},
    sp.IdItem: {},
}

SDK_ONLY: dict[type[BaseModel], set[str]] = {
    # 2.8's "<reference key>": its name is the reference_id passed, so the SDK gives it one name
    sp.Team: {"reference"},
    sp.IdItem: {"reference"},
}

OPTIONAL_BY_FORM: dict[type[BaseModel], set[str]] = {
    # 2.1 documents a flat and a nested author form: each field is in one form only
    sp.Post: {"author", "author_username", "author_id"},
    # an Author built from the flat form has only the username
    sp.Author: {"name", "profile_image_url", "verified"},
    # a photo has no length and is its own preview on the source platform
    sp.Media: {"preview_image_url", "duration_ms"},
    # 4.4: the answers for players, leagues and posts are not shown
    sp.IdList: {"ok", "count"},
}
"""Fields the spec lists that a documented form of the answer leaves out."""


def _bare(annotation: Any) -> Any:
    """``annotation`` without ``Optional`` and ``Annotated`` wrappers, as the spec's type."""
    if get_origin(annotation) is Annotated:
        return _bare(get_args(annotation)[0])
    if get_origin(annotation) is Union:
        args = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(args) == 1:
            return _bare(args[0])
        # an open vocabulary, Union[Literal[...], str]: any string
        if str in args and all(get_origin(arg) is not None for arg in args if arg is not str):
            return str
    return annotation


def _nullable(annotation: Any) -> bool:
    return get_origin(annotation) is Union and type(None) in get_args(annotation)


MODELS = list(SPEC)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_the_model_has_exactly_the_fields_of_the_spec(model: type[BaseModel]) -> None:
    assert set(model.model_fields) == set(SPEC[model]) | SDK_ONLY.get(model, set())


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_field_has_the_type_the_spec_gives(model: type[BaseModel]) -> None:
    for name, (_, expected) in SPEC[model].items():
        field = model.model_fields[name]
        # pydantic keeps Annotated's metadata apart: MediaType's annotation is its Union
        shown = field.annotation if not field.metadata else Annotated[(field.annotation, *field.metadata)]
        assert _bare(shown) == _bare(expected), f"{model.__name__}.{name}: {shown} is not the spec's {expected}"
        spec_nullable = _nullable(expected)
        if name not in OPTIONAL_BY_FORM.get(model, set()):
            assert _nullable(field.annotation) == spec_nullable, f"{model.__name__}.{name}: null or not as the spec says"


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_a_field_the_spec_requires_is_required_unless_a_documented_form_omits_it(model: type[BaseModel]) -> None:
    optional = OPTIONAL_BY_FORM.get(model, set())
    for name, (required, _) in SPEC[model].items():
        field = model.model_fields[name]
        if not required:
            assert not field.is_required(), f"{model.__name__}.{name}: the spec does not require it"
        elif name in optional:
            assert not field.is_required(), f"{model.__name__}.{name}: a documented form omits it"
            assert field.description and "spec" in field.description, (
                f"{model.__name__}.{name} is optional though the spec lists it: its description must say why")
        else:
            assert field.is_required(), f"{model.__name__}.{name}: spec 2.x requires it"
    assert optional <= set(SPEC[model]), "OPTIONAL_BY_FORM names a field the spec does not list"


def test_the_reasons_are_in_the_json_schema_editors_and_generators_read() -> None:
    schema = sp.Post.model_json_schema()
    assert "author" not in schema["required"] and "only the nested author form" in schema["properties"]["author"]["description"]
    assert {"id", "post_url", "text", "league", "media_type", "highlight", "teams", "players", "media"} <= set(schema["required"])


# -- a body without a field the spec requires is the SDK's typed error, never pydantic's --------


def _missing_cases() -> list[tuple[str, Callable[[], Any], Any, str]]:
    cases: list[tuple[str, Callable[[], Any], Any, str]] = []
    for name, (required, _) in SPEC[sp.Post].items():
        if required and name not in OPTIONAL_BY_FORM[sp.Post]:
            cases.append((f"post.{name}", lambda: posts_list({}), spec_page([without(spec_post(), name)]), f"items.0.{name}"))
    for name in ("type", "url", "width", "height"):
        post = spec_post(media=[without(spec_media(), name)])
        cases.append((f"media.{name}", lambda: posts_list({}), spec_page([post]), f"items.0.media.0.{name}"))
    nested = spec_post(author="nested")
    nested["author"] = without(spec_author(), "username")
    cases.append(("author.username", lambda: posts_list({}), spec_page([nested]), "items.0.author.username"))
    for name in SPEC[sp.Pagination]:
        body = {"pagination": without(spec_pagination(), name), "items": []}
        cases.append((f"pagination.{name}", lambda: posts_list({}), body, f"pagination.{name}"))
    sections: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("company", ("name", "plan", "subscription_status")),
        ("billing_cycle", ("current_period_start", "current_period_end")),
        ("usage", ("current_calls",)),
    )
    for section, fields in sections:
        for name in fields:
            account = spec_account()
            account[section] = without(account[section], name)
            cases.append((f"{section}.{name}", account_information, account, f"{section}.{name}"))
    for name in ("ids_to_delete", "as_of"):
        cases.append((f"x-ids.{name}", account_x_ids, without(spec_compliance(), name), name))
    team: dict[str, Any] = {"service_id": 1, "location": "Boston", "name": "Celtics", "conference": None, "division": None, "league": "NBA"}
    for name in ("conference", "division"):
        teams = {"ok": True, "count": 1, "items": [without(team, name)]}
        cases.append((f"team.{name}", lambda: ids_teams("NBA"), teams, f"items.0.{name}"))
    for name in ("ok", "count"):
        cases.append((f"teams.{name}", lambda: ids_teams("NBA"), without({"ok": True, "count": 1, "items": [team]}, name), name))
    return cases


MISSING = _missing_cases()


@pytest.mark.parametrize(("call", "body", "field"), [case[1:] for case in MISSING], ids=[case[0] for case in MISSING])
def test_a_body_without_a_required_field_is_a_typed_error_naming_it(call: Callable[[], Any], body: Any, field: str) -> None:
    response = httpx.Response(200, content=json.dumps(body).encode())
    with pytest.raises(sp.APIResponseValidationError) as info:
        parse_response(call(), response)
    assert info.value.field == field


@pytest.mark.parametrize("author", ["flat", "nested", "both"])
def test_a_spec_complete_body_parses_in_every_author_form(author: str) -> None:
    post = spec_post(author=author, media=[spec_media(), without(spec_media(type="photo"), "preview_image_url", "duration_ms")])
    page = parse_response(posts_list({}), httpx.Response(200, content=json.dumps(spec_page([post])).encode()))
    parsed = page.items[0]
    assert parsed.author is not None and parsed.author_username == "nflnews"
    assert parsed.media[1].duration_ms is None and parsed.media[1].preview_image_url is None
    assert (parsed.author_id is None) == (author == "nested")


def test_what_a_checker_sees_is_what_the_spec_says() -> None:
    """Type-checked with the tests: these assignments fail the checker if a field the spec
    requires turns Optional again."""
    body = spec_page([spec_post(media=[spec_media()])])
    page = sp.PostsResponse.model_validate(body)
    post = page.items[0]
    text: str = post.text
    likes: int = post.like_count + post.retweet_count + post.reply_count + post.quote_count
    highlight: bool = post.highlight
    width: int = post.media[0].width
    limit: int = page.pagination.limit
    info = sp.AccountInformation.model_validate(spec_account())
    calls: int = info.usage.current_calls
    start: datetime = info.billing_cycle.current_period_start
    as_of: datetime = sp.ComplianceList.model_validate(spec_compliance()).as_of
    assert (text, likes, highlight, width, limit, calls) == ("post 1", 13, False, 1280, 20, 7)
    assert start.tzinfo is not None and as_of.tzinfo is not None
