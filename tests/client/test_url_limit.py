"""A query the HTTP library itself refuses to build (a component over its own limit) is the
SDK's ParameterError, like any URL over the SDK's 8 KiB, and nothing is sent."""

from __future__ import annotations

import httpx
import pytest

import sports_posts as sp
from tests.stacks import STACKS, mock_client

from .conftest import API_KEY, BASE_URL


def _never(request: httpx.Request) -> httpx.Response:
    raise AssertionError("a request was sent")


@pytest.mark.parametrize("stack", STACKS)
def test_a_query_past_the_library_s_own_limit_is_a_parameter_error(stack: str) -> None:
    # 6,000 four-byte characters: 24 KB of UTF-8, 72 K characters once percent-encoded,
    # past httpx's 64 K limit on one URL component
    http = mock_client(_never, stack)
    with sp.SportsPosts(api_key=API_KEY, base_url=BASE_URL, http_client=http) as client:
        with pytest.raises(sp.ParameterError, match="8,192-byte limit") as info:
            client.posts.list(leagues=sp.Unchecked("\U0001f600" * 6000))
        assert info.value.parameter == "leagues"
        assert client.calls == 0
    http.close()
