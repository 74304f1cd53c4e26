"""``client.posts.poll()`` takes the poller's own options: its clock and its lease."""

from __future__ import annotations

from datetime import timedelta

from sports_posts import SportsPosts
from support.fake_service import T0, FakeClock


def test_poll_takes_the_clock_the_poller_starts_from(client: SportsPosts) -> None:
    ahead = FakeClock(T0 + timedelta(hours=1))
    poller = client.posts.poll(leagues="NFL", interval=60, clock=ahead)
    # an empty checkpoint starts at the clock's now minus the lookback
    assert poller._initial_state(None).floor == ahead() - poller.config.lookback


def test_poll_passes_no_lease_unless_given(client: SportsPosts) -> None:
    poller = client.posts.poll(leagues="NFL")
    assert poller._lease is None
