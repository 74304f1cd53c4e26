"""A checkpoint's filters are compared as the service compares them: ``leagues="NFL"`` and
``leagues="nfl"`` are one feed, and so are a comma list in another order, ``league`` for
``leagues`` and ``soccer`` for ``football``; checkpoints holding a feed as sent still load."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sports_posts import (
    CheckpointMismatchError,
    FileCheckpoint,
    MemoryCheckpoint,
    PollState,
    SportsPosts,
)
from sports_posts._params import LEAGUES, encode_posts_params
from sports_posts.polling._config import same_feed_form
from support.fake_service import T0, FakePostsService

from .conftest import TimeHarness, ids, make_poller


def first_run(client: SportsPosts, service: FakePostsService, harness: TimeHarness, checkpoint: Any,
              **filters: Any) -> list[str]:
    service.publish("nfl-1", 10.0, league="NFL")
    service.publish("nba-1", 20.0, league="NBA")
    harness.until = T0 + timedelta(minutes=2)
    poller = make_poller(client, harness, since=T0, checkpoint=checkpoint, **filters)
    delivered = ids(list(poller))
    assert delivered != []
    poller.close()
    return delivered


@pytest.mark.parametrize(
    ("written", "resumed"),
    [
        ({"leagues": "NFL"}, {"leagues": "nfl"}),
        ({"leagues": "NFL"}, {"league": "Nfl"}),
        ({"leagues": "NFL,NBA"}, {"leagues": ["nba", "NFL"]}),
        ({"leagues": "NFL,NBA"}, {"leagues": "NBA,nfl,NBA"}),
        ({"sports": "soccer"}, {"sports": "Football"}),
        ({"teams": "KC,BUF", "id_type": "code"}, {"teams": ["BUF", "KC"], "id_type": "code"}),
    ],
)
def test_the_same_feed_written_another_way_resumes(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness,
    written: dict[str, Any], resumed: dict[str, Any]
) -> None:
    checkpoint = MemoryCheckpoint()
    before = first_run(client, service, harness, checkpoint, **written)
    service.publish("nfl-2", 150.0, league="NFL")
    harness.until = T0 + timedelta(minutes=4)
    again = make_poller(client, harness, checkpoint=checkpoint, **resumed)
    delivered = ids(list(again))  # no CheckpointMismatchError, and nothing delivered twice
    assert not set(delivered) & set(before)
    again.close()


def test_another_feed_is_still_refused(client: SportsPosts, service: FakePostsService, harness: TimeHarness) -> None:
    checkpoint = MemoryCheckpoint()
    first_run(client, service, harness, checkpoint, leagues="nfl,NBA")
    calls = len(service.requests)
    with pytest.raises(CheckpointMismatchError) as caught:
        list(make_poller(client, harness, checkpoint=checkpoint, leagues="NBA"))
    assert caught.value.differences == ["leagues: stored 'NBA,NFL', now 'NBA'"]
    assert len(service.requests) == calls


def test_a_checkpoint_holding_its_feed_as_sent_still_loads_and_is_rewritten(
    client: SportsPosts, service: FakePostsService, harness: TimeHarness, tmp_path: Path
) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps(PollState.start(T0, filters={"league": "nfl,NBA"}).to_dict()))
    service.publish("nba-1", 10.0, league="NBA")
    harness.until = T0 + timedelta(minutes=2)
    poller = make_poller(client, harness, leagues=["NBA", "NFL"], checkpoint=FileCheckpoint(path))
    assert ids(list(poller)) == ["nba-1"]
    poller.close()
    saved = FileCheckpoint(path).load()
    assert saved is not None and saved.filters == {"leagues": "NBA,NFL"}


_codes = st.lists(st.sampled_from([c for c in LEAGUES if c != "ALL"]), min_size=1, max_size=5)


@given(_codes, st.randoms(use_true_random=False), st.booleans())
def test_the_form_ignores_case_order_repeats_and_the_spelling_of_the_name(
    codes: list[str], rnd: Any, alias: bool
) -> None:
    shuffled = [c.lower() if rnd.random() < 0.5 else c for c in codes + codes[:1]]
    rnd.shuffle(shuffled)
    one = same_feed_form(encode_posts_params({"leagues": ",".join(codes)}))
    other = same_feed_form(encode_posts_params({"league" if alias else "leagues": shuffled}))
    assert one == other == {"leagues": ",".join(sorted(set(codes)))}


def test_values_the_service_may_read_by_case_keep_it() -> None:
    assert same_feed_form({"teams": "kc", "id_type": "code"}) != same_feed_form({"teams": "KC", "id_type": "code"})
    assert same_feed_form({"media_type": "video"}) == {"media_type": "video"}
