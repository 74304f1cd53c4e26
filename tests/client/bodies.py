"""Answers of the service used by several test modules."""

from __future__ import annotations

from typing import Any

INFO: dict[str, Any] = {
    "company": {"name": "Acme", "plan": "paid", "subscription_status": "active"},
    "billing_cycle": {
        "current_period_start": "2024-05-01T00:00:00+00:00",
        "current_period_end": "2024-06-01T00:00:00+00:00",
    },
    "usage": {"current_calls": 3},
}
"""A GET /account/information body."""


def parse_response(call: Any, response: Any) -> Any:
    """The model of a 2xx ``response`` to ``call``, or the typed error of any other answer."""
    from sports_posts._transport import parse_answer

    return parse_answer(call, response.status_code, response.content, lambda: response)
