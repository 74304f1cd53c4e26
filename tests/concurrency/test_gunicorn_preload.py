"""gunicorn ``--preload -w 4`` with uvicorn workers: the app module is imported once, uses
a client (and a webhook receiver) at import, then the master forks four workers. Every
request is answered with the page it asked for; every new story with a 2xx (issue 48, item 4).

The sandbox runs in this test process on loopback; gunicorn is a real process tree."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from sports_posts.sandbox import Sandbox
from sports_posts.webhooks import build_test_request, sample_payload
from support.process_models import Gunicorn, app_dir, gunicorn

from .pages import ask

pytestmark = [pytest.mark.processes, pytest.mark.slow]

SECRET = "whsec_gunicorn_preload"

# The customer's module, as a --preload app is written: everything made at import.
APP = '''
import asyncio
import json
import os

import anyio

import sports_posts as sp
from sports_posts.webhooks import MemoryDedupeStore, WebhookReceiver, build_test_request, sample_payload
from sports_posts.webhooks.adapters.asgi import WebhookASGIApp

KEY, URL = os.environ["SP_API_KEY"], os.environ["SP_BASE_URL"]
client = sp.SportsPosts(api_key=KEY, base_url=URL, max_retries=0, timeout=15)
client.account.x_ids()  # used once at import, before the fork: its pool holds a connection

aclient = sp.AsyncSportsPosts(api_key=KEY, base_url=URL, max_retries=0, timeout=15)
asyncio.run(aclient.account.x_ids())  # a start-up check on a loop of its own, before the fork


def record(event):
    line = f"{os.getpid()} {event.data.id}\\n".encode()
    fd = os.open(os.environ["SP_RECORD"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line)  # one write of a short line under O_APPEND: never interleaved
    finally:
        os.close(fd)


receiver = WebhookReceiver(os.environ["SP_SECRET"], record, store=MemoryDedupeStore(), handler_timeout=3)
warm_up = build_test_request(sample_payload("breaking_news"), os.environ["SP_SECRET"])
assert receiver.handle(warm_up.body, warm_up.headers).status == 202  # docs/webhooks.md's first block
hooks = WebhookASGIApp(receiver)


def page(params):
    got = client.posts.list(**params)
    return got


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    pid = str(os.getpid()).encode()

    async def send_with_pid(message):
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), (b"x-worker-pid", pid)]}
        await send(message)

    if scope["path"] == "/hooks":
        await hooks(scope, receive, send_with_pid)
        return
    query = dict(part.split("=", 1) for part in scope["query_string"].decode().split("&") if part)
    if scope["path"] in ("/page", "/apage"):
        params = {"leagues": query["leagues"], "limit": int(query["limit"]), "page": int(query["page"])}
        try:
            if scope["path"] == "/page":
                got = await anyio.to_thread.run_sync(lambda: client.posts.list(**params))
            else:
                got = await aclient.posts.list(**params)
            status, body = 200, {
                "leagues": sorted({post.league for post in got.items}), "count": len(got.items),
                "page": got.pagination.page, "limit": got.pagination.limit,
            }
        except sp.SportsPostsError as exc:
            status, body = 502, {"error": f"{type(exc).__name__}: {exc}"[:300]}
    else:
        status, body = 200, {"ok": True}
    await send_with_pid({"type": "http.response.start", "status": status,
                         "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})
'''


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(seed=48, clock="manual", posts=1500) as sb:
        yield sb


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("stories") / "recorded.txt"


@pytest.fixture(scope="module")
def server(sandbox: Sandbox, record: Path) -> Iterator[Gunicorn]:
    env = {"SP_API_KEY": sandbox.api_key, "SP_BASE_URL": sandbox.base_url, "SP_SECRET": SECRET,
           "SP_RECORD": str(record)}
    with app_dir({"preload_app": APP}) as where, gunicorn("preload_app:app", pythonpath=[where.path], env=env) as g:
        yield g


def _get(http: httpx.Client, path: str, n: int) -> tuple[str, str]:
    params = ask(n)
    answer = http.get(path, params=params)
    want = {"leagues": [params["leagues"]], "count": params["limit"], "page": params["page"],
            "limit": params["limit"]}
    got = answer.json()
    return answer.headers.get("x-worker-pid", "?"), "" if (answer.status_code, got) == (200, want) else \
        f"{path} asked {want}, answered {answer.status_code} {got}"


@pytest.mark.parametrize("path", ["/page", "/apage"])
def test_200_requests_each_answered_with_the_page_it_asked_for(server: Gunicorn, path: str) -> None:
    # Failed before the client's pool was per process (sync) and per loop (async): the sync
    # route served pages another worker had asked for; the async route's first request in
    # each worker met the start-up loop's dead connection.
    # A connection per request: each is accepted by whichever worker is free, so the
    # requests spread over the workers instead of following a few kept-alive connections.
    fresh = httpx.Limits(max_keepalive_connections=0)
    with httpx.Client(base_url=server.url, timeout=60, limits=fresh) as http, ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda n: _get(http, path, n), range(200)))
    wrong = [why for _, why in answers if why]
    assert wrong == [], f"{len(wrong)} of 200 wrong, e.g. {wrong[:3]}\n{server.log_text()[-2000:]}"
    assert len({pid for pid, _ in answers}) > 1, "the requests reached more than one forked worker"


def test_new_stories_are_answered_2xx_by_every_worker(server: Gunicorn, record: Path) -> None:
    # The receiver handled one request before the fork (docs/webhooks.md's first block):
    # its thread pool must be the worker's own, not the parent's dead one (503 handler_timeout).
    stories = [build_test_request(sample_payload("breaking_news"), SECRET) for _ in range(40)]

    def deliver(story: object) -> tuple[str, int, str]:
        answer = http.post("/hooks", content=story.body, headers=dict(story.headers))  # type: ignore[attr-defined]
        return answer.headers.get("x-worker-pid", "?"), answer.status_code, answer.text[:200]

    fresh = httpx.Limits(max_keepalive_connections=0)  # a connection per story: spread over the workers
    with httpx.Client(base_url=server.url, timeout=60, limits=fresh) as http, ThreadPoolExecutor(8) as pool:
        # One at a time first: a worker's first story has no other story beside it (a second
        # one would start the thread the first is waiting for), as at a quiet hour.
        answers = [deliver(story) for story in stories[:8]]
        answers += pool.map(deliver, stories[8:])  # then at once, reaching every worker
    failed = [(pid, status, text) for pid, status, text in answers if not 200 <= status < 300]
    assert failed == [], f"{len(failed)} of {len(stories)} stories not 2xx: {failed[:4]}"
    assert len({pid for pid, _, _ in answers}) > 1, "the stories reached more than one forked worker"
    recorded = [line.split() for line in record.read_text().splitlines()]
    ids = [json.loads(story.body)["data"]["id"] for story in stories]
    assert sorted(story_id for _, story_id in recorded if story_id in ids) == sorted(ids), "each story once"
    assert all(pid != str(os.getpid()) for pid, _ in recorded)
