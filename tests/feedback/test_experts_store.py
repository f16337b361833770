"""The expert tables (`feedback.experts`) on SQLite and PostgreSQL: one escalation per answer however often it is
claimed, answered once however many replicas submit, expert answers retired by expiry or two users' 👎."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from feedback import FeedbackStore, InvalidRecord, UnknownAnswer

NOW = datetime(2026, 12, 4, 9, 0, tzinfo=timezone.utc)


def request(request_id: str = "a1", **extra) -> dict:
    return {"request_id": request_id, "question": "do we get pet insurance?", "attempt": "I couldn't find this.",
            "asker": "U1", "channel": "C1", "thread_ts": "1700000000.000001", "whom": "UEXPERT",
            "doc_ids": ["hr:benefits.md"], "language": "en", "requested_at": NOW, **extra}


def answer(request_id: str | None = "a1", **extra) -> dict:
    return {"request_id": request_id, "question": "do we get pet insurance?", "answer": "Yes, through Petco.",
            "expert": "UEXPERT", "answered_at": NOW, "expires_at": NOW + timedelta(days=180),
            "doc_ids": ["hr:benefits.md"], "page_wrong": False, "language": "en", **extra}


@pytest.fixture
def store(store_target):
    with FeedbackStore.open(store_target) as opened:
        yield opened


def test_a_request_is_claimed_once_and_resolved_once(store) -> None:
    assert store.claim_expert_request(**request()) is True
    assert store.claim_expert_request(**request(asker="U2")) is False  # double click / retry
    store.set_expert_request_posted("a1", [("UEXPERT", "1.2")])
    row = store.expert_request("a1")
    assert (row["status"], row["asker"], row["posted"], row["doc_ids"]) == ("open", "U1", [["UEXPERT", "1.2"]],
                                                                           ["hr:benefits.md"])
    assert store.resolve_expert_request("a1", expert="UEXPERT", answer="Yes.", at=NOW) is True
    assert store.resolve_expert_request("a1", expert="UOTHER", answer="No.", at=NOW) is False
    row = store.expert_request("a1")
    assert (row["status"], row["answered_by"], row["answer"]) == ("resolved", "UEXPERT", "Yes.")
    with pytest.raises(InvalidRecord):
        store.resolve_expert_request("a1", expert="UEXPERT", answer="  ", at=NOW)


def test_expert_answers_expire_and_two_distinct_downs_retire_them(store) -> None:
    kept = store.record_expert_answer(**answer())
    assert store.record_expert_answer(**answer()) is None  # one answer per request
    old = store.record_expert_answer(**answer(request_id=None, expires_at=NOW - timedelta(seconds=1)))
    gap = store.record_expert_answer(**answer(request_id="gap:abcd", question="company car?"))
    assert old and gap
    assert {a["expert_answer_id"] for a in store.active_expert_answers(NOW)} == {kept, gap}  # not the expired one
    assert store.record_expert_vote(kept, "U7", "down", NOW) is True
    assert store.record_expert_vote(kept, "U7", "down", NOW) is False  # the same user twice is one 👎
    assert kept in {a["expert_answer_id"] for a in store.active_expert_answers(NOW)}
    assert store.record_expert_vote(kept, "U8", "down", NOW) is True
    assert {a["expert_answer_id"] for a in store.active_expert_answers(NOW)} == {gap}
    with pytest.raises(UnknownAnswer):
        store.record_expert_vote("nope", "U7", "up", NOW)


def test_reminders_are_claimed_once_then_listed_as_waiting(store) -> None:
    store.claim_expert_request(**request("old", requested_at=NOW - timedelta(hours=30)))
    store.claim_expert_request(**request("new", requested_at=NOW - timedelta(hours=1)))
    due = store.claim_expert_reminders(requested_before=NOW - timedelta(hours=24), now=NOW)
    assert [r["request_id"] for r in due] == ["old"]
    assert store.claim_expert_reminders(requested_before=NOW - timedelta(hours=24), now=NOW) == []
    count, oldest = store.waiting_expert_requests()
    assert count == 1 and oldest[0]["request_id"] == "old"
    store.resolve_expert_request("old", expert="UEXPERT", answer="Done.", at=NOW)
    assert store.waiting_expert_requests() == (0, [])


def test_one_escalation_clicked_on_two_replicas_is_answered_once(postgres_url) -> None:
    """Two replicas are two stores on one PostgreSQL database."""
    with FeedbackStore.open(postgres_url) as first, FeedbackStore.open(postgres_url) as second:
        claims = [first.claim_expert_request(**request()), second.claim_expert_request(**request())]
        assert sorted(claims) == [False, True]
        answered = [second.resolve_expert_request("a1", expert="UA", answer="From A.", at=NOW),
                    first.resolve_expert_request("a1", expert="UB", answer="From B.", at=NOW)]
        assert answered == [True, False]
        assert first.expert_request("a1")["answered_by"] == "UA"
