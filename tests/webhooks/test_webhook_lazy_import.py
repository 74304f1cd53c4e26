"""`import sports_posts.webhooks` loads signature checks only; everything else on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sports_posts.webhooks as webhooks

HEAVY = ("receiver", "dedupe", "events", "inbox", "filters", "stories", "testing", "adapters")


def _loaded_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint(' '.join(m for m in sys.modules if m.startswith('sports_posts.webhooks')))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    return set(out.stdout.split())


def test_signature_checks_alone_load_no_receiver_store_or_event_model() -> None:
    loaded = _loaded_after(
        "from sports_posts.webhooks import sign_payload, verify_signature\n"
        "verify_signature(b'{}', sign_payload(b'{}', 's'), 's')"
    )
    assert not {f"sports_posts.webhooks.{name}" for name in HEAVY} & loaded, loaded


def test_a_lazy_name_loads_its_module_on_first_use() -> None:
    loaded = _loaded_after("from sports_posts.webhooks import WebhookReceiver")
    assert {"sports_posts.webhooks.receiver", "sports_posts.webhooks.dedupe"} <= loaded


def test_every_public_name_resolves_and_is_listed() -> None:
    for name in webhooks.__all__:
        assert getattr(webhooks, name) is not None, name
    assert set(webhooks.__all__) <= set(dir(webhooks))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        webhooks.Nope  # type: ignore[attr-defined]  # noqa: B018
