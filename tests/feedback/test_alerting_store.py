"""The alert state's store functions (`feedback.alerting`, `feedback.switches`, `feedback.job_runs`,
`feedback.review_queue`) as a contract on both backends: a SQLite file and a real PostgreSQL server."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from feedback import FeedbackStore, InvalidRecord, job_runs, review_queue, switches
from feedback import alerting
from feedback.alerting import AmbiguousFingerprint, UnknownAlert

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def store(store_target):
    with FeedbackStore.open(store_target) as opened:
        yield opened


def alert_row(fp: str, **changes) -> dict:
    row = {
        "fingerprint": fp, "alert": "bad_document", "severity": "warning", "labels": {"doc_id": "api:auth.md"},
        "source": "bad_docs", "state": "firing", "bad_streak": 2, "good_streak": 0, "value": 0.21, "threshold": 0.3,
        "n": 40, "summary": "low thumbs-up rate", "link": "", "annotations": {"ratio": 0.21, "docs": ["a", "ü"]},
        "first_seen_at": T0, "started_at": T0, "resolved_at": None, "last_evaluated_at": T0,
        "last_notified_at": None, "notified_severity": None, "notify_count": 0, "acked_at": None, "acked_by": None,
    }
    row.update(changes)
    return row


def save(store, *rows: dict) -> None:
    with store.transaction() as conn:
        for row in rows:
            alerting.save_alert(conn, row)


def test_alert_rows_round_trip_decoded_and_upsert_replaces(store) -> None:
    east = timezone(timedelta(hours=9))
    save(store, alert_row("abcd000000000001", last_evaluated_at=T0.astimezone(east)))
    with store.snapshot() as conn:
        row = alerting.fetch_alert(conn, "abcd000000000001")
        assert alerting.fetch_alert(conn, "ffff000000000000") is None
    assert row == alert_row("abcd000000000001")  # times back in UTC, JSON back as dicts
    assert row["last_evaluated_at"].tzinfo is not None
    save(store, alert_row("abcd000000000001", state="resolved", resolved_at=T0 + timedelta(hours=1)))
    with store.snapshot() as conn:
        assert alerting.unresolved_alerts(conn) == []
        assert [r["state"] for r in alerting.alerts_in_states(conn, ["resolved"])] == ["resolved"]
        assert alerting.alerts_in_states(conn, []) == []
    with store.transaction() as conn, pytest.raises(InvalidRecord, match="missing"):
        alerting.save_alert(conn, {"fingerprint": "abcd"})


def test_unresolved_alerts_by_source_and_by_fingerprint_in_chunks(store) -> None:
    fps = [f"{i:016x}" for i in range(1, 1203)]
    save(store, *[alert_row(fp, source="a" if i % 2 else "b") for i, fp in enumerate(fps)])
    with store.snapshot() as conn:
        assert len(alerting.unresolved_alerts(conn, source="a")) == 601
        assert len(alerting.unresolved_alerts(conn)) == 1202
        found = alerting.alerts_by_fingerprint(conn, fps + ["ffffffffffffffff"])
    assert set(found) == set(fps)  # more than one IN chunk; the unknown one is left out


def test_fingerprint_prefixes_resolve_like_git(store) -> None:
    save(store, alert_row("abcd000000000001"), alert_row("abcd000000000002"), alert_row("beef000000000003"))
    with store.snapshot() as conn:
        assert alerting.resolve_fingerprint(conn, "BEEF") == "beef000000000003"
        assert alerting.resolve_fingerprint(conn, " abcd000000000002 ") == "abcd000000000002"
        with pytest.raises(AmbiguousFingerprint):
            alerting.resolve_fingerprint(conn, "abcd")
        for text in ("abc", "dead", "ab%d", "abc_"):
            with pytest.raises(UnknownAlert):
                alerting.resolve_fingerprint(conn, text)


def test_notifications_mark_delivered_alerts_and_list_failed_ones(store) -> None:
    save(store, alert_row("abcd000000000001"), alert_row("abcd000000000002", severity="critical"),
         alert_row("abcd000000000003", state="resolved", resolved_at=T0))
    with store.transaction() as conn:
        alerting.record_notification(conn, "abcd000000000001", kind="digest", route="daily", channel="C1",
                                     ts=None, at=T0, error="not_in_channel")
        alerting.record_notification(conn, "abcd000000000002", kind="digest", route="daily", channel="C1",
                                     ts=None, at=T0, error="ratelimited")
        alerting.record_notification(conn, "abcd000000000002", kind="digest", route="daily", channel="C1",
                                     ts="1.2", at=T0 + timedelta(minutes=1))
        alerting.record_notification(conn, "abcd000000000003", kind="digest", route="daily", channel="C1",
                                     ts=None, at=T0, error="not_in_channel")
    with store.snapshot() as conn:
        assert alerting.failed_deliveries(conn, route="daily") == ["abcd000000000001"]  # 2 re-sent, 3 resolved
        assert alerting.failed_deliveries(conn, route="weekly") == []
        delivered = alerting.fetch_alert(conn, "abcd000000000002")
        failed = alerting.fetch_alert(conn, "abcd000000000001")
        assert [n["error"] for n in alerting.notifications(conn, "abcd000000000002")] == ["ratelimited", None]
        assert alerting.firing_counts(conn) == {"warning": 1, "critical": 1}
        assert alerting.resolved_counts(conn, since=T0) == {"warning": 1}
        assert alerting.resolved_counts(conn, since=T0 + timedelta(seconds=1)) == {}
    assert (delivered["last_notified_at"], delivered["notified_severity"], delivered["notify_count"]) == (
        T0 + timedelta(minutes=1), "critical", 1)
    assert (failed["last_notified_at"], failed["notify_count"]) == (None, 0)


def test_silences_latest_expiry_counts_and_ending_them_is_logged(store) -> None:
    fp = "abcd000000000001"
    save(store, alert_row(fp))
    with store.transaction() as conn:
        first = alerting.insert_silence(conn, fp, created_at=T0, expires_at=T0 + timedelta(hours=2), created_by="U1")
        second = alerting.insert_silence(conn, fp, created_at=T0, expires_at=T0 + timedelta(hours=5), created_by="cli",
                                         comment="maintenance")
    assert second > first
    with store.snapshot() as conn:
        assert alerting.active_silences(conn, at=T0 + timedelta(hours=3)) == {fp: T0 + timedelta(hours=5)}
        assert alerting.active_silences(conn, at=T0 + timedelta(hours=5)) == {}
    with store.transaction() as conn:
        assert alerting.end_silences(conn, fp, by="cli", at=T0 + timedelta(hours=3)) == 1  # the other had expired
        assert alerting.end_silences(conn, fp, by="cli", at=T0 + timedelta(hours=3)) == 0
    with store.snapshot() as conn:
        assert alerting.active_silences(conn, at=T0 + timedelta(hours=3)) == {}
        events = alerting.alert_events(conn, fp)
        assert [s["expires_at"] for s in alerting.silences(conn)] == [T0 + timedelta(hours=2), T0 + timedelta(hours=3)]
    assert [e["kind"] for e in events] == ["silenced", "silenced", "unsilenced"]
    assert events[1]["detail"] == {"by": "cli", "until": "2025-03-03T14:00:00.000000+00:00", "comment": "maintenance"}


def test_acknowledging_keeps_the_first_ack(store) -> None:
    save(store, alert_row("abcd000000000001"))
    with store.transaction() as conn:
        assert alerting.acknowledge(conn, "abcd000000000001", by="U1", at=T0)
        assert not alerting.acknowledge(conn, "abcd000000000001", by="U2", at=T0 + timedelta(hours=1))
        assert not alerting.acknowledge(conn, "ffff000000000000", by="U2", at=T0)
    with store.snapshot() as conn:
        row = alerting.fetch_alert(conn, "abcd000000000001")
        assert [e["kind"] for e in alerting.alert_events(conn)] == ["acked"]
    assert (row["acked_by"], row["acked_at"]) == ("U1", T0)


def test_an_ack_during_an_evaluation_waits_for_it_and_is_not_lost(store) -> None:
    """An evaluation reads an alert and writes it back; an ack clicked in between (another replica, a Slack
    button) must neither be overwritten by the stale row nor fail."""
    fp = "abcd000000000001"
    save(store, alert_row(fp))
    read = threading.Event()

    def evaluation() -> None:
        with store.transaction() as conn:
            alerting.lock_alert_state(conn)
            row = alerting.fetch_alert(conn, fp)
            read.set()
            time.sleep(0.5)
            alerting.save_alert(conn, dict(row, good_streak=row["good_streak"] + 1))

    worker = threading.Thread(target=evaluation)
    worker.start()
    assert read.wait(10)
    with store.transaction() as conn:
        assert alerting.acknowledge(conn, fp, by="U1", at=T0)
    worker.join(10)
    with store.snapshot() as conn:
        row = alerting.fetch_alert(conn, fp)
    assert (row["acked_by"], row["good_streak"]) == ("U1", 1)


def test_switch_logs_append_only_real_changes_and_the_latest_row_counts(store) -> None:
    with store.transaction() as conn:
        assert switches.set_collection_disabled(conn, "plans", True, reason="x" * 900, fingerprint="abcd",
                                                changed_by="alert", at=T0)
        assert not switches.set_collection_disabled(conn, "plans", True, reason="again", fingerprint=None,
                                                    changed_by="cli", at=T0)
        assert not switches.set_collection_disabled(conn, "api", False, reason="never off", fingerprint=None,
                                                    changed_by="cli", at=T0)
        assert switches.set_collection_disabled(conn, "plans", False, reason="fixed", fingerprint=None,
                                                changed_by="cli", at=T0 + timedelta(hours=1))
        assert switches.set_document_quarantined(conn, "api:a.md", True, reason="spike", fingerprint="beef",
                                                 changed_by="alert", at=T0)
        with pytest.raises(InvalidRecord):
            switches.set_document_quarantined(conn, "no-collection", True, reason="", fingerprint=None,
                                              changed_by="cli", at=T0)
    with store.snapshot() as conn:
        (plans,) = switches.collection_states(conn)
        changes = switches.collection_changes(conn)
        (doc,) = switches.document_states(conn)
        assert [d["doc_id"] for d in switches.document_changes(conn)] == ["api:a.md"]
    assert plans == {"collection": "plans", "disabled": False, "reason": "fixed", "fingerprint": None,
                     "changed_by": "cli", "changed_at": T0 + timedelta(hours=1)}
    assert [(c["disabled"], len(c["reason"])) for c in changes] == [(True, switches.MAX_REASON_CHARS), (False, 5)]
    assert (doc["doc_id"], doc["quarantined"], doc["fingerprint"]) == ("api:a.md", True, "beef")


def test_job_runs_history_failures_and_reindex_marks(store) -> None:
    with store.transaction() as conn:
        ids = [job_runs.start_run(conn, "coverage", trigger="schedule", started_at=T0 + timedelta(hours=h), pid=7)
               for h in range(4)]
        for run_id, outcome in zip(ids, ("failed", "ok", "failed", "failed")):
            assert job_runs.finish_run(conn, run_id, outcome=outcome, ended_at=T0 + timedelta(hours=5),
                                       error="boom" * 1000 if outcome == "failed" else None, findings=3)
        assert not job_runs.finish_run(conn, 999_999, outcome="ok", ended_at=T0)
        with pytest.raises(InvalidRecord):
            job_runs.finish_run(conn, ids[0], outcome="running", ended_at=T0)
        job_runs.start_run(conn, "reindex", trigger="mark", started_at=T0, pid=7, target="api")
        job_runs.start_run(conn, "reindex", trigger="mark", started_at=T0 - timedelta(hours=9), pid=7, target="old")
    with store.snapshot() as conn:
        assert job_runs.consecutive_failures(conn, "coverage") == 2
        assert job_runs.consecutive_failures(conn, "never_ran") == 0
        (latest,) = job_runs.latest_runs(conn)  # marks left out
        assert job_runs.running_targets(conn, "reindex", started_after=T0 - timedelta(hours=6)) == {"api"}
        recent = job_runs.recent_runs(conn, "coverage", limit=2)
    assert (latest["run_id"], latest["outcome"], latest["findings"]) == (ids[-1], "failed", 3)
    assert latest["started_at"] == T0 + timedelta(hours=3) and latest["ended_at"] == T0 + timedelta(hours=5)
    assert len(latest["error"]) == job_runs.MAX_ERROR_CHARS
    assert [r["run_id"] for r in recent] == [ids[3], ids[2]]


def test_review_queue_upsert_keeps_status_and_first_seen(store) -> None:
    candidate = {"problem": "coverage_gap", "subject": "policy/7", "action": "add_page", "priority": 2,
                 "weight": 60, "reason": "60 questions", "details": {"n": 60}, "auto_deprecate": False}
    with store.transaction() as conn:
        assert review_queue.upsert_items(conn, "coverage", [candidate], at=T0) == 1
        assert review_queue.upsert_items(conn, "coverage", [], at=T0) == 0
        (item,) = review_queue.fetch_items(conn)
        assert review_queue.set_status(conn, item["item_id"], "dismissed", at=T0 + timedelta(hours=1))
        review_queue.upsert_items(conn, "gaps", [dict(candidate, weight=80, details={"n": 80})],
                                  at=T0 + timedelta(hours=2))
        assert review_queue.fetch_items(conn) == []
        (closed,) = review_queue.fetch_items(conn, status=None)
        assert not review_queue.set_status(conn, 999_999, "done", at=T0)
        assert review_queue.set_status(conn, item["item_id"], "open", at=T0)
        (reopened,) = review_queue.fetch_items(conn, limit=1)
        with pytest.raises(InvalidRecord):
            review_queue.fetch_items(conn, status="closed")
    assert (closed["status"], closed["signal"], closed["weight"], closed["details"]) == ("dismissed", "gaps", 80.0,
                                                                                          {"n": 80})
    assert closed["first_seen_at"] < closed["last_seen_at"] and closed["closed_at"] is not None
    assert (reopened["status"], reopened["closed_at"], reopened["auto_deprecate"]) == ("open", None, False)
