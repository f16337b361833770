"""A person's latest question languages (`FeedbackStore.recent_languages`), which App Home is framed in, on both
backends, read through ``idx_answers_user``."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from feedback import FeedbackStore, InvalidRecord

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)


def ask(store: FeedbackStore, answer_id: str, user: str | None, language: str, minutes: int) -> None:
    store.record_answer(answer_id=answer_id, question=f"q {answer_id}", channel="C1", thread_ts=answer_id,
                        user_id=user, retrieved=[], cited_doc_ids=[], refused=True, top_score=0.0, latency_ms=1.0,
                        language=language, created_at=T0 + timedelta(minutes=minutes))


def test_the_latest_languages_of_one_person_newest_first(store_target) -> None:
    with FeedbackStore.open(store_target) as store:
        ask(store, "a", "U1", "en", 0)
        ask(store, "b", "U1", "ko", 2)
        ask(store, "c", "U1", "ja", 1)
        ask(store, "d", "U2", "ja", 3)
        ask(store, "e", None, "ja", 4)  # the CLI: nobody's

        assert store.recent_languages("U1") == ["ko", "ja", "en"]
        assert store.recent_languages("U1", limit=2) == ["ko", "ja"]
        assert store.recent_languages("U9") == []
        with pytest.raises(InvalidRecord):
            store.recent_languages("")
        with pytest.raises(InvalidRecord):
            store.recent_languages("U1", limit=0)


def test_forgotten_people_have_no_languages(tmp_path: Path) -> None:
    with FeedbackStore.open(tmp_path / "f.db") as store:
        ask(store, "a", "U1", "ko", 0)
        store.forget_user("U1")
        assert store.recent_languages("U1") == []


def test_the_lookup_reads_the_user_index(tmp_path: Path) -> None:
    with FeedbackStore.open(tmp_path / "f.db") as store:
        plan = " ".join(str(r) for r in store.db.execute(
            "EXPLAIN QUERY PLAN SELECT language FROM answers WHERE user_id = 'U1' "
            "ORDER BY created_at DESC, answer_id DESC LIMIT 5").fetchall())
    assert "idx_answers_user" in plan
