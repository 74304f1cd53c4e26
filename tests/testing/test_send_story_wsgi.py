"""``sports_posts_send_story`` takes WSGI apps (Flask, Django) as it takes ASGI ones: each is
served as its kind, so the story is delivered; and a refused signature's 401 tells the
sender only that it did not verify."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from sports_posts.testing._serve import is_wsgi
from sports_posts.webhooks import WebhookReceiver, build_test_request, sample_payload

pytest_plugins = ["pytester"]

RECEIVER = '''
from sports_posts.webhooks import WebhookReceiver

SECRET = "whsec_my_wsgi_secret"
seen = []
receiver = WebhookReceiver(SECRET, lambda event: seen.append((event.event, event.data.league)))
'''

FLASK_APP = RECEIVER + '''
from flask import Flask
from sports_posts.webhooks.adapters.wsgi import flask_view

app = Flask(__name__)
app.add_url_rule("/webhooks", view_func=flask_view(receiver), methods=["POST"])
'''

DJANGO_APP = RECEIVER + '''
import django
from django.conf import settings

settings.configure(DEBUG=False, SECRET_KEY="test-only", ROOT_URLCONF=__name__, ALLOWED_HOSTS=["*"],
                   MIDDLEWARE=[], INSTALLED_APPS=[])
django.setup()

from django.core.wsgi import get_wsgi_application
from django.urls import path
from sports_posts.webhooks.adapters.django import django_view

urlpatterns = [path("webhooks/", django_view(receiver))]
app = get_wsgi_application()
'''

TESTS = '''
import pytest

import {module} as myapp


@pytest.fixture
def sports_posts_webhook_secret():
    return myapp.SECRET


def test_a_story_and_its_update_reach_my_wsgi_app(sports_posts_send_story):
    story = sports_posts_send_story(myapp.app, path="{path}", league="NBA", update="now out for the season")
    assert story.delivered, story.status_codes
    assert story.status_codes == [202, 202]
    assert myapp.seen == [("breaking_news", "NBA"), ("breaking_news.update", "NBA")]


def test_a_story_my_wsgi_app_refuses_is_retried_then_dead(sports_posts_send_story):
    story = sports_posts_send_story(myapp.app, path="{path}", secret="whsec_not_mine")
    assert not story.delivered and story.status_codes == [401] * 6
'''


@pytest.mark.parametrize(("module", "source", "path"), [
    ("myflask", FLASK_APP, "/webhooks"),
    ("mydjango", DJANGO_APP, "/webhooks/"),
])
def test_send_story_serves_a_wsgi_app_as_wsgi(pytester: pytest.Pytester, module: str, source: str, path: str) -> None:
    pytester.makepyfile(**{module: source, f"test_{module}": TESTS.format(module=module, path=path)})
    # a process of its own: Django's settings are configured once per process
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:schemathesis")
    result.assert_outcomes(passed=2)
    assert "start_response" not in result.stdout.str() + result.stderr.str()


def test_wsgi_and_asgi_apps_are_told_apart() -> None:
    from flask import Flask
    from starlette.applications import Starlette

    from sports_posts.webhooks.adapters.asgi import WebhookASGIApp
    from sports_posts.webhooks.adapters.wsgi import WebhookWSGIApp

    receiver = WebhookReceiver("whsec_x", lambda event: None)

    def plain_wsgi(environ: Any, start_response: Any) -> list[bytes]:
        return []

    async def plain_asgi(scope: Any, receive: Any, send: Any) -> None:
        pass

    flask_app = Flask(__name__)
    assert is_wsgi(flask_app) and is_wsgi(flask_app.wsgi_app) and is_wsgi(plain_wsgi)
    assert is_wsgi(WebhookWSGIApp(receiver))
    assert not is_wsgi(Starlette()) and not is_wsgi(plain_asgi) and not is_wsgi(WebhookASGIApp(receiver))
    assert not is_wsgi("http://127.0.0.1:1/webhooks") and not is_wsgi(Flask)


def test_the_401_body_says_only_that_the_signature_did_not_verify(caplog: pytest.LogCaptureFixture) -> None:
    receiver = WebhookReceiver("whsec_mine", lambda event: None)
    forged = build_test_request(sample_payload("breaking_news"), "whsec_someone_else")
    with caplog.at_level(logging.WARNING, logger="sports_posts.webhooks"):
        answer = receiver.handle(forged.body, forged.headers)
    assert answer.status_code == 401
    body = json.loads(answer.body)
    assert body == {"ok": False, "status": "invalid_signature",
                    "error": "the X-Service-Signature signature did not verify"}
    assert "secret" not in answer.body.decode() and "raw bytes" not in answer.body.decode()
    # the operator's hint is in the log
    assert "a different signing secret, or a body that is not the raw bytes received" in caplog.text
