"""The monitoring signals' window queries (`feedback.windows`, `feedback.labels`, `feedback.probe`) on SQLite and
PostgreSQL: week buckets without julianday, collections without instr, IN lists longer than SQLite's limit."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from feedback import MIGRATIONS, FeedbackStore, StoreUnavailable, db, labels, windows
from feedback._time import utc_iso
from feedback.probe import stored_schema_version

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def store(store_target):
    with FeedbackStore.open(store_target) as opened:
        yield opened


def answer(store: FeedbackStore, answer_id: str, *, at: datetime, cited=(), refused=False) -> None:
    store.record_answer(
        answer_id=answer_id, question=f"question {answer_id}", channel="C1", thread_ts=None, user_id="U1",
        retrieved=[{"chunk_id": f"{d}#0", "doc_id": d, "score": 0.8} for d in cited], cited_doc_ids=list(cited),
        refused=refused, top_score=0.8 if cited else 0.1, latency_ms=10.0, created_at=at)


def test_weeks_count_back_from_the_end_of_the_window(store) -> None:
    answer(store, "w0", at=NOW - timedelta(days=1), cited=("a:x.md", "a:y.md"))
    answer(store, "w0b", at=NOW - timedelta(days=6, hours=23), cited=("a:x.md",))
    answer(store, "w1", at=NOW - timedelta(days=7, seconds=1))                   # answered without a citation
    answer(store, "w2", at=NOW - timedelta(days=15), refused=True)
    answer(store, "out", at=NOW - timedelta(days=40), cited=("a:x.md",))         # before the window
    since, until = utc_iso(NOW - timedelta(weeks=4)), utc_iso(NOW)
    with store.snapshot() as conn:
        per_doc = {(r["week"], r["doc_id"]): r["n"] for r in windows.weekly_document_citations(conn, since, until)}
        answered = {r["week"]: (r["answered"], r["no_citation"]) for r in windows.weekly_answered(conn, since, until)}
        weeks = {r["week"]: r for r in windows.weekly_answers(conn, since, until)}
    assert per_doc == {(0, "a:x.md"): 2, (0, "a:y.md"): 1}
    assert answered == {0: (2, 0), 1: (1, 1)}
    assert (weeks[0]["answers"], weeks[0]["citations"], weeks[1]["uncited"], weeks[2]["refused"]) == (2, 3, 1, 1)


def test_reports_per_collection_and_collection_prefixes(store) -> None:
    answer(store, "r1", at=NOW - timedelta(hours=3), cited=("run_books:disk.md", "run_books:cpu.md"))
    answer(store, "r2", at=NOW - timedelta(days=3), cited=("runXbooks:disk.md",))   # "_" is no wildcard
    answer(store, "r3", at=NOW - timedelta(days=3), cited=("nocollection",))
    for answer_id, at in (("r1", NOW - timedelta(hours=2)), ("r2", NOW - timedelta(days=2)), ("r3", NOW - timedelta(days=2))):
        store.record_flag(answer_id, "F1", "wrong", created_at=at)
    since, until, recent = (utc_iso(NOW - timedelta(days=30)), utc_iso(NOW), utc_iso(NOW - timedelta(hours=24)))
    with store.snapshot() as conn:
        per = windows.collection_reports(conn, since, until, recent)
        reported = windows.reported_answers(conn, since, until, "run_books")
    assert per == [{"collection": "runXbooks", "recent": 0, "total": 1},
                   {"collection": "run_books", "recent": 1, "total": 1}]   # one report, two documents: counted once
    assert [r["answer_id"] for r in reported] == ["r1"]


def test_in_lists_longer_than_sqlites_variable_limit(store) -> None:
    answer(store, "real", at=NOW, cited=("a:x.md",))
    ids = [f"missing{i}" for i in range(40_000)] + ["real"]
    with store.transaction() as conn:
        labels.lock_topics(conn)
        topic = labels.insert_topic(conn, label="t", model="m", centroid=np.ones(4, np.float32).tobytes(), n=1,
                                    at=utc_iso(NOW))
        assert labels.insert_labels(conn, [{"answer_id": "real", "intent": "lookup", "topic_id": topic,
                                            "created_at": utc_iso(NOW), "labelled_at": utc_iso(NOW)}] * 2) == 1
        assert labels.insert_topic(conn, label="u", model="m", centroid=b"\0" * 16, n=1, at=utc_iso(NOW)) == topic + 1
    with store.snapshot() as conn:
        assert windows.cited_documents(conn, ids) == [{"answer_id": "real", "doc_id": "a:x.md"}]
        assert labels.labels_of_answers(conn, ids) == [{"answer_id": "real", "intent": "lookup", "topic_id": topic}]
        assert labels.count_pending(conn) == 0
        (loaded, _) = labels.load_topics(conn, "m")
        assert np.frombuffer(loaded.centroid, np.float32).tolist() == [1.0] * 4


def test_doctor_reads_the_schema_version_without_opening_the_store(store_target, tmp_path) -> None:
    FeedbackStore.open(store_target).close()
    assert stored_schema_version(store_target) == len(MIGRATIONS)
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreUnavailable, match="cannot be opened"):
        stored_schema_version(garbage)


def test_both_ways_of_counting_votes_give_the_same_quality(store) -> None:
    """The fused-quality CTE counts by per-answer probes (SQLite) or grouped joins (PostgreSQL): same rows."""
    for n in range(12):
        answer(store, f"q{n}", at=NOW - timedelta(days=n), cited=("a:x.md",) if n % 4 else (), refused=n % 4 == 0)
        for voter in range(n % 5):
            store.record_vote(f"q{n}", f"V{voter}", "up" if (n + voter) % 3 else "down", voted_at=NOW)
        if n % 3 == 0:
            store.record_flag(f"q{n}", "F1", "wrong", created_at=NOW)
    params = {"since": utc_iso(NOW - timedelta(days=30)), "until": utc_iso(NOW + timedelta(days=1)),
              **windows.FusedWeights(thumbs=0.6, confidence=0.4, flags=2.0).params()}
    tail = "    q AS (SELECT q0.*, " + windows._FUSED + " AS fused FROM q0)\n" \
           " SELECT answer_id, up, down, flags, fused FROM q ORDER BY answer_id"
    with store.snapshot() as conn:
        probed = db.rows(conn, windows._WINDOW + windows._COUNTS_BY_PROBE + tail, **params)
        grouped = db.rows(conn, windows._WINDOW + windows._COUNTS_BY_GROUP + tail, **params)
    assert len(probed) == 12 and sum(r["up"] + r["down"] for r in probed) > 10 and sum(r["flags"] for r in probed) == 4
    assert [{k: (round(v, 9) if isinstance(v, float) else int(v) if k != "answer_id" else v) for k, v in r.items()}
            for r in probed] == \
           [{k: (round(v, 9) if isinstance(v, float) else int(v) if k != "answer_id" else v) for k, v in r.items()}
            for r in grouped]


def test_a_vote_judges_the_page_the_direct_answer_came_from_not_the_pages_cited_beside_it(store) -> None:
    """Issue 26 item 4: 👎 on answers led by an old copy, cited beside the current page, judge the old copy only;
    the current page keeps its citations but none of those votes, evidence or 👎 reasons."""
    old, current = "hb:2021/tock.md", "hb:2025/tock.md"
    for k in range(4):
        store.record_answer(
            answer_id=f"led{k}", question="how do I log time?", channel="C1", thread_ts=None, user_id="U1",
            retrieved=[{"chunk_id": f"{d}#0", "doc_id": d, "score": 0.8} for d in (old, current)],
            cited_doc_ids=[old, current], refused=False, top_score=0.8, latency_ms=10.0,
            created_at=NOW - timedelta(days=2), answered_from=[old])
        store.record_vote(f"led{k}", f"V{k}", "down", voted_at=NOW - timedelta(days=2))
        store.record_vote_reason(f"led{k}", f"V{k}", "outdated", at=NOW - timedelta(days=2))
    answer(store, "plain", at=NOW - timedelta(days=1), cited=(current,))  # no answered_from: every cited page
    store.record_vote("plain", "V9", "up", voted_at=NOW - timedelta(days=1))
    since, until = utc_iso(NOW - timedelta(days=30)), utc_iso(NOW)
    with store.snapshot() as conn:
        quality = windows.document_quality(conn, since, until, weights=windows.FusedWeights(1.0, 1.0, 1.0))
        evidence = windows.document_evidence(conn, current, since, until, 10)
        reasons = windows.document_down_reasons(conn, current, since, until)
        led = windows.cited_documents(conn, ["led0"])
    assert {k: quality[old][k] for k in ("citations", "answered", "up", "down")} == {
        "citations": 4, "answered": 4, "up": 0, "down": 4}
    assert {k: quality[current][k] for k in ("citations", "answered", "up", "down")} == {
        "citations": 5, "answered": 1, "up": 1, "down": 0}
    assert evidence == [] and reasons == {} and led == [{"answer_id": "led0", "doc_id": old}]
