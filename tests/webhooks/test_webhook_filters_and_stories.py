"""SubscriptionFilter (spec 6.4) and thread_stories (event_id / update_of threading)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from sports_posts import ParameterError
from sports_posts.webhooks import (
    BreakingNewsEvent,
    BreakingNewsUpdateEvent,
    SubscriptionFilter,
    WebhookEvent,
    construct_event,
    thread_stories,
)
from tests.webhooks.webhook_helpers import SECRET, signed


def _event(kind: str = "breaking_news", **data: Any) -> WebhookEvent:
    request = signed(kind, **data)
    return construct_event(request.body, request.headers, SECRET)


def _sent_at(event: WebhookEvent, iso: str) -> WebhookEvent:
    return event.model_copy(update={"sent_at": datetime.fromisoformat(iso)})


def test_an_empty_filter_matches_everything() -> None:
    assert SubscriptionFilter().matches(_event(league="MMA", news_type="other", news_status="rumor"))


def test_values_within_a_group_combine_with_or() -> None:
    nfl_or_nba = SubscriptionFilter(leagues=["NFL", "NBA"])
    assert nfl_or_nba.matches(_event(league="NFL"))
    assert nfl_or_nba.matches(_event(league="NBA"))
    assert not nfl_or_nba.matches(_event(league="MLB"))


def test_groups_combine_with_and() -> None:
    f = SubscriptionFilter(leagues=["NFL"], news_types=["trade", "injury"], news_statuses=["verified"],
                           news_origins=["breaking"])
    assert f.matches(_event(league="NFL", news_type="trade", news_status="verified", news_origin="breaking"))
    assert not f.matches(_event(league="NFL", news_type="trade", news_status="rumor", news_origin="breaking"))
    assert not f.matches(_event(league="NBA", news_type="trade", news_status="verified", news_origin="breaking"))
    assert not f.matches(_event(league="NFL", news_type="draft", news_status="verified", news_origin="breaking"))
    assert not f.matches(_event(league="NFL", news_type="trade", news_status="verified", news_origin="relaying"))


def test_league_codes_match_case_insensitively() -> None:
    assert SubscriptionFilter(leagues=["nfl"]).matches(_event(league="NFL"))
    assert SubscriptionFilter(leagues="NFL").matches(_event(league="nfl"))  # one string is one value


def test_an_update_without_news_origin_is_not_excluded_by_the_origin_group() -> None:
    update = _event("breaking_news.update")
    assert update.data.news_origin is None
    assert SubscriptionFilter(news_origins=["breaking"]).matches(update)
    assert not SubscriptionFilter(news_origins=["breaking"], leagues=["NBA"]).matches(update)


def test_confirmed_in_a_payload_counts_as_the_verified_filter_value() -> None:
    assert SubscriptionFilter(news_statuses=["verified"]).matches(_event(news_status="confirmed"))
    assert SubscriptionFilter(news_statuses=["confirmed"]).matches(_event(news_status="verified"))
    assert not SubscriptionFilter(news_statuses=["verified"]).matches(_event(news_status="rumor"))


def test_matches_accepts_the_data_object_too() -> None:
    event = _event(news_status="rumor")
    assert SubscriptionFilter(news_statuses=["rumor"]).matches(event.data)


@pytest.mark.parametrize("bad", [[1], 3, [None]])
def test_a_non_string_filter_value_is_a_parameter_error(bad: Any) -> None:
    with pytest.raises(ParameterError):
        SubscriptionFilter(leagues=bad)


def test_repr_shows_the_groups() -> None:
    assert repr(SubscriptionFilter(leagues=["nba"])) == "SubscriptionFilter(leagues=['NBA'])"


def test_an_event_and_its_updates_thread_into_one_story_with_alt_sources_attached() -> None:
    alt_a = {"post_url": "https://x.com/a/1", "source": "x", "role": "alt", "text": "A"}
    alt_b = {"post_url": "https://x.com/b/2", "source": "x", "role": "alt", "text": "B"}
    original = _sent_at(_event(id="1", event_id="evt_1", alt_sources=[alt_a]), "2026-01-01T10:00:00+00:00")
    update_2 = _sent_at(_event("breaking_news.update", id="3", event_id="evt_1", update_of="evt_1",
                               alt_sources=[alt_a, alt_b]), "2026-01-01T12:00:00+00:00")
    update_1 = _sent_at(_event("breaking_news.update", id="2", event_id="evt_1", update_of="evt_1"),
                        "2026-01-01T11:00:00+00:00")
    other = _sent_at(_event(id="9", event_id="evt_2"), "2026-01-01T09:00:00+00:00")
    retry = original.model_copy()  # a second delivery of the same story

    stories = thread_stories([update_2, original, other, update_1, retry])

    assert [s.event_id for s in stories] == ["evt_2", "evt_1"]  # oldest story first
    story = stories[1]
    assert isinstance(story.original, BreakingNewsEvent) and story.original.data.id == "1"
    assert [u.data.id for u in story.updates] == ["2", "3"]
    assert all(isinstance(u, BreakingNewsUpdateEvent) for u in story.updates)
    assert [a.post_url for a in story.alt_sources] == ["https://x.com/a/1", "https://x.com/b/2"]
    assert story.latest.data.id == "3"
    assert [e.data.id for e in story.events] == ["1", "2", "3"]


def test_an_update_that_arrives_before_its_original_still_starts_the_story() -> None:
    update = _event("breaking_news.update", id="2", event_id="evt_7", update_of="evt_7")
    (story,) = thread_stories([update])
    assert story.event_id == "evt_7" and story.original is None and story.latest is update
