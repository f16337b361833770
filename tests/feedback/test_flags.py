"""Wrong-answer reports ("Report a wrong answer"): one per answer and user."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from feedback import FeedbackStore, InvalidRecord, UnknownAnswer


@pytest.fixture
def store(tmp_path):
    with FeedbackStore.open(tmp_path / "feedback.db") as opened:
        opened.record_answer(answer_id="a1", question="q", channel="C1", thread_ts=None, user_id="U1",
                             retrieved=[], cited_doc_ids=[], refused=True, top_score=0.0, latency_ms=1.0)
        yield opened


def test_one_report_per_answer_and_user(store) -> None:
    at = datetime(2026, 11, 1, tzinfo=timezone.utc)
    assert store.record_flag("a1", "U7", "quotes the old price", created_at=at) is True
    assert store.record_flag("a1", "U7", "again") is False          # a second click stores nothing
    assert store.record_flag("a1", "U8") is True
    rows = list(store.db.query("SELECT user_id, reason, created_at FROM flags ORDER BY user_id"))
    assert rows == [{"user_id": "U7", "reason": "quotes the old price", "created_at": "2026-11-01T00:00:00.000000+00:00"},
                    {"user_id": "U8", "reason": "", "created_at": rows[1]["created_at"]}]


def test_invalid_reports_are_refused(store) -> None:
    with pytest.raises(UnknownAnswer):
        store.record_flag("nope", "U7")
    with pytest.raises(InvalidRecord):
        store.record_flag("a1", "")
    with pytest.raises(InvalidRecord):
        store.record_flag("a1", "U7", created_at=datetime(2026, 11, 1))  # naive
    assert store.db["flags"].count == 0


def test_long_reasons_are_cut(store) -> None:
    store.record_flag("a1", "U7", "x" * 5000)
    assert len(next(store.db.query("SELECT reason FROM flags"))["reason"]) == 2000
