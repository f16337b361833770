"""The monitoring migration: labels, topics, flags, review queue, and retrieved passages as rows."""

from __future__ import annotations

import sqlite3

import sqlite_utils

from feedback import MIGRATIONS, FeedbackStore
from feedback.answers import build_answer_row
from feedback.migrations import apply_migrations

PASSAGES = [{"chunk_id": "api:errors.md#2", "doc_id": "api:errors.md", "score": 0.81},
            {"chunk_id": "plans:sla.md#0", "doc_id": "plans:sla.md", "score": 0.2}]


def _row(answer_id: str) -> dict:
    return build_answer_row(
        answer_id=answer_id, question="q", channel=None, thread_ts=None, user_id=None, retrieved=PASSAGES,
        cited_doc_ids=["api:errors.md"], refused=False, top_score=0.81, latency_ms=1.0, language="en",
        low_confidence=False, source="cli", visibility=None, created_at=None)


def test_existing_answers_are_backfilled_and_new_ones_written_with_their_passages(tmp_path) -> None:
    path = tmp_path / "old.db"
    names = [m.__name__ for m in MIGRATIONS]
    before = names.index("_create_monitoring_tables")
    conn = sqlite3.connect(path, isolation_level=None)
    db = sqlite_utils.Database(conn)
    apply_migrations(db, MIGRATIONS[:before])
    issue9 = ("hallucination_flag", "generated", "follow_up_of")  # columns of a later migration
    old = {k: v for k, v in _row("old").items() if k not in issue9 + ("redacted_at",)}
    db.execute(f"INSERT INTO answers ({', '.join(old)}) VALUES ({', '.join('?' * len(old))})", list(old.values()))
    conn.close()
    with FeedbackStore.open(path) as store:
        store.record_answer(answer_id="new", question="q", channel=None, thread_ts=None, user_id=None,
                            retrieved=PASSAGES, cited_doc_ids=["api:errors.md"], refused=False, top_score=0.81,
                            latency_ms=1.0)
        found = list(store.db.query("SELECT answer_id, rank, doc_id, chunk_id, score FROM answer_passages "
                                    "ORDER BY answer_id, rank"))
        assert found == [
            {"answer_id": "new", "rank": 0, "doc_id": "api:errors.md", "chunk_id": "api:errors.md#2", "score": 0.81},
            {"answer_id": "new", "rank": 1, "doc_id": "plans:sla.md", "chunk_id": "plans:sla.md#0", "score": 0.2},
            {"answer_id": "old", "rank": 0, "doc_id": "api:errors.md", "chunk_id": "api:errors.md#2", "score": 0.81},
            {"answer_id": "old", "rank": 1, "doc_id": "plans:sla.md", "chunk_id": "plans:sla.md#0", "score": 0.2},
        ]
        assert {"topics", "answer_labels", "flags", "review_queue"} <= set(store.db.table_names())
        store.db.execute("DELETE FROM answers WHERE answer_id = 'old'")  # cascades (foreign_keys = ON)
        assert store.db.execute("SELECT COUNT(*) FROM answer_passages").fetchone()[0] == 2
