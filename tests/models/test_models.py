"""Models accept the union of both documented shapes and name what they cannot parse."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

import sports_posts as sp
from sports_posts.models.post import Post
from tests.client.conftest import page, post
from tests.runner import Runner
from tests.wire import spec_account, spec_author, spec_media, spec_pagination, spec_post, without

NESTED = spec_post(
    "1790000000000000001",
    "2024-05-01T08:00:00-04:00",
    author="nested",
    post_url="https://x.example/p/1",
    text="Breaking: trade done",
    league="NBA",
    media_type="photo",
    teams=[{"provider1_guid_id": "s:1~l:46~t:1", "service_id": 1, "name": "Celtics"}],
    players=[{"provider1_guid_id": "0d5c4e7a-0000-4000-8000-000000000001", "service_id": 7, "name": "Tatum"}],
    media=[spec_media(type="animated_gif", url="https://m/1.gif", preview_image_url="https://m/1.jpg",
                      width=640, height=360, duration_ms=4000)],
)
NESTED["author"] = spec_author("wojespn", name="Adrian", profile_image_url="https://img/1.png", verified=True)


def test_flat_author_builds_the_nested_one() -> None:
    p = Post.model_validate(post(author_username="nflnews", author_id="42"))
    assert p.author is not None and p.author.username == "nflnews"
    assert p.author_username == "nflnews" and p.author_id == "42"


def test_the_author_built_from_the_flat_form_is_the_one_model_construct_made() -> None:
    """Built by pydantic-core for speed; it must be indistinguishable from the Python way:
    the same fields, only ``username`` set (``exclude_unset`` dumps), no extras, a fresh
    instance per post."""
    from sports_posts.models.post import Author

    body = json.dumps(page([post(author_username="nflnews"), post(author_username="nflnews")]))
    first, second = sp.PostsResponse.model_validate_json(body).items
    expected = Author.model_construct(username="nflnews")
    for built in (first.author, second.author):
        assert type(built) is Author and built == expected
        assert built.__pydantic_fields_set__ == expected.__pydantic_fields_set__ == {"username"}
        assert built.model_extra == {} and built.model_dump(exclude_unset=True) == {"username": "nflnews"}
    assert first.author is not second.author


def test_nested_author_fills_the_flat_one() -> None:
    p = Post.model_validate(NESTED)
    assert p.author_username == "wojespn"
    assert p.author is not None and p.author.verified is True and p.author.name == "Adrian"
    assert p.teams[0].provider1_guid_id == "s:1~l:46~t:1" and p.players[0].service_id == 7
    assert p.media[0].type == "animated_gif" and p.media[0].duration_ms == 4000


def test_both_author_forms_given_are_both_kept() -> None:
    p = Post.model_validate({**NESTED, "author_username": "other", "author_id": "9"})
    assert p.author_username == "other" and p.author is not None and p.author.username == "wojespn"


@pytest.mark.parametrize("media_type", ["image", "video", "none", "photo", "gif", "animated_gif", "text", "hologram"])
def test_media_type_accepts_both_vocabularies_and_new_values(media_type: str) -> None:
    assert Post.model_validate(post(media_type=media_type)).media_type == media_type


def test_open_vocabularies_take_any_string_and_refuse_other_types() -> None:
    """Validated as one string (not a Literal-then-str union), with the same outcomes: any
    string kept as sent, a number refused where the model does not turn numbers into text
    (``Post`` does, for ids exported as numbers) and refused with a typed error."""
    from pydantic import ValidationError

    from sports_posts.models.post import Media
    from sports_posts.webhooks.events import BreakingNewsData

    assert Media.model_validate(spec_media(type="hologram")).type == "hologram"
    assert Post.model_validate(post(media_type=3)).media_type == "3"
    with pytest.raises(ValidationError, match="valid string"):
        Media.model_validate(spec_media(type=5))
    data = {"id": "1", "post_url": "u", "text": "t", "event_id": "e", "league": "KABADDI",
            "news_type": "rumour_mill", "news_status": "developing", "news_origin": "wire"}
    parsed = BreakingNewsData.model_validate(data)
    assert (parsed.league, parsed.news_type, parsed.news_status, parsed.news_origin) == (
        "KABADDI", "rumour_mill", "developing", "wire")
    with pytest.raises(ValidationError, match="league"):
        BreakingNewsData.model_validate({**data, "league": ["NFL"]})


def test_open_vocabularies_keep_their_known_values_in_the_json_schema() -> None:
    """Editors and generated docs still list the known values, then any other string."""
    from sports_posts.models.post import Media
    from sports_posts.webhooks.events import BreakingNewsData

    known = ["image", "photo", "video", "gif", "animated_gif", "none"]
    listed = {"anyOf": [{"enum": known, "type": "string"}, {"type": "string"}]}
    assert Post.model_json_schema()["properties"]["media_type"]["anyOf"] == listed["anyOf"]
    assert Media.model_json_schema()["properties"]["type"]["anyOf"] == listed["anyOf"]
    league = BreakingNewsData.model_json_schema()["properties"]["league"]
    assert league["anyOf"][0]["enum"][:3] == ["NFL", "NCAAFB", "NBA"] and league["anyOf"][1] == {"type": "string"}


@pytest.mark.parametrize(
    "stamp",
    ["2024-05-01T12:00:00Z", "2024-05-01T12:00:00+00:00", "2024-05-01T14:00:00+02:00",
     "2024-05-01T07:00:00-05:00", "2024-05-01T12:00:00.000Z", "2024-05-01T12:00:00"],
)
def test_timestamps_with_any_offset_become_aware_utc(stamp: str) -> None:
    created = Post.model_validate(post(created_at=stamp)).created_at
    assert created == datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
    assert created.utcoffset() is not None and created.tzinfo == timezone.utc


@pytest.mark.parametrize("limit", [10, 20, 50, 100])
def test_both_documented_limits_parse(limit: int) -> None:
    body = sp.PostsResponse.model_validate(page([post()], limit=limit))
    assert body.pagination.limit == limit


def test_unknown_fields_are_kept() -> None:
    p = Post.model_validate(post(sentiment="positive", media=[spec_media(codec="av1")]))
    assert p.model_extra == {"sentiment": "positive"}
    assert p.media[0].model_extra == {"codec": "av1"}


def test_lenient_where_the_wire_varies() -> None:
    p = Post.model_validate({**without(post(like_count="12", author_id=5), "author_username"), "id": 17})
    assert p.id == "17" and p.author_id == "5" and p.like_count == 12 and p.author is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (page([post(created_at="not a date")]), "items.0.created_at"),
        (page([post(), {"text": "no id"}]), "items.1.id"),
        ({"pagination": spec_pagination(page="first"), "items": []}, "pagination.page"),
        ({"pagination": spec_pagination(), "items": "nope"}, "items"),
        ({"pagination": spec_pagination(), "items": {"0": post()}}, "items"),
        ({"pagination": spec_pagination(), "items": ["1", "2"]}, "items.0"),
        ({"pagination": spec_pagination(), "items": [post(), None]}, "items.1"),
        ({"pagination": spec_pagination(), "items": [[post()]]}, "items.0"),
        ({"pagination": None, "items": []}, "pagination"),
        ({"pagination": [1], "items": []}, "pagination"),
        ({"items": [post()]}, "pagination"),
    ],
)
def test_a_2xx_body_that_does_not_parse_names_the_field(
    runner: Runner, api: respx.MockRouter, body: Any, field: str
) -> None:
    api.get("/posts").respond(200, json=body)
    with pytest.raises(sp.APIResponseValidationError) as info:
        runner.run(lambda c: c.posts.list())
    assert info.value.field == field
    assert field in str(info.value)
    assert info.value.body is not None and json.loads(info.value.body) == body  # nothing lost


@pytest.mark.parametrize("content", [b"<html>OK</html>", b"", b'{"items": [', b"\xff\xfe", b"[]", b"null"])
def test_garbage_2xx_bodies_raise_response_validation_error(
    runner: Runner, api: respx.MockRouter, content: bytes
) -> None:
    api.get("/account/information").respond(200, content=content)
    with pytest.raises(sp.APIResponseValidationError):
        runner.run(lambda c: c.account.information())


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
_post_like = st.fixed_dictionaries(
    {"id": st.one_of(st.text(max_size=5), st.integers(), st.none())},
    optional=dict.fromkeys(("created_at", "author", "author_username", "teams", "media", "media_type", "like_count"), _json),
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(_json, st.fixed_dictionaries({"pagination": _json, "items": st.lists(_post_like, max_size=3)})))
def test_arbitrary_json_parses_or_raises_a_typed_error(body: Any) -> None:
    import httpx

    from sports_posts._endpoints import posts_list
    from tests.client.bodies import parse_response

    response = httpx.Response(200, content=json.dumps(body).encode())
    try:
        result = parse_response(posts_list({}), response)
    except sp.APIResponseValidationError:
        return
    assert isinstance(result, sp.PostsResponse)


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/account/x-ids", {"as_of": "2024-05-01T00:00:00Z"}, "ids_to_delete"),
        ("/account/information", without(spec_account(), "billing_cycle"), "billing_cycle"),
        ("/posts", {"pagination": spec_pagination()}, "items"),
        ("/posts", {"items": []}, "pagination"),
        ("/ids", {"ok": True, "count": 3}, "items"),
    ],
)
def test_a_missing_section_is_an_error_not_an_empty_answer(
    runner: Runner, api: respx.MockRouter, path: str, body: Any, field: str
) -> None:
    """A compliance list without ids_to_delete must not read as "nothing to delete"."""
    api.get(path).respond(200, json=body)
    calls = {
        "/account/x-ids": lambda c: c.account.x_ids(),
        "/account/information": lambda c: c.account.information(),
        "/posts": lambda c: c.posts.list(),
        "/ids": lambda c: c.ids.teams("NBA"),
    }
    with pytest.raises(sp.APIResponseValidationError) as info:
        runner.run(calls[path])
    assert info.value.field == field


def test_a_parse_leaves_the_garbage_collector_as_the_process_set_it() -> None:
    """A library does not toggle process-wide state: a parse never disables the collector,
    and one a customer's thread disabled stays disabled (issue 52)."""
    import gc

    import httpx

    from sports_posts._endpoints import posts_list
    from tests.client.bodies import parse_response

    seen: list[bool] = []
    call = posts_list({})
    spy = call.__class__(call.method, call.path, call.params,
                         lambda body: (seen.append(gc.isenabled()), sp.PostsResponse.model_validate_json(body))[1])  # type: ignore[func-returns-value]
    assert gc.isenabled()
    parse_response(spy, httpx.Response(200, content=json.dumps(page([post()])).encode()))
    assert seen == [True] and gc.isenabled()
    gc.disable()
    try:
        parse_response(spy, httpx.Response(200, content=json.dumps(page([])).encode()))
        assert seen == [True, False] and not gc.isenabled(), "a collector the caller disabled stays disabled"
    finally:
        gc.enable()


