"""Answer rows carry the grounding flag, the generated mark and the thread follow-up (issue 9), in SQLite."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlite_utils

from feedback import FeedbackStore, InvalidRecord
from feedback.migrations import MIGRATIONS, apply_migrations

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def record(store: FeedbackStore, answer_id: str, *, channel="C1", thread_ts="1.1", at=T0, **extra) -> None:
    store.record_answer(
        answer_id=answer_id, question=f"question {answer_id}", channel=channel, thread_ts=thread_ts, user_id="U1",
        retrieved=[], cited_doc_ids=[], refused=False, top_score=0.7, latency_ms=5.0, created_at=at, **extra,
    )


def test_thread_answers_are_the_thread_in_order(tmp_path: Path) -> None:
    with FeedbackStore.open(tmp_path / "f.db") as store:
        record(store, "b", at=T0 + timedelta(seconds=2), follow_up_of="a")
        record(store, "a", at=T0)
        record(store, "other-thread", thread_ts="2.2")
        record(store, "other-channel", channel="C2")

        thread = store.thread_answers("C1", "1.1")
        assert [(r["answer_id"], r["question"], r["follow_up_of"]) for r in thread] == [
            ("a", "question a", None), ("b", "question b", "a")]
        assert thread[0]["refused"] is False
        assert store.thread_answers("C1", "9.9") == []
        plan = " ".join(str(r) for r in store.db.execute(
            "EXPLAIN QUERY PLAN SELECT answer_id FROM answers WHERE channel = 'C1' AND thread_ts = '1.1' "
            "ORDER BY created_at").fetchall())
        assert "idx_answers_thread" in plan


def test_grounding_flags_round_trip(tmp_path: Path) -> None:
    with FeedbackStore.open(tmp_path / "f.db") as store:
        record(store, "a", hallucination_flag=True, generated=True)
        row = store.get_answer("a")
        assert (row["hallucination_flag"], row["generated"], row["follow_up_of"]) == (True, True, None)
        with pytest.raises(InvalidRecord):
            record(store, "self", follow_up_of="self")


def test_a_version_4_file_is_migrated_with_neutral_values(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(sqlite_utils.Database(str(path)).conn)
    db.conn.isolation_level = None
    apply_migrations(db, MIGRATIONS[:4])
    db.execute("INSERT INTO answers (answer_id, question, source, language, retrieved, cited_doc_ids, refused, "
               "low_confidence, top_score, latency_ms, created_at) VALUES ('old', 'q', 'cli', 'en', '[]', '[]', 0, 0, "
               "0.5, 1.0, '2024-01-01T00:00:00.000000+00:00')")
    db.execute("INSERT INTO votes VALUES ('old', 'U1', 'down', 't', 't')")
    db.conn.close()

    with FeedbackStore.open(path) as store:
        row = store.get_answer("old")
        assert (row["hallucination_flag"], row["generated"], row["follow_up_of"]) == (False, False, None)
        assert store.votes_for("old")[0]["reason"] is None
        assert store.record_vote_reason("old", "U1", "outdated").changed


def test_hallucination_counts_per_document_and_answer_for_the_accuracy_signal(tmp_path: Path) -> None:
    with FeedbackStore.open(tmp_path / "f.db") as store:
        def answer(answer_id: str, cited: list[str], flagged: bool, at=T0) -> None:
            store.record_answer(
                answer_id=answer_id, question="q", channel=None, thread_ts=None, user_id=None,
                retrieved=[{"chunk_id": f"{d}#0", "doc_id": d, "score": 0.8} for d in cited], cited_doc_ids=cited,
                refused=False, top_score=0.8, latency_ms=1.0, created_at=at, hallucination_flag=flagged,
                generated=True)

        answer("a", ["api:webhooks.md", "runbooks:webhook-failures.md"], True)
        answer("b", ["api:webhooks.md"], True)
        answer("c", ["api:webhooks.md"], False)
        answer("old", ["api:webhooks.md"], True, at=T0 - timedelta(days=40))

        assert store.hallucination_counts(since=T0 - timedelta(days=30)) == {
            "api:webhooks.md": 2, "runbooks:webhook-failures.md": 1}
        assert store.hallucination_counts(by="answer") == {"a": 1, "b": 1, "old": 1}
        assert store.hallucination_counts(until=T0) == {"api:webhooks.md": 1}
        plan = " ".join(str(r) for r in store.db.execute(
            "EXPLAIN QUERY PLAN SELECT answer_id FROM answers WHERE hallucination_flag = 1 AND created_at >= ''"
        ).fetchall())
        assert "idx_answers_hallucinated" in plan


def test_a_question_removed_by_retention_gives_no_context(tmp_path: Path) -> None:
    with FeedbackStore.open(tmp_path / "f.db") as store:
        record(store, "a")
        store.db.execute("UPDATE answers SET question = '[removed]', redacted_at = '2025-01-01' WHERE answer_id = 'a'")
        record(store, "b", at=T0 + timedelta(seconds=1))
        assert [r["answer_id"] for r in store.thread_answers("C1", "1.1")] == ["b"]
