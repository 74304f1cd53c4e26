"""A first tour of the SDK: every mode of GET /posts, the account, the compliance list, ids.

    python examples/quickstart.py      # an embedded sandbox: no account, no network
    SPORTS_POSTS_API_KEY=... SPORTS_POSTS_BASE_URL=https://.../v1 python examples/quickstart.py

Costs: up to 8 calls (one per listing, two for the videos; the account information is free,
the refused call is never sent).
"""

from __future__ import annotations

from sports_posts import ParameterError, Post, SportsPosts
from sports_posts.sandbox import connect


def show(title: str, posts: list[Post]) -> None:
    print(f"\n{title}")
    for post in posts:
        print(f"  {post.created_at:%Y-%m-%d %H:%M} {post.league:<6} @{post.author_username}: {post.text}")


def tour(client: SportsPosts) -> None:
    show("Trending", client.posts.trending(limit=3).items)
    show("NBA highlights", client.posts.by_league("NBA", highlight=True, limit=3).items)

    teams = client.ids.teams("NFL", reference_id="code")        # alphabetical by location
    team = teams.items[0]
    show(f"{team.location} {team.name} ({team.reference})",
         client.posts.by_team([str(team.service_id)], id_type="service", limit=3).items)

    # Iterating a page walks the following pages too, fetching each only when reached.
    videos = list(client.posts.list(sports="basketball", media_type="video", limit=20).iter_items(max_items=40))
    print(f"\n{len(videos)} basketball videos over {-(-len(videos) // 20)} page(s)")

    try:
        client.posts.by_team([str(n) for n in range(11)], id_type="service")
    except ParameterError as exc:                               # checked locally: nothing spent
        print(f"\nrefused before sending: {exc}")

    # Status and headers of a successful answer (rate-limit headers, say): with_raw_response.
    raw = client.with_raw_response.posts.trending(limit=1, extra_headers={"X-Request-Id": "tour"})
    print(f"\nGET /posts answered {raw.status_code}, {len(raw.parse().items)} post, "
          f"content-type {raw.headers.get('content-type')}")

    info = client.account.information()                         # free: not counted
    print(f"\nplan {info.company.plan}, {info.usage.current_calls} calls this cycle; "
          f"{len(client.account.x_ids().ids_to_delete)} ids to delete; this script: {client.calls} calls")


if __name__ == "__main__":
    with connect() as client:
        tour(client)