AUTHOR_FORMS = st.fixed_dictionaries(
    {},
    optional={
        "author_username": st.one_of(st.none(), st.text(max_size=8)),
        "author": st.one_of(st.none(), st.fixed_dictionaries({"username": st.text(max_size=8)})),
    },
)


@settings(max_examples=60, deadline=None)
@given(forms=st.lists(AUTHOR_FORMS, min_size=1, max_size=4))
def test_a_page_fills_the_author_forms_as_a_post_alone_does(forms: list[dict[str, Any]]) -> None:
    # A page fills its posts in one loop instead of a model_post_init per post: same result.
    bare = {key: value for key, value in post().items() if key != "author_username"}
    items = [{**bare, **form} for form in forms]
    paged = sp.PostsResponse.model_validate_json(json.dumps(page(items))).items
    for item, in_page in zip(items, paged):
        alone = Post.model_validate_json(json.dumps(item))
        assert type(in_page) is Post
        assert in_page.model_dump() == alone.model_dump()
        assert in_page.model_fields_set == alone.model_fields_set


def test_a_page_of_flat_and_nested_posts_fills_both_forms() -> None:
    body = sp.PostsResponse.model_validate_json(json.dumps(page([post(author_username="nflnews"), NESTED])))
    assert body.items[0].author is not None and body.items[0].author.username == "nflnews"
    assert body.items[1].author_username == "wojespn"


