"""👎 reasons in the votes row (issue 9 item 8), against real SQLite files."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from feedback import VOTE_REASONS, FeedbackStore, InvalidRecord, UnknownAnswer, VoteResult

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def store(tmp_path: Path):
    with FeedbackStore.open(tmp_path / "feedback.db") as opened:
        yield opened


def answer(store: FeedbackStore, answer_id: str, cited: list[str], created_at: datetime = T0) -> None:
    store.record_answer(
        answer_id=answer_id, question="q", channel="C1", thread_ts="1.1", user_id="U9",
        retrieved=[{"chunk_id": f"{d}#0", "doc_id": d, "score": 0.8} for d in cited], cited_doc_ids=cited,
        refused=False, top_score=0.8, latency_ms=10.0, created_at=created_at,
    )


def test_reason_is_stored_on_the_down_vote_and_changing_it_keeps_one_row(store: FeedbackStore) -> None:
    answer(store, "a1", ["api:webhooks.md"])
    store.record_vote("a1", "U1", "down", voted_at=T0)

    first = store.record_vote_reason("a1", "U1", "outdated", at=T0 + timedelta(seconds=5))
    again = store.record_vote_reason("a1", "U1", "outdated", at=T0 + timedelta(seconds=6))
    changed = store.record_vote_reason("a1", "U1", "wrong", at=T0 + timedelta(seconds=7))

    assert first == VoteResult(changed=True, previous="down", value="down", reason="outdated")
    assert again == VoteResult(changed=False, previous="down", value="down", reason="outdated")
    assert changed == VoteResult(changed=True, previous="down", value="down", reason="wrong")
    (row,) = store.votes_for("a1")
    assert (row["value"], row["reason"]) == ("down", "wrong")
    assert row["voted_at"] == T0.isoformat(timespec="microseconds")  # the first vote's time is kept
    assert row["updated_at"] == (T0 + timedelta(seconds=7)).isoformat(timespec="microseconds")


def test_a_reason_without_a_vote_is_a_down_vote_and_a_thumbs_up_clears_it(store: FeedbackStore) -> None:
    answer(store, "a1", ["api:webhooks.md"])
    assert store.record_vote_reason("a1", "U1", "incomplete").value == "down"
    assert [(v["value"], v["reason"]) for v in store.votes_for("a1")] == [("down", "incomplete")]

    store.record_vote("a1", "U1", "up")
    assert [(v["value"], v["reason"]) for v in store.votes_for("a1")] == [("up", None)]
    assert store.record_vote_reason("a1", "U1", "not_what_i_asked").previous == "up"
    assert [(v["value"], v["reason"]) for v in store.votes_for("a1")] == [("down", "not_what_i_asked")]


def test_repeated_down_click_keeps_the_reason(store: FeedbackStore) -> None:
    answer(store, "a1", ["api:webhooks.md"])
    store.record_vote("a1", "U1", "down")
    store.record_vote_reason("a1", "U1", "wrong")
    assert store.record_vote("a1", "U1", "down") == VoteResult(changed=False, previous="down", value="down",
                                                               reason="wrong")
    assert store.votes_for("a1")[0]["reason"] == "wrong"


def test_unknown_reason_or_answer_is_rejected(store: FeedbackStore) -> None:
    answer(store, "a1", ["api:webhooks.md"])
    with pytest.raises(InvalidRecord, match="outdated, wrong, incomplete, not_what_i_asked"):
        store.record_vote_reason("a1", "U1", "boring")
    with pytest.raises(UnknownAnswer):
        store.record_vote_reason("nope", "U1", "wrong")
    with pytest.raises(InvalidRecord):
        store.record_vote_reason("a1", "", "wrong")
    assert store.votes_for("a1") == []
    # The CHECK constraint guards writers that bypass the store.
    with pytest.raises(Exception, match="CHECK"):
        store.db.execute("INSERT INTO votes (answer_id, user_id, value, reason, voted_at, updated_at) "
                         "VALUES ('a1', 'U2', 'down', 'meh', 't', 't')")


def test_reason_counts_per_document_and_per_answer_for_the_jobs(store: FeedbackStore) -> None:
    answer(store, "a1", ["api:webhooks.md", "runbooks:webhook-failures.md"])
    answer(store, "a2", ["api:webhooks.md"])
    answer(store, "old", ["api:webhooks.md"], created_at=T0 - timedelta(days=60))
    store.record_vote_reason("a1", "U1", "outdated")
    store.record_vote_reason("a1", "U2", "wrong")
    store.record_vote_reason("a2", "U1", "outdated")
    store.record_vote("a2", "U3", "down")  # no reason: not counted
    store.record_vote_reason("old", "U1", "incomplete")

    assert store.vote_reasons(by="doc", since=T0 - timedelta(days=30)) == {
        "api:webhooks.md": {"outdated": 2, "wrong": 1},
        "runbooks:webhook-failures.md": {"outdated": 1, "wrong": 1},
    }
    assert store.vote_reasons(by="answer") == {
        "a1": {"outdated": 1, "wrong": 1}, "a2": {"outdated": 1}, "old": {"incomplete": 1},
    }
    assert store.vote_reasons(until=T0 - timedelta(days=1)) == {"api:webhooks.md": {"incomplete": 1}}
    with pytest.raises(ValueError):
        store.vote_reasons(by="collection")
    assert set(VOTE_REASONS) == {"outdated", "wrong", "incomplete", "not_what_i_asked"}
