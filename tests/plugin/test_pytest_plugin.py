"""The pytest plugin as a customer meets it: pytest run on an example project (pytester)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest_plugins = ["pytester"]

# The customer's code: a function that reads posts, and a webhook receiver app.
MYAPP = '''
from sports_posts.webhooks import WebhookReceiver
from sports_posts.webhooks.adapters.asgi import WebhookASGIApp

SECRET = "whsec_my_own_secret"
seen = []

def latest(client, league):
    return client.posts.list(leagues=league, limit=5).items

receiver = WebhookReceiver(SECRET, lambda event: seen.append((event.event, event.data.league)))
app = WebhookASGIApp(receiver)
'''

TESTS = '''
import asyncio

import pytest

import myapp_{n} as myapp


@pytest.fixture
def sports_posts_webhook_secret():
    return myapp.SECRET


def test_reads_posts_and_sees_new_ones_when_the_clock_moves(sports_posts_sandbox, sports_posts_client):
    posts = myapp.latest(sports_posts_client, "NBA")
    assert len(posts) == 5 and {{p.league for p in posts}} == {{"NBA"}}
    before = sports_posts_sandbox.now()
    published = sports_posts_sandbox.publish_post("NHL", text="Overtime winner")
    sports_posts_sandbox.advance(60)
    assert (sports_posts_sandbox.now() - before).total_seconds() == 60
    assert published.id in [p.id for p in sports_posts_client.posts.list(leagues="NHL", sort="recent").items]


def test_code_that_reads_the_environment(sports_posts_env, sports_posts_sandbox):
    from sports_posts import SportsPosts

    assert sports_posts_env is sports_posts_sandbox
    with SportsPosts() as client:
        assert client.base_url == sports_posts_sandbox.base_url
        client.account.x_ids()
    assert sports_posts_sandbox.calls() == 1


@pytest.mark.sports_posts_sandbox(plan="free", leagues=["NFL"])
def test_marker_options(sports_posts_client):
    from sports_posts import PermissionDeniedError

    assert sports_posts_client.account.information().company.plan == "free"
    with pytest.raises(PermissionDeniedError):
        sports_posts_client.posts.list(leagues="NBA")


def test_async_client_under_asyncio_run(sports_posts_async_client):
    async def main():
        return (await sports_posts_async_client.posts.list(leagues="MLB", limit=3)).items

    assert len(asyncio.run(main())) == 3
    assert len(asyncio.run(main())) == 3  # a second loop: nothing pooled on the first


@pytest.mark.anyio
async def test_async_client_under_anyio(sports_posts_async_client):
    info = await sports_posts_async_client.account.information()
    assert info.company.plan == "paid"


def test_signed_request_for_my_receiver(sports_posts_webhook_request):
    request = sports_posts_webhook_request(league="NBA")
    status, _ = myapp.receiver.handle(request.body, request.headers)
    assert status // 100 == 2
    forged = sports_posts_webhook_request(secret="whsec_someone_else")
    assert myapp.receiver.handle(forged.body, forged.headers).status == 401


def test_story_through_the_sandbox_sender_to_my_app(sports_posts_send_story):
    story = sports_posts_send_story(myapp.app, league="NFL", update="Surgery on Tuesday")
    assert story.delivered and [code // 100 for code in story.status_codes] == [2, 2]
    myapp.receiver.wait_idle(timeout=10)
    assert myapp.seen[-2:] == [("breaking_news", "NFL"), ("breaking_news.update", "NFL")]

    refused = sports_posts_send_story(myapp.app, secret="whsec_not_mine")
    assert not refused.delivered and refused.status_codes == [401] * 6  # retried, then dead
'''


def test_a_customer_project_tests_its_integration_with_the_fixtures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**{"myapp_1": MYAPP, "test_integration": TESTS.format(n=1)})
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=7)


def test_fixture_names_are_prefixed_and_documented(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--fixtures", "-p", "no:cacheprovider")
    names = {line.split()[0] for line in result.outlines if line.startswith("sports_posts_")}
    assert names == {
        "sports_posts_sandbox", "sports_posts_env", "sports_posts_client", "sports_posts_async_client",
        "sports_posts_webhook_secret", "sports_posts_webhook_request", "sports_posts_send_story",
    }
    result = pytester.runpytest("--markers", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["@pytest.mark.sports_posts_sandbox(**options)*"])


BLOCK_EXTRA = '''
import sys
sys.modules["uvicorn"] = None  # as if `pip install sports-posts` without [sandbox]
sys.modules["starlette"] = None
'''


def test_without_the_sandbox_extra_only_the_tests_using_a_fixture_fail(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(BLOCK_EXTRA)
    pytester.makepyfile(test_it='''
def test_unrelated():
    assert True

def test_needs_the_sandbox(sports_posts_client):
    pass
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    output = result.stdout.str()
    assert "sports_posts_sandbox: the sandbox needs the 'sandbox' extra: pip install 'sports-posts[sandbox]'" in output
    assert "Traceback" not in output and "During handling" not in output


def test_importing_the_plugin_needs_only_pytest() -> None:
    code = BLOCK_EXTRA + "import sports_posts.testing.pytest_plugin\nprint(sorted(m for m in sys.modules if m.startswith('sports_posts.sandbox')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"  # the sandbox is imported only when a fixture is used
