"""Checked by the repository's ``mypy --strict ... tests`` (``.ci/run``, CONTRIBUTING.md),
never run: what type checkers infer for ``with_raw_response`` (each ``assert_type`` fails
the check if the type differs, ``Any`` included)."""

from __future__ import annotations

from typing_extensions import assert_type

import sports_posts as sp
from sports_posts.models.account import AccountInformation, ComplianceList
from sports_posts.models.ids import IdList, TeamList


def sync_view(client: sp.SportsPosts) -> None:
    raw = client.with_raw_response
    assert_type(raw.posts.list(leagues="NFL"), sp.RawResponse[sp.SyncPage[sp.Post]])
    assert_type(raw.posts.list(leagues="NFL").parse(), sp.SyncPage[sp.Post])
    assert_type(raw.posts.trending(limit=1), sp.RawResponse[sp.SyncPage[sp.Post]])
    assert_type(raw.posts.by_team("1,2", id_type="service"), sp.RawResponse[sp.SyncPage[sp.Post]])
    assert_type(
        raw.posts.for_game("1,2", "2026-01-01T00:00:00Z", include_pregame=True),
        sp.RawResponse[sp.SyncPage[sp.Post]],
    )
    assert_type(raw.account.information(), sp.RawResponse[AccountInformation])
    assert_type(raw.account.x_ids(timeout=5.0), sp.RawResponse[ComplianceList])
    assert_type(raw.ids.teams("NFL"), sp.RawResponse[TeamList])
    assert_type(raw.ids.list("players", "NFL"), sp.RawResponse[IdList])
    assert_type(raw.with_options(max_retries=0).account.information(), sp.RawResponse[AccountInformation])
    raw.posts.list(leagues=3)  # type: ignore[arg-type]  # the parameters stay checked
    raw.posts.poll()  # type: ignore[attr-defined]  # many calls: not on the raw view
    raw.account.compliance_sweep(delete=print)  # type: ignore[attr-defined]


async def async_view(client: sp.AsyncSportsPosts) -> None:
    raw = client.with_raw_response
    assert_type(await raw.posts.list(leagues="NFL"), sp.RawResponse[sp.AsyncPage[sp.Post]])
    assert_type(await raw.posts.by_league("NFL"), sp.RawResponse[sp.AsyncPage[sp.Post]])
    assert_type(await raw.account.information(), sp.RawResponse[AccountInformation])
    assert_type(await raw.account.x_ids(), sp.RawResponse[ComplianceList])
    assert_type(await raw.ids.teams("NFL"), sp.RawResponse[TeamList])
    assert_type(await raw.ids.list("players", "NFL"), sp.RawResponse[IdList])
    assert_type(
        await raw.with_options(timeout=5.0).posts.nearby(40.7, -74.0, radius_km=5),
        sp.RawResponse[sp.AsyncPage[sp.Post]],
    )
    raw.ids.teams(1)  # type: ignore[arg-type]
