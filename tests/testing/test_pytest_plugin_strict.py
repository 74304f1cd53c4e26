"""The plugin's sandbox is strict: a customer test that passes only by the sandbox's forgiveness fails."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

# The customer's code reads only the nested author form (the display name).
MYAPP = '''
def headline_authors(client):
    return [post.author.name.upper() for post in client.posts.list(sort="recent", limit=50).items]


def handles(client):
    return [post.author.username for post in client.posts.list(sort="recent", limit=50).items]
'''

TESTS = '''
import pytest

import myapp_strict as myapp


def test_reads_one_author_form(sports_posts_client):
    assert myapp.headline_authors(sports_posts_client)


def test_reads_what_either_form_gives(sports_posts_client):
    assert all(myapp.handles(sports_posts_client))


@pytest.mark.sports_posts_sandbox(profile="lenient")
def test_reads_one_author_form_on_the_lenient_profile(sports_posts_client):
    assert myapp.headline_authors(sports_posts_client)


def test_a_combined_mode_request_is_refused(sports_posts_sandbox):
    import httpx
    # the SDK refuses it before sending; sent by hand, the strict sandbox refuses it too
    answer = httpx.get(sports_posts_sandbox.base_url + "/posts",
                       params={"teams": "KC", "id_type": "code", "lat": 39.0, "lng": -94.5},
                       headers={"Authorization": sports_posts_sandbox.api_key})
    assert answer.status_code == 400 and "not defined" in answer.json()["error_message"]
'''


def test_code_reading_one_author_form_fails_in_its_own_path(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(myapp_strict=MYAPP, test_strict=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    # The failure points at the customer's own line, with Python's own error for a missing name.
    result.stdout.fnmatch_lines(["*myapp_strict.py:2: AttributeError", "*FAILED*test_reads_one_author_form -*"])