def test_a_page_fills_its_posts_through_pydantics_own_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each post of a page is filled by ``Post.model_post_init``, as a post alone is: the
    page is validated by the validator pydantic built, none is swapped in (issue 52)."""
    calls: list[str] = []
    hook = Post.model_post_init

    def counting(self: Post, context: Any, /) -> None:
        calls.append(self.id)
        hook(self, context)

    monkeypatch.setattr(Post, "model_post_init", counting)
    body = sp.PostsResponse.model_validate_json(json.dumps(page([post(id="1"), post(id="2")])))
    assert calls == ["1", "2"] and all(p.author is not None for p in body.items)
    Post.model_validate(post(id="3"))
    assert calls == ["1", "2", "3"]


TEAM = {"service_id": 7, "location": "Boston", "name": "Celtics", "conference": None, "division": None,
        "league": "NBA"}


def test_team_items_type_their_fields_as_spec_2_8_says() -> None:
    teams = sp.TeamList.model_validate({"ok": True, "count": 1, "items": [TEAM]})
    ids: list[int] = [team.service_id for team in teams]  # int, not Optional[int]
    assert ids == [7] and teams.items[0].conference is None and teams.count == 1


@pytest.mark.parametrize("field", ["service_id", "location", "name", "league"])
def test_a_team_item_without_a_field_spec_2_8_requires_is_refused(field: str) -> None:
    item = {k: v for k, v in TEAM.items() if k != field}
    with pytest.raises(ValueError, match=field):
        sp.TeamList.model_validate({"ok": True, "count": 1, "items": [item]})


@pytest.mark.parametrize("model", [sp.TaggedTeam, sp.TaggedPlayer])
@pytest.mark.parametrize("field", ["provider1_guid_id", "service_id", "name"])
def test_a_tagged_team_or_player_has_every_field_of_spec_2_3(model: type[sp.TaggedTeam], field: str) -> None:
    tagged = {"provider1_guid_id": "s:1~l:2~t:3", "service_id": 3, "name": "Celtics"}
    assert model.model_validate(tagged).service_id == 3
    with pytest.raises(ValueError, match=field):
        model.model_validate({k: v for k, v in tagged.items() if k != field})
