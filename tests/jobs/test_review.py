"""The review queue: one row per problem and subject, refreshed by later runs, closed by people; on SQLite and
PostgreSQL (`store_target`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from feedback import FeedbackStore
from jobs.review import Candidate, UnknownReviewItem, close, items, submit

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def store(store_target):
    with FeedbackStore.open(store_target) as opened:
        yield opened


def test_submit_refreshes_instead_of_duplicating(store) -> None:
    gap = Candidate("coverage_gap", "policy/7", "add_or_extend_documents", 2, 60, "60 questions refused")
    submit(store, "coverage", [gap], now=NOW)
    submit(store, "coverage", [Candidate("coverage_gap", "policy/7", "add_or_extend_documents", 2, 75, "75 now")],
           now=NOW + timedelta(hours=1))
    (item,) = items(store)
    assert (item["weight"], item["reason"], item["status"]) == (75, "75 now", "open")
    assert item["first_seen_at"] < item["last_seen_at"]
    assert item["todo"].startswith("add a source")


def test_order_and_closing(store) -> None:
    submit(store, "drift", [Candidate("drift", "intent", "review_drift", 3, 900, "intent drift")], now=NOW)
    submit(store, "bad_docs", [Candidate("bad_document", "api:errors.md", "review_or_deprecate", 2, 40, "bad")], now=NOW)
    submit(store, "freshness", [Candidate("source_unreachable", "api:gone.md", "check_source", 1, 0, "gone")], now=NOW)
    assert [i["subject"] for i in items(store)] == ["api:gone.md", "api:errors.md", "intent"]  # priority first
    gone = items(store)[0]["item_id"]
    close(store, gone, "done", now=NOW)
    submit(store, "freshness", [Candidate("source_unreachable", "api:gone.md", "check_source", 1, 0, "gone")],
           now=NOW + timedelta(days=1))
    assert [i["subject"] for i in items(store)] == ["api:errors.md", "intent"]  # a closed item stays closed
    assert len(items(store, status=None)) == 3
    with pytest.raises(UnknownReviewItem):
        close(store, 999, "done", now=NOW)
    with pytest.raises(ValueError):
        Candidate("drift", "x", "delete_everything", 1, 0, "no")
