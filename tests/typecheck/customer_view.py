"""What an editor shows a customer for the main calls, pinned with ``assert_type``.

Never run: ``.ci/typecheck`` type-checks this file (``mypy --strict`` and basedpyright in
strict mode) against the installed wheel. A type that widens to ``Any`` or keeps a type
variable fails there.
"""

from __future__ import annotations

import asyncio
import time
from typing import Optional

from typing_extensions import assert_type

import sports_posts
import sports_posts.testing
from sports_posts import (
    AccountInformation,
    AsyncComplianceSweeper,
    AsyncPage,
    AsyncPoller,
    AsyncSportsPosts,
    BudgetDraw,
    BudgetStatus,
    CallBudget,
    ComplianceList,
    ComplianceSweeper,
    FileCheckpoint,
    IdList,
    Poller,
    Post,
    RawResponse,
    SportsPosts,
    SweepResult,
    SyncPage,
    TeamList,
)
from sports_posts.polling import Lease, LeaseStatus
from sports_posts.sandbox import Sandbox, connect
from sports_posts.webhooks import (
    BreakingNewsEvent,
    BreakingNewsPayload,
    BreakingNewsUpdateEvent,
    BreakingNewsUpdatePayload,
    InboxEntry,
    MemoryDedupeStore,
    RedisInbox,
    SQLiteDedupeStore,
    SQLiteInbox,
    WebhookEvent,
    WebhookPayload,
    WebhookReceiver,
    build_test_request,
    construct_event,
    sample_payload,
)


def injected_sleeps(waits: sports_posts.testing.RetryWaits) -> None:
    client = SportsPosts(sleep=waits.sleep)
    assert_type(client.with_options(sleep=time.sleep), SportsPosts)
    assert_type(client.with_options(sleep=None), SportsPosts)
    aclient = AsyncSportsPosts(sleep=waits.async_sleep)
    assert_type(aclient.with_options(sleep=asyncio.sleep), AsyncSportsPosts)
    assert_type(waits.waits, list[float])
    SportsPosts(sleep=waits.async_sleep)  # type: ignore[arg-type]  # a sync client does not await
    AsyncSportsPosts(sleep=time.sleep)  # type: ignore[arg-type]  # an async client awaits its sleep


def sync_client(client: SportsPosts) -> None:
    page = client.posts.list(leagues="NFL", limit=10)
    assert_type(page, SyncPage[Post])
    assert_type(page.items, list[Post])
    assert_type(page.next_page(), Optional[SyncPage[Post]])
    for post in page:
        assert_type(post, Post)
        assert_type(post.id, str)
    for item in page.iter_items(max_items=5):
        assert_type(item, Post)
    assert_type(client.posts.trending(), SyncPage[Post])
    assert_type(client.account.information(), AccountInformation)
    assert_type(client.account.x_ids(), ComplianceList)
    teams = client.ids.teams("NFL")
    assert_type(teams, TeamList)
    ids: list[int] = [team.service_id for team in teams]
    assert_type(ids, list[int])
    assert_type(client.ids.list("teams", "NFL"), IdList)
    raw = client.with_raw_response.posts.list(leagues="NFL")
    assert_type(raw, RawResponse[SyncPage[Post]])
    assert_type(raw.parse(), SyncPage[Post])
    poller = client.posts.poll(leagues="NFL", checkpoint=FileCheckpoint("nfl.json"))
    assert_type(poller, Poller)
    for batch in poller:
        assert_type(batch, list[Post])


async def async_client(aclient: AsyncSportsPosts) -> None:
    pending = aclient.posts.list(leagues="NFL")
    assert_type(pending, AsyncPage[Post])
    page = await pending
    assert_type(page, AsyncPage[Post])
    async for post in aclient.posts.list(leagues="NFL"):
        assert_type(post, Post)
    async for item in page.iter_items(max_items=5):
        assert_type(item, Post)
    assert_type(await aclient.account.information(), AccountInformation)
    raw = await aclient.with_raw_response.posts.list(leagues="NFL")
    assert_type(raw, RawResponse[AsyncPage[Post]])
    poller = aclient.posts.poll(leagues="NFL")
    assert_type(poller, AsyncPoller)
    async for batch in poller:
        assert_type(batch, list[Post])


