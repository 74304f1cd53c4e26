"""The pytest plugin as a customer meets it: pytest run on an example project (pytester)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

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

# What the worked example of docs/testing.md (run below) does not already show.
TESTS = '''
import pytest

import myapp_{n} as myapp


@pytest.fixture
def sports_posts_webhook_secret():
    return myapp.SECRET


def test_code_that_reads_the_environment(sports_posts_env, sports_posts_sandbox):
    from sports_posts import SportsPosts

    assert sports_posts_env is sports_posts_sandbox
    with SportsPosts() as client:
        assert client.base_url == sports_posts_sandbox.base_url
        client.account.x_ids()
    assert sports_posts_sandbox.calls() == 1


@pytest.mark.anyio
async def test_async_client_under_anyio(sports_posts_async_client):
    info = await sports_posts_async_client.account.information()
    assert info.company.plan == "paid"


def test_a_forged_request_is_refused(sports_posts_webhook_request):
    forged = sports_posts_webhook_request(secret="whsec_someone_else")
    assert myapp.receiver.handle(forged.body, forged.headers).status == 401
    assert myapp.seen == []


def test_a_story_my_app_refuses_is_retried_then_dead(sports_posts_send_story, sports_posts_sandbox):
    story = sports_posts_send_story(myapp.app, path="/hooks", secret="whsec_not_mine", news_type="trade")
    assert not story.delivered and story.status_codes == [401] * 6
    assert [a.outcome for a in story.attempts][-1] == "dead"
    assert {{a.url for a in story.attempts}} == {{story.attempts[0].url}} and story.attempts[0].url.endswith("/hooks")
    assert story.payloads[0]["data"]["news_type"] == "trade" and myapp.seen == []
'''


def test_a_customer_project_tests_its_integration_with_the_fixtures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**{"myapp_1": MYAPP, "test_integration": TESTS.format(n=1)})
    result = pytester.runpytest("-p", "no:cacheprovider")
    # anyio runs the async test on each backend installed: asyncio, and trio (the test extra)
    backends = 2 if importlib.util.find_spec("trio") is not None else 1
    result.assert_outcomes(passed=3 + backends)


def test_the_worked_example_of_docs_testing_md_passes(pytester: pytest.Pytester) -> None:
    """docs/testing.md: its first block is myapp.py, every later block holds tests."""
    page = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
    # a fence may carry a title (```python title="myapp.py"), as the page's blocks do
    blocks = re.findall(r"```python[^\n]*\n(.*?)```", page.read_text("utf-8"), re.S)
    app, *tests = blocks
    pytester.makepyfile(myapp=app, test_myapp="\n\n".join(tests))
    result = pytester.runpytest("-p", "no:cacheprovider")
    # six, plus the mocking section's respx test and its MockTransport test on each library
    # (httpx2 is published for Python 3.10+ only), and the retries section's respx test
    httpx2 = importlib.util.find_spec("httpx2") is not None
    result.assert_outcomes(passed=10 if httpx2 else 9, skipped=0 if httpx2 else 1)


def test_fixture_names_are_prefixed_and_documented(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--fixtures", "-p", "no:cacheprovider")
    names = {line.split()[0] for line in result.outlines if line.startswith("sports_posts_")}
    assert names == {
        "sports_posts_sandbox", "sports_posts_env", "sports_posts_client", "sports_posts_async_client",
        "sports_posts_webhook_secret", "sports_posts_webhook_request", "sports_posts_send_story",
        "sports_posts_webhook_header_names", "sports_posts_retry_waits",
    }
    result = pytester.runpytest("--markers", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["@pytest.mark.sports_posts_sandbox(**options)*"])


BLOCK_EXTRA = '''
import sys
import threading
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
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:schemathesis")
    result.assert_outcomes(passed=1, errors=1)
    output = result.stdout.str()
    assert "sports_posts_sandbox: the sandbox needs the 'sandbox' extra: pip install 'sports-posts[sandbox]'" in output
    assert "Traceback" not in output and "During handling" not in output


def test_importing_the_plugin_needs_only_pytest() -> None:
    code = BLOCK_EXTRA + "import sports_posts.testing.pytest_plugin\nprint(sorted(m for m in sys.modules if m.startswith('sports_posts.sandbox')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"  # the sandbox is imported only when a fixture is used


RENAMED = '''
import pytest
from sports_posts.webhooks import WebhookHeaders, WebhookReceiver
from sports_posts.webhooks.adapters.asgi import WebhookASGIApp

SECRET = "whsec_behind_a_proxy"
NAMES = WebhookHeaders.with_prefix("X-Acme-")
seen = []
receiver = WebhookReceiver(SECRET, lambda event: seen.append(event.delivery_id), header_names=NAMES)
app = WebhookASGIApp(receiver)


@pytest.fixture
def sports_posts_webhook_secret():
    return SECRET


@pytest.fixture
def sports_posts_webhook_header_names():
    return NAMES


def test_a_request_carries_the_overridden_names(sports_posts_webhook_request):
    request = sports_posts_webhook_request()
    assert "X-Acme-Signature" in request.headers and "X-Service-Signature" not in request.headers
    assert receiver.handle(request.body, request.headers).status == 202


def test_a_story_is_sent_under_the_overridden_names(sports_posts_send_story):
    story = sports_posts_send_story(app)
    assert story.delivered and story.status_codes == [202]
    assert seen[-1] == story.attempts[0].delivery_id


def test_one_call_may_send_the_spec_names(sports_posts_send_story):
    story = sports_posts_send_story(app, header_names=WebhookHeaders(), timeout=5)
    assert story.status_codes == [401] * 6
'''


def test_overriding_the_header_names_fixture_renames_every_webhook_fixture(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_renamed=RENAMED)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


ROUTED = '''
import pytest
from fastapi import FastAPI, Request, Response

from sports_posts import ParameterError
from sports_posts.webhooks import WebhookReceiver
from sports_posts.webhooks.adapters.asgi import starlette_response

SECRET = "whsec_routed_app"
seen = []
receiver = WebhookReceiver(SECRET, lambda event: seen.append(event.data.id))
app = FastAPI()


@app.post("/webhooks")  # the route of docs/webhooks.md's FastAPI receiver
async def webhooks(request: Request) -> Response:
    return await starlette_response(receiver, request)


@pytest.fixture
def sports_posts_webhook_secret():
    return SECRET


def test_the_default_path_is_the_documented_route(sports_posts_send_story):
    story = sports_posts_send_story(app)
    assert story.delivered and story.status_codes == [202]
    assert story.attempts[0].url.endswith("/webhooks") and seen == [story.payloads[0]["data"]["id"]]


def test_a_path_with_no_route_is_a_clear_error(sports_posts_send_story, sports_posts_sandbox):
    with pytest.raises(ParameterError, match="404 Not Found at http://127.0.0.1:[0-9]+/hook: ") as caught:
        sports_posts_send_story(app, path="/hook", update="never sent")
    assert caught.value.parameter == "path" and "path=" in str(caught.value)
    statuses = [a.status_code for a in sports_posts_sandbox.deliveries]
    assert statuses == [404] * 6  # the story was retried as the service retries; no update was sent
'''


def test_send_story_posts_at_the_documented_route_and_explains_a_404(pytester: pytest.Pytester) -> None:
    """send_story posts at the documented route, and a 404 there is explained, not retried until dead."""
    pytester.makepyfile(test_routed=ROUTED)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


RETRY_WAITS = '''
import asyncio

import pytest

from sports_posts.sandbox import BurstLimit


@pytest.mark.sports_posts_sandbox(burst=BurstLimit(requests=1, per_seconds=5))
def test_a_burst_is_waited_out_on_the_sandbox_clock(sports_posts_client, sports_posts_sandbox, sports_posts_retry_waits):
    before = sports_posts_sandbox.now()
    sports_posts_client.account.x_ids()
    sports_posts_client.account.x_ids()  # a 429 with Retry-After: waited on the sandbox's clock
    (wait,) = sports_posts_retry_waits.waits
    assert 0 < wait <= 5
    assert (sports_posts_sandbox.now() - before).total_seconds() == pytest.approx(wait)


@pytest.mark.sports_posts_sandbox(burst=BurstLimit(requests=1, per_seconds=5))
def test_the_async_client_too(sports_posts_async_client, sports_posts_retry_waits):
    async def main():
        await sports_posts_async_client.account.x_ids()
        await sports_posts_async_client.account.x_ids()

    asyncio.run(main())
    assert len(sports_posts_retry_waits.waits) == 1


def test_without_a_sandbox_a_wait_is_only_recorded(sports_posts_retry_waits):
    sports_posts_retry_waits.sleep(2.0)
    assert sports_posts_retry_waits.waits == [2.0] and sports_posts_retry_waits.on_wait is None
'''


def test_the_fixture_clients_retries_wait_on_the_sandbox_clock_not_for_real(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_retry_waits=RETRY_WAITS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--durations=0")
    result.assert_outcomes(passed=3)
