"""sample_payload as a customer's suite uses it: run after run against a persistent dedupe store."""

from __future__ import annotations

from pathlib import Path

from sports_posts.webhooks import (
    SQLiteDedupeStore,
    WebhookReceiver,
    build_test_request,
    sample_payload,
)
from tests.webhooks.webhook_helpers import SECRET, Recorder


def _one_test_run(db: Path) -> int:
    """What a customer's test does: a receiver on its dedupe file, one sample event."""
    recorder = Recorder()
    receiver = WebhookReceiver(SECRET, recorder, store=SQLiteDedupeStore(db))
    request = build_test_request(sample_payload(), SECRET)
    status = receiver.handle(request.body, request.headers).status
    receiver.close()
    assert len(recorder.events) == (1 if status == 202 else 0)
    return status


def test_a_second_run_on_the_same_dedupe_file_is_handled_again(tmp_path: Path) -> None:
    # one data.id for every call made the second run a "duplicate" that was never handled
    assert [_one_test_run(tmp_path / "dedupe.db") for _ in range(2)] == [202, 202]


def test_each_call_has_a_fresh_post_id_unless_one_is_given() -> None:
    ids = {sample_payload()["data"]["id"] for _ in range(20)}
    ids |= {sample_payload("breaking_news.update")["data"]["id"] for _ in range(20)}
    assert len(ids) == 40 and all(i.isdigit() and len(i) == 19 for i in ids)  # as the service's ids look
    assert sample_payload(id="1790000000000000001")["data"]["id"] == "1790000000000000001"
    # a receiver's negative test keeps its null (a type checker refuses it: the id is a str)
    assert sample_payload(id=None)["data"]["id"] is None  # type: ignore[call-overload]
    first = sample_payload()
    assert sample_payload("breaking_news.update")["data"]["update_of"] == first["data"]["event_id"]