def webhooks(body: bytes, headers: dict[str, str]) -> None:
    event = construct_event(body, headers, "whsec_example")
    assert_type(event, WebhookEvent)
    if event.event == "breaking_news":
        assert_type(event, BreakingNewsEvent)
    else:
        assert_type(event, BreakingNewsUpdateEvent)
    if isinstance(event, BreakingNewsUpdateEvent):
        assert_type(event.data.event_id, str)
    assert_type(event.delivery_id, Optional[str])
    receiver = WebhookReceiver("whsec_example", lambda event: None)
    status, answer = receiver.handle(body, headers)  # the docs' form: an int and bytes
    assert_type(status, int)
    assert_type(answer, bytes)
    response = receiver.handle(body, headers)
    assert_type(response.outcome, str)
    assert_type(response.headers, tuple[tuple[str, str], ...])


def stores(path: str) -> None:
    memory = MemoryDedupeStore()
    assert_type(memory.claim("k"), bool)
    assert_type(memory.complete("k"), None)
    sqlite = SQLiteDedupeStore(path)
    assert_type(sqlite.claim("k"), bool)
    inbox = SQLiteInbox(path)
    assert_type(inbox.put("k", b"{}"), bool)
    entries = inbox.take_due()
    assert_type(entries, list[InboxEntry])
    for entry in entries:
        inbox.mark_done(entry)
    assert_type(inbox.counts(), dict[str, int])
    redis_inbox = RedisInbox("redis://127.0.0.1:6379/0")
    assert_type(redis_inbox.take_due(), list[InboxEntry])


def fleet(url: str) -> None:
    budget = CallBudget(url, per_minute=60)
    assert_type(budget.try_acquire(), BudgetDraw)
    assert_type(budget.status(), BudgetStatus)
    lease = Lease(url, key="nfl")
    assert_type(lease.acquire(), Optional[int])
    assert_type(lease.status(), LeaseStatus)


def sandbox() -> None:
    with Sandbox(seed=7) as sb:
        assert_type(sb, Sandbox)
        assert_type(sb.base_url, str)
        assert_type(sb.api_key, str)
        client = SportsPosts(api_key=sb.api_key, base_url=sb.base_url)
        assert_type(client.posts.list(), SyncPage[Post])
        sent = sb.send_breaking_news("NFL", news_type="trade", alt_sources=[{"source": "Wire", "role": "alt"}])
        assert_type(sent, BreakingNewsPayload)
        assert_type(sb.send_update(sent["data"]["event_id"])["data"]["update_of"], str)


def compliance(client: SportsPosts, aclient: AsyncSportsPosts) -> None:
    sweeper = ComplianceSweeper(client, delete=print)
    assert_type(sweeper.sweep(), SweepResult)
    assert_type(AsyncComplianceSweeper(aclient, delete=print), AsyncComplianceSweeper)
    assert_type(client.account.compliance_sweeper(delete=print), ComplianceSweeper)


def refusals(client: SportsPosts) -> None:
    # mypy --strict warns about an unused ignore: each line below must stay an error
    sports_posts.SportsPost  # type: ignore[attr-defined]  # noqa: B018  # a typo, not Any
    client.posts.list(leagus="NFL")  # type: ignore[call-arg]  # options are a TypedDict
    connect(sede=4)  # type: ignore[call-arg]
    sample_payload(leage="NFL")  # type: ignore[call-overload]  # the payload's fields are a TypedDict
    sample_payload("breaking_news")["data"]["update_of"]  # type: ignore[typeddict-item]


def payloads(kind: str) -> None:
    """A webhook payload as JSON: each key checked, each event kind its own data."""
    first = sample_payload("breaking_news", league="NBA", players=[{"service": 1, "name": "A"}])
    assert_type(first, BreakingNewsPayload)
    assert_type(first["data"]["event_id"], str)
    assert_type(first["data"]["players"][0]["service"], int)
    update = sample_payload("breaking_news.update", whats_new="Surgery on Tuesday")
    assert_type(update, BreakingNewsUpdatePayload)
    assert_type(update["data"]["update_of"], str)
    either = sample_payload(kind)
    assert_type(either, WebhookPayload)
    if either["event"] == "breaking_news.update":
        assert_type(either["data"]["whats_new"], str)
    assert_type(build_test_request(either, "whsec_x").body, bytes)


def fixtures(make: sports_posts.testing.WebhookRequestFactory, send: sports_posts.testing.StorySender) -> None:
    """The plugin's fixtures as a strictly typed test module annotates them."""
    request = make("breaking_news", secret="whsec_x", league="NFL")
    assert_type(request.body, bytes)
    story = send("http://127.0.0.1:8080/webhooks", league="NFL", update="what's new")
    assert_type(story, sports_posts.testing.SentStory)
    assert_type(story.delivered, bool)
    assert_type(story.status_codes, list[Optional[int]])
    assert_type(story.payloads, list[WebhookPayload])
    assert_type(story.payloads[0]["data"]["event_id"], str)
    make(payload=sample_payload(), news_status="rumor")
