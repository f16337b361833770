"""Questions are personal data (issue 10 item 6): retention keeps the monitoring figures, forget leaves nothing.

Written through the store's API, on both backends (`store_target`: a SQLite file, then a real PostgreSQL); the
coverage and bad-document figures are computed by the real signal checks (no knowledge base: every cited
document is judged, labels set directly); the alert layer's rows come from the real `jobs.alerts` in one test
and straight from `feedback.schema` in another, so forgetting is checked on every table either way.
"""

from __future__ import annotations

import itertools
import json
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from click.testing import CliRunner

from config import ConfigError, load_settings
from config.alerts import load_alerts_config
from feedback import FeedbackStore, db, schema
from feedback._time import utc_iso
from feedback.retention import FORGOTTEN, REMOVED
from jobs import alerts, killswitch, runs, silences
from jobs.retention import apply, forget
from jobs.page_actions import take_out
from jobs.signals import bad_docs, coverage
from tests.jobs.monitoring_helpers import make_ctx

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=timezone.utc)
BAD, GOOD = "runbooks:node-disk-full.md", "runbooks:incident-severity.md"
ASKERS = [f"U{i:03d}" for i in range(12)]
FORGET = "U0FORGET1"


_labelled = itertools.count()


@pytest.fixture
def store(store_target):
    """The store under test, on SQLite and on PostgreSQL."""
    with FeedbackStore.open(store_target) as opened:
        yield opened


def query(store, sql: str, **params) -> list[dict]:
    """Rows of a SELECT on ``store`` (named ``:params``), on either backend."""
    with store.snapshot() as conn:
        return db.rows(conn, sql, **params)


def count(store, sql: str, **params) -> int:
    with store.snapshot() as conn:
        return db.scalar(conn, sql, **params)


def label(store, answer_id: str, intent: str, topic_id: int) -> None:
    """Labels an answer directly, as `jobs.classify` would: the topic is created by its first labelled answer
    (``labelled_at`` increases with every call, like the classifier's oldest-first order)."""
    stamp = utc_iso(NOW + timedelta(seconds=next(_labelled)))
    with store.transaction() as conn:
        created = db.scalar(conn, "SELECT created_at FROM answers WHERE answer_id = :a", a=answer_id)
        question = db.scalar(conn, "SELECT question FROM answers WHERE answer_id = :a", a=answer_id)
        db.run(conn, "INSERT INTO topics (topic_id, label, model, centroid, n, created_at, updated_at) "
                     "VALUES (:t, :label, 'test', :c, 0, :at, :at) ON CONFLICT (topic_id) DO NOTHING",
               t=topic_id, label=question, c=np.zeros(4, np.float32).tobytes(), at=stamp)
        db.run(conn, "INSERT INTO answer_labels (answer_id, intent, topic_id, created_at, labelled_at) "
                     "VALUES (:a, :intent, :t, :created, :at)",
               a=answer_id, intent=intent, t=topic_id, created=created, at=stamp)


def ask(store, n: int, *, question: str, user: str, cited=(), votes=(), flags=(), days_ago: float = 5,
        intent: str = "how-to", topic: int = 1) -> str:
    """Record one answer asked by ``user`` ``days_ago`` days before NOW, its votes and reports, and its label."""
    at = NOW - timedelta(days=days_ago)
    answer_id = f"a{n:05d}"
    retrieved = [{"chunk_id": f"{d}#0", "doc_id": d, "score": 0.8} for d in cited]
    retrieved += [{"chunk_id": "api:errors.md#0", "doc_id": "api:errors.md", "score": 0.1}]
    store.record_answer(answer_id=answer_id, question=question, channel="C1", thread_ts=f"{n}.0", user_id=user,
                        retrieved=retrieved, cited_doc_ids=list(cited), refused=not cited,
                        top_score=0.8 if cited else 0.1, latency_ms=50.0, created_at=at)
    for voter, value in votes:
        store.record_vote(answer_id, voter, value, voted_at=at + timedelta(minutes=5))
    for reporter in flags:
        store.record_flag(answer_id, reporter, f"wrong, says {reporter}", created_at=at + timedelta(minutes=6))
    label(store, answer_id, intent, topic)
    return answer_id


def populate(store) -> None:
    """A month of traffic: a badly rated runbook, a liked one, and a refused topic, from a dozen people."""
    n = 0
    for i in range(40):  # the bad page: 1 in 7 👍, some reports
        user = ASKERS[i % len(ASKERS)]
        voter = ASKERS[(i + 1) % len(ASKERS)]
        ask(store, n := n + 1, question=f"node disk is full on worker {i}, what do I do?", user=user, cited=(BAD,),
            votes=[(voter, "up" if i % 7 == 0 else "down")], flags=[voter] if i % 4 == 0 else [],
            days_ago=1 + i * 0.5, topic=1)
    for i in range(40):  # the good page
        ask(store, n := n + 1, question=f"how do I declare a sev1 for service {i}?", user=ASKERS[i % 5],
            cited=(GOOD,), votes=[(ASKERS[(i + 3) % len(ASKERS)], "up" if i % 5 else "down")], days_ago=2 + i * 0.5,
            intent="policy", topic=2)
    for i in range(60):  # refused: a coverage gap
        ask(store, n := n + 1, question=f"what is the parental leave policy for case {i}?", user=ASKERS[i % 7],
            days_ago=1.5 + i * 0.3, intent="policy", topic=3)


def figures(ctx) -> dict:
    """What the signals report, without the parts that quote question texts or topic labels."""
    cov = coverage.check(ctx)
    cells = [{k: v for k, v in c.items() if k != "topic"} for c in cov.status["cells"]]
    bad = bad_docs.check(ctx)
    drop = {"evidence"}
    table = {k: [{f: v for f, v in row.items() if f not in drop} for row in bad.status[k]]
             for k in ("bad", "watch", "worst")}
    # Coverage gaps are grouped from question texts (issue 11) over a 14-day window, so they need the texts
    # retention keeps (90 days by default); the cells (intent × topic counts) come from labels and must stay.
    return {"cells": cells,
            "bad_docs": table, "evaluated": bad.status["evaluated"],
            "bad_findings": [(f.labels, f.value, f.n) for f in bad.findings]}


def test_retention_removes_old_question_texts_and_anonymises_old_user_ids(store) -> None:
    populate(store)
    cutoff = utc_iso(NOW - timedelta(days=1))
    distinct = "SELECT COUNT(DISTINCT user_id) FROM flags WHERE created_at < :cutoff"
    distinct_reporters = count(store, distinct, cutoff=cutoff)
    votes_before = query(store, "SELECT answer_id, value FROM votes ORDER BY answer_id")

    # 1-day windows (the smallest the config allows) so the rows the signals read are the ones anonymised
    policy = load_settings().retention
    policy.questions_days = policy.user_ids_days = 1
    counts = apply(store, policy, now=NOW)

    assert counts["questions"] == 139 and counts["answer_user_ids"] == 139  # all but the 1-day-old answer
    assert counts["vote_user_ids"] > 70 and counts["flag_user_ids"] == 9 and counts["flag_reasons"] == 9
    assert counts["topic_labels"] == 2                # founded by an old question (topic 1's is 1 day old)
    old = query(store, "SELECT question, user_id, redacted_at FROM answers WHERE created_at < :cutoff", cutoff=cutoff)
    assert len(old) == 139
    assert {r["question"] for r in old} == {REMOVED} and all(r["redacted_at"] == utc_iso(NOW) for r in old)
    assert all(r["user_id"].startswith("anon:") and len(r["user_id"]) == 21 for r in old)
    recent = query(store, "SELECT question, user_id FROM answers WHERE redacted_at IS NULL")
    assert len(recent) == 1 and all(r["user_id"] in ASKERS and r["question"] != REMOVED for r in recent)
    for table in ("votes", "flags"):
        ids = [r["user_id"] for r in query(store, f"SELECT user_id FROM {table}")]
        assert sum(i.startswith("anon:") for i in ids) >= len(ids) - 1     # all but the 1-day-old answer's
    assert count(store, distinct, cutoff=cutoff) == distinct_reporters    # a salted hash keeps people apart
    # the same person gets the same pseudonym in every table, the one `store.pseudonym` gives
    asker = query(store, "SELECT user_id FROM answers WHERE answer_id = 'a00013'")[0]["user_id"]
    assert asker == store.pseudonym(ASKERS[0]) != store.pseudonym(ASKERS[1])
    assert {r["reason"] for r in query(store, "SELECT reason FROM flags WHERE created_at < :c", c=cutoff)} == {""}
    labels = [r["label"] for r in query(store, "SELECT label FROM topics ORDER BY topic_id")]
    assert [lbl.startswith(REMOVED) for lbl in labels] == [False, True, True]
    assert labels[1:] == [f"{REMOVED} topic 2", f"{REMOVED} topic 3"]
    assert query(store, "SELECT answer_id, value FROM votes ORDER BY answer_id") == votes_before  # counts stay
    # idempotent
    assert set(apply(store, policy, now=NOW).values()) == {0}


def test_retention_keeps_coverage_and_bad_document_figures_and_nothing_redacted_is_classified(
        store, tmp_path, sample_settings) -> None:
    from jobs.classify import count_pending

    populate(store)
    ctx = make_ctx(store, tmp_path, sample_settings, None, now=NOW)
    before = figures(ctx)
    assert before["cells"] and before["bad_findings"], "the fixture must produce cells and a bad document"
    policy = load_settings().retention
    policy.questions_days = policy.user_ids_days = 1
    assert apply(store, policy, now=NOW)["questions"] == 139
    assert figures(ctx) == before
    with store.transaction() as conn:
        db.run(conn, "DELETE FROM answer_labels")
    with store.snapshot() as conn:
        assert count_pending(conn) == 1
    assert store.apply_retention(questions_days=1, user_ids_days=1, user_ids="remove", now=NOW)[
        "answer_user_ids"] == 0                                        # already pseudonymised
    assert figures(ctx)["bad_findings"] == before["bad_findings"]


def test_remove_mode_leaves_no_pseudonym_and_keeps_the_counts(store) -> None:
    populate(store)
    cutoff = utc_iso(NOW - timedelta(days=1))
    per_answer = "SELECT answer_id, COUNT(*) AS n FROM votes GROUP BY answer_id ORDER BY answer_id"
    before = query(store, per_answer)
    counts = store.apply_retention(questions_days=1, user_ids_days=1, user_ids="remove", now=NOW)
    assert counts["answer_user_ids"] == 139 and counts["vote_user_ids"] > 70 and counts["flag_user_ids"] == 9
    assert count(store, "SELECT COUNT(*) FROM answers WHERE user_id IS NULL") == 139
    voters = [r["user_id"] for r in query(store, "SELECT user_id FROM votes WHERE voted_at < :c", c=cutoff)]
    assert all(v.startswith("anon:") for v in voters)
    assert len(set(voters)) == len(voters)                                # random per row: nothing links them
    assert query(store, per_answer) == before
    assert set(store.apply_retention(questions_days=1, user_ids_days=1, user_ids="remove", now=NOW).values()) == {0}
    with pytest.raises(ValueError, match="user_ids must be"):
        store.apply_retention(questions_days=1, user_ids_days=1, user_ids="scramble", now=NOW)


def test_retention_keeps_recent_rows_under_the_default_policy(store) -> None:
    populate(store)
    policy = load_settings().retention
    assert (policy.enabled, policy.questions_days, policy.user_ids_days, policy.user_ids) == (True, 90, 90, "hash")
    assert set(apply(store, policy, now=NOW).values()) == {0}            # the month of traffic is younger
    assert apply(store, policy, now=NOW + timedelta(days=200))["questions"] == 140
    policy.enabled = False
    assert apply(store, policy, now=NOW + timedelta(days=400)) == {}


def test_the_salt_is_made_once_and_kept(store) -> None:
    first = store.pseudonym("U1")
    assert first.startswith("anon:") and len(first) == 21
    assert store.pseudonym(" U1 ") == first and store.pseudonym(first) == first
    assert count(store, "SELECT COUNT(*) FROM store_meta WHERE key = 'pseudonym_salt'") == 1
    with store.transaction() as conn:                                      # a store_meta emptied by hand
        db.run(conn, "DELETE FROM store_meta")
    assert store.pseudonym("U1") != first


@pytest.mark.parametrize("body, message", [
    ("retention: {questions_days: 0}", "retention.questions_days must be a number of days"),
    ("retention: {user_ids: scramble}", "retention.user_ids must be one of"),
    ("retention: {question_days: 30}", "unknown key 'retention.question_days'"),
    ("retention: {questions_days: '90'}", "retention.questions_days must be int"),
])
def test_the_retention_section_is_validated(tmp_path, body: str, message: str) -> None:
    path = tmp_path / "minerva.yaml"
    path.write_text(body + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_settings(path)


def every_value(store) -> list[tuple[str, str, str]]:
    """(table, column, text) of every non-NULL value of every table of the store."""
    found = []
    with store.snapshot() as conn:
        for table in schema.METADATA.sorted_tables:
            for row in conn.execute(table.select()).mappings():
                found += [(table.name, c, str(v)) for c, v in row.items() if v is not None]
    return found


def held_by(store, *needles: str) -> list[tuple[str, str, str]]:
    return [v for v in every_value(store) if any(n in v[2] for n in needles)]


def plant_operator_rows(store, question: str) -> None:
    """What the alert layer writes about a person, directly through the schema: an alert they acked whose
    evidence quotes their question, its events, a silence and a kill switch in their name, a review item."""
    at = utc_iso(NOW)
    quoted = json.dumps({"evidence": [question]}, ensure_ascii=False)
    alias = store.pseudonym(FORGET)
    with store.transaction() as conn:
        conn.execute(schema.alerts.insert(), [dict(
            fingerprint="fp1", alert="bad_document", severity="warning", labels="{}", source="bad_docs",
            state="firing", bad_streak=1, good_streak=0, summary=f'asked "{question[:80]}" and more', link="",
            annotations=quoted, first_seen_at=at, last_evaluated_at=at, notify_count=0, acked_by=FORGET)])
        conn.execute(schema.alert_events.insert(), [
            dict(fingerprint="fp1", at=at, kind="acked", detail=json.dumps({"by": FORGET})),
            dict(fingerprint="fp1", at=at, kind="silenced", detail=json.dumps({"by": alias})),
            dict(fingerprint="fp1", at=at, kind="fired", detail=json.dumps({"by": "U001"}))])
        conn.execute(schema.silences.insert(), [dict(fingerprint="fp1", created_at=at, expires_at=at,
                                                     created_by=FORGET, comment="looking into it")])
        conn.execute(schema.kill_switch.insert(), [dict(collection="runbooks", disabled=1, reason="testing",
                                                        changed_by=FORGET, changed_at=at)])
        conn.execute(schema.review_queue.insert(), [dict(
            problem="bad_document", subject=BAD, signal="bad_docs", action="rewrite", priority=1, weight=1.0,
            reason=f"users asked: {question}", details=quoted, auto_deprecate=0, status="open",
            first_seen_at=at, last_seen_at=at)])


def test_forget_leaves_no_row_with_the_users_id_or_questions_behind(store) -> None:
    populate(store)
    mine = [ask(store, 900 + i, question=f"my manager Dana keeps asking about my medical leave form {i}",
                user=FORGET, cited=(BAD,), votes=[("U001", "down")], flags=["U002"], days_ago=3 + i, topic=9 + i)
            for i in range(3)]
    ask(store, 950, question="an old question of theirs, anonymised by retention already", user=FORGET,
        days_ago=40, topic=3)
    store.record_vote("a00002", FORGET, "down", voted_at=NOW)
    store.record_vote_reason("a00003", FORGET, "outdated", at=NOW)
    store.record_flag("a00004", FORGET, "this is wrong", created_at=NOW)
    store.record_answer(answer_id="follow", question="and for contractors?", channel="C1", thread_ts="900.0",
                        user_id="U005", retrieved=[], cited_doc_ids=[], refused=True, top_score=0.0, latency_ms=1.0,
                        created_at=NOW, follow_up_of=mine[0])
    store.apply_retention(questions_days=30, user_ids_days=30, now=NOW)  # the old one now holds a pseudonym
    plant_operator_rows(store, "my manager Dana keeps asking about my medical leave form 0")
    pseudonym = store.pseudonym(FORGET)
    held = held_by(store, FORGET, pseudonym, "medical leave form")
    assert {(t, c) for t, c, _ in held} >= {("answers", "user_id"), ("votes", "user_id"), ("flags", "user_id"),
                                             ("alerts", "acked_by"), ("silences", "created_by"),
                                             ("kill_switch", "changed_by"), ("answers", "question"),
                                             ("topics", "label"), ("alert_events", "detail"), ("alerts", "summary"),
                                             ("alerts", "annotations"), ("review_queue", "reason")}
    found = store.user_rows(FORGET)                  # what --dry-run prints: every column forget changes
    assert {k: n for k, n in found.items() if n} == {
        "answers.user_id": 4, "votes.user_id": 2, "flags.user_id": 1, "alerts.acked_by": 1, "silences.created_by": 1,
        "kill_switch.changed_by": 1, "topics.label": 3, "alerts.summary": 1, "alerts.annotations": 1,
        "review_queue.reason": 1, "review_queue.details": 1, "alert_events.detail": 2}
    assert set(found) >= {"quarantine.changed_by", "quarantine.reason", "kill_switch.reason", "silences.comment",
                          "job_runs.error"}
    others = count(store, "SELECT COUNT(*) FROM answers WHERE user_id NOT IN :ids", ids=[FORGET, pseudonym])
    assert others == 141

    counts = forget(store, FORGET)

    assert counts == {"votes": 2 + 3, "flags": 1 + 3, "citations": 3, "answer_passages": 7, "answer_labels": 4,
                      "follow_ups_unlinked": 1, "topics": 3, "answers": 4, "alerts": 1, "silences": 1,
                      "kill_switch": 1, "alert_events": 2, "review_queue": 1, "quarantine": 0, "job_runs": 0,
                      "expert_answer_votes": 0, "expert_answers": 0, "expert_requests": 0, "page_verifications": 0}
    assert held_by(store, FORGET, pseudonym, "medical leave form") == []
    assert set(store.user_rows(FORGET).values()) == {0}
    assert store.get_answer("follow")["follow_up_of"] is None
    assert count(store, "SELECT COUNT(*) FROM answers") == others        # nobody else's answer went
    assert [r["detail"] for r in query(store, "SELECT detail FROM alert_events ORDER BY event_id")] == [
        json.dumps({"by": FORGOTTEN}), json.dumps({"by": FORGOTTEN}), json.dumps({"by": "U001"})]
    assert query(store, "SELECT changed_by, disabled FROM kill_switch") == [{"changed_by": FORGOTTEN, "disabled": 1}]
    assert set(forget(store, FORGET).values()) == {0}
    with pytest.raises(ValueError, match="non-empty"):
        store.forget_user("  ")


def test_forget_scrubs_the_evidence_the_alert_layer_wrote(store, tmp_path, sample_settings) -> None:
    populate(store)
    for i in range(3):
        ask(store, 900 + i, question=f"my manager Dana keeps asking about my medical leave form {i}",
            user=FORGET, cited=(BAD,), votes=[("U001", "down")], flags=["U002"], days_ago=3 + i, topic=9)
    ctx = make_ctx(store, tmp_path, sample_settings, None, now=NOW)
    alerts.evaluate(store, load_alerts_config(), "bad_docs", bad_docs.run(ctx), now=NOW)
    fp = alerts.fingerprint("bad_document", {"doc_id": BAD})
    alerts.acknowledge(store, fp, by=FORGET, now=NOW)
    silences.add_silence(store, fp, hours=2, by=FORGET, now=NOW, comment="looking into it")
    killswitch.disable(store, "runbooks", reason="testing", changed_by=FORGET, now=NOW)
    held = held_by(store, FORGET, "medical leave form")
    assert {t for t, _, _ in held} >= {"alerts", "alert_events", "review_queue", "silences", "kill_switch"}

    counts = forget(store, FORGET)

    assert counts["alerts"] >= 1 and counts["alert_events"] >= 1 and counts["review_queue"] >= 1
    assert held_by(store, FORGET, store.pseudonym(FORGET), "medical leave form") == []
    assert killswitch.disabled_collections(store) == {"runbooks"}          # the action stays, nobody is named


@pytest.fixture
def cli_home(store_target, tmp_path, monkeypatch):
    """A home whose store is the default SQLite file, or PostgreSQL named by ``MINERVA_DATABASE_URL``."""
    home = tmp_path / "home"
    if isinstance(store_target, str):
        monkeypatch.setenv("MINERVA_DATABASE_URL", store_target)
        return home, store_target
    return home, home / "minerva.sqlite"


def test_cli_retention_and_forget_print_what_they_did(cli_home) -> None:
    from bot.cli.main import cli

    home, target = cli_home
    with FeedbackStore.open(target) as opened:
        ask(opened, 1, question="where is the VPN guide?", user=FORGET, cited=(GOOD,), votes=[("U001", "up")],
            days_ago=100)
        ask(opened, 2, question="who approves travel?", user="U001", cited=(GOOD,), votes=[(FORGET, "up")],
            days_ago=1)
    runner = CliRunner()
    result = runner.invoke(cli, ["--home", str(home), "retention", "--now", NOW.isoformat(), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["changed"]["questions"] == 1
    result = runner.invoke(cli, ["--home", str(home), "forget", "--user", FORGET])
    assert result.exit_code == 0, result.output
    assert f"{FORGET}:" in result.output and "  answers: 1" in result.output and "  votes: 2" in result.output
    with FeedbackStore.open(target) as opened:
        assert query(opened, "SELECT answer_id FROM answers") == [{"answer_id": "a00002"}]
    result = runner.invoke(cli, ["--home", str(home), "retention", "--now", "yesterday"])
    assert result.exit_code != 0 and "not an ISO date" in result.output


def test_cli_forget_dry_run_counts_the_alerts_that_name_them_and_changes_nothing(cli_home) -> None:
    from bot.cli.main import cli

    home, target = cli_home
    question = "where is the VPN guide for contractors?"
    with FeedbackStore.open(target) as opened:
        ask(opened, 1, question=question, user=FORGET, days_ago=2)
        with opened.transaction() as conn:                 # a coverage gap's alert, as `jobs.signals.coverage`
            at = utc_iso(NOW)
            conn.execute(schema.alerts.insert(), [dict(
                fingerprint="fp-gap", alert="coverage_gap", severity="warning", labels='{"gap": "contractors-vpn"}',
                source="coverage", state="firing", bad_streak=1, good_streak=0, link="", first_seen_at=at,
                last_evaluated_at=at, notify_count=0, summary=f"5 questions from 2 users, e.g. “{question}”",
                annotations=json.dumps({"by_user": {FORGET: 1, "U001": 4}, "samples": [question]}))])
    runner = CliRunner()
    result = runner.invoke(cli, ["--home", str(home), "forget", "--user", FORGET, "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "  alerts.annotations: 1" in result.output and "  alerts.summary: 1" in result.output
    assert "  answers.user_id: 1" in result.output and "would act on" in result.output
    result = runner.invoke(cli, ["--home", str(home), "forget", "--user", FORGET, "--dry-run", "--json"])
    assert json.loads(result.output)["found"]["alerts.annotations"] == 1
    with FeedbackStore.open(target) as opened:
        assert FORGET in query(opened, "SELECT annotations FROM alerts")[0]["annotations"]   # nothing changed
    result = runner.invoke(cli, ["--home", str(home), "forget", "--user", FORGET, "--json"])
    assert json.loads(result.output.splitlines()[-1])["removed"]["alerts"] == 1      # after the log line
    with FeedbackStore.open(target) as opened:
        (row,) = query(opened, "SELECT summary, annotations FROM alerts")
    assert json.loads(row["annotations"]) == {"by_user": {FORGOTTEN: 1, "U001": 4}, "samples": [REMOVED]}
    assert row["summary"] == f"5 questions from 2 users, e.g. “{REMOVED}”"


def test_a_second_vote_after_the_first_was_anonymised_is_kept_under_the_pseudonym(store) -> None:
    """Hashing gives the same pseudonym again: the newer vote replaces the anonymised one (last write wins)."""
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    store.record_answer(answer_id="old", question="q", channel="C1", thread_ts="1.0", user_id="U1",
                        retrieved=[{"chunk_id": "d#0", "doc_id": "d", "score": 0.8}], cited_doc_ids=["d"],
                        refused=False, top_score=0.8, latency_ms=1.0, created_at=start)
    store.record_vote("old", "U7", "up", voted_at=start)
    store.apply_retention(questions_days=90, user_ids_days=90, now=start + timedelta(days=100))
    store.record_vote("old", "U7", "down", voted_at=start + timedelta(days=101))
    store.apply_retention(questions_days=90, user_ids_days=90, now=start + timedelta(days=200))
    (vote,) = store.votes_for("old")
    assert vote["user_id"] == store.pseudonym("U7") and vote["value"] == "down"


# --- every copy the jobs write (issue 27, "Nothing leaks and nothing is dropped") ------------------------------

#: The forgotten person's questions: two join a coverage gap, two are reported answers citing the bad page.
THEIR_GAP_QUESTIONS = ["Is there a home internet stipend for remote employees?",
                       "home internet stipend for remote employees — how much is it?"]
OTHERS_GAP_QUESTIONS = [("U001", "Is there a home internet stipend for remote workers?"),
                        ("U002", "Do remote employees get a home internet stipend?"),
                        ("U003", "What is the home internet stipend for remote staff?")]
THEIR_BAD_QUESTIONS = ["why does the node disk cleanup runbook fail on my laptop \"agent\"?",
                       "node disk full again, the runbook's cleanup step did nothing"]
#: A question about nothing else asked: it founds a topic, which the classifier names after it.
THEIR_TOPIC_QUESTION = "how do I book the sauna in the Oslo office for Friday?"


def asked(store, answer_id: str, question: str, user: str, at: datetime, cited=()) -> str:
    """One answer through the store's API, left unlabelled (the coverage job labels it, `jobs.classify`)."""
    retrieved = [{"chunk_id": f"{d}#0", "doc_id": d, "score": 0.8} for d in cited]
    store.record_answer(answer_id=answer_id, question=question, channel="C1", thread_ts=None, user_id=user,
                        retrieved=retrieved, cited_doc_ids=list(cited), refused=not cited,
                        top_score=0.8 if cited else 0.05, latency_ms=40.0, created_at=at)
    return answer_id


def traffic_through_the_jobs(store, home, settings, kb, *, operator: bool = True) -> None:
    """Everything Minerva writes about a person, written by the code that writes it in production.

    FORGET asks two questions of a coverage gap (with three others), two about a badly rated page and one
    about nothing else asked (it founds a topic), votes
    (with a reason) and reports; one reply of theirs could not be posted. The real jobs then run: coverage
    (labels the answers, so topics are named after questions; a ``coverage_gap`` alert with ``by_user`` and
    samples; a review item), bad documents (a ``bad_document`` alert quoting their questions; a
    ``wrong_answer_spike``, its evidence quoting them, whose page an admin then takes out of search).
    With ``operator``, FORGET also acks and silences an alert (its comment quotes a question), disables a
    collection and quarantines a page (its reason quotes an alert summary), and a job fails on one of their
    questions.
    """
    for i in range(30):  # a badly rated page: 1 👍 in 6, reported now and then, from nine people
        answer = asked(store, f"bad{i:02d}", f"node disk is full on worker {i}, what now?", ASKERS[i % 9],
                       NOW - timedelta(days=2 + i * 0.4), cited=(BAD,))
        store.record_vote(answer, ASKERS[(i + 1) % 9], "up" if i % 6 == 0 else "down",
                          voted_at=NOW - timedelta(days=2 + i * 0.4))
    for i, question in enumerate(THEIR_BAD_QUESTIONS):
        answer = asked(store, f"theirs-bad{i}", question, FORGET, NOW - timedelta(hours=3 + i), cited=(BAD,))
        store.record_vote(answer, "U001", "down", voted_at=NOW - timedelta(hours=2))
        for reporter in ("U002", "U003", "U004"):
            store.record_flag(answer, reporter, "the cleanup step is gone", created_at=NOW - timedelta(hours=2))
    for i, (user, question) in enumerate(OTHERS_GAP_QUESTIONS):
        asked(store, f"gap{i}", question, user, NOW - timedelta(hours=20 + i))
    for i, question in enumerate(THEIR_GAP_QUESTIONS):
        asked(store, f"theirs-gap{i}", question, FORGET, NOW - timedelta(hours=10 + i))
    asked(store, "theirs-sauna", THEIR_TOPIC_QUESTION, FORGET, NOW - timedelta(days=1))
    store.record_vote("bad03", FORGET, "down", voted_at=NOW - timedelta(hours=1))
    store.record_vote_reason("bad03", FORGET, "outdated", at=NOW - timedelta(hours=1))
    store.record_flag("bad04", FORGET, f"wrong, and I asked “{THEIR_BAD_QUESTIONS[0]}” before",
                      created_at=NOW - timedelta(hours=1))
    store.keep_undelivered_reply("theirs-gap0", channel="D0FORGET", thread_ts=None,
                                 text=f"<@{FORGET}> nothing answers “{THEIR_GAP_QUESTIONS[0]}”",
                                 blocks=[{"type": "section",
                                          "text": {"type": "mrkdwn", "text": THEIR_GAP_QUESTIONS[0]}}],
                                 error="ratelimited", now=NOW)

    config = load_alerts_config()
    with_kb = make_ctx(store, home, settings, kb, now=NOW)
    alerts.evaluate(store, config, "coverage", coverage.run(with_kb), now=NOW)
    alerts.evaluate(store, config, "bad_docs", bad_docs.run(make_ctx(store, home, settings, None, now=NOW)), now=NOW)
    # an admin takes the spike's pages out from its alert, as the button does (`bot.slack.alert_buttons`)
    spike = next(a for a in alerts.list_alerts(store, config, now=NOW) if a.alert.alert == "wrong_answer_spike").alert
    take_out(store, config, list(spike.annotations["documents"]), by="U0ADMIN",
             reason=f"wrong_answer_spike: taken out of search by U0ADMIN from the alert ({spike.summary[:200]})", now=NOW)
    if not operator:
        return
    bad = alerts.get_alert(store, alerts.fingerprint("bad_document", {"doc_id": BAD}))
    gap = next(a for a in alerts.list_alerts(store, config, now=NOW) if a.alert.alert == "coverage_gap").alert
    alerts.acknowledge(store, gap.fingerprint, by=FORGET, now=NOW)
    silences.add_silence(store, bad.fingerprint, hours=4, by=FORGET, now=NOW,
                         comment=f"same as “{THEIR_BAD_QUESTIONS[1]}”, {FORGET} is on it")
    killswitch.disable(store, "api", reason=f"{FORGET}: testing", changed_by=FORGET, now=NOW)
    killswitch.quarantine(store, GOOD, reason=bad.summary, changed_by=FORGET, now=NOW)
    run_id = runs.start_run(store, "classify", trigger="manual", now=NOW)
    runs.finish_run(store, run_id, outcome="failed", now=NOW,
                    error=f"ValueError: cannot embed {THEIR_BAD_QUESTIONS[1]!r} (asked by {FORGET})")


def texts_held(store) -> list[tuple[str, str, str]]:
    """(table, column, text) of every value of every table, and of every string and key inside a JSON value
    (decoded, so a question with quotes or non-ASCII text is found whatever its escaping)."""
    found = []
    for table, column, value in every_value(store):
        found.append((table, column, value))
        try:
            decoded = json.loads(value)
        except ValueError:
            continue
        found += [(table, column, s) for s in json_strings(decoded)]
    return found


def json_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in json_strings(item)]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (key, *json_strings(item))]
    return []


def columns_holding(store, *needles: str) -> set[tuple[str, str]]:
    return {(t, c) for t, c, text in texts_held(store) if any(n in text for n in needles)}


def test_forget_reaches_every_table_and_json_field_the_jobs_filled(store, tmp_path, sample_settings,
                                                                   sample_kb) -> None:
    traffic_through_the_jobs(store, tmp_path, sample_settings, sample_kb)
    theirs = [*THEIR_GAP_QUESTIONS, *THEIR_BAD_QUESTIONS, THEIR_TOPIC_QUESTION]
    needles = (FORGET, store.pseudonym(FORGET), *theirs)
    (gap,) = query(store, "SELECT annotations FROM alerts WHERE alert = 'coverage_gap'")
    gap = json.loads(gap["annotations"])
    assert gap["by_user"][FORGET] == 2 and set(THEIR_GAP_QUESTIONS) <= set(gap["samples"])
    held = columns_holding(store, *needles)
    assert held >= {("answers", "user_id"), ("answers", "question"), ("votes", "user_id"), ("flags", "user_id"),
                    ("flags", "reason"), ("reply_retries", "text"), ("reply_retries", "blocks"), ("topics", "label"),
                    ("alerts", "summary"), ("alerts", "annotations"), ("alerts", "acked_by"),
                    ("alert_events", "detail"), ("review_queue", "reason"), ("review_queue", "details"),
                    ("silences", "created_by"), ("silences", "comment"), ("kill_switch", "changed_by"),
                    ("kill_switch", "reason"), ("quarantine", "changed_by"), ("quarantine", "reason"),
                    ("job_runs", "error")}, "the fixture must put the person in every column forget must reach"
    spike = query(store, "SELECT changed_by FROM quarantine WHERE changed_by = 'U0ADMIN'")
    assert spike, "the wrong-answer spike's page must be taken out through the real kill switch"

    dry = store.user_rows(FORGET)                    # `minerva forget --dry-run`: every column it will change
    copies = {"alerts.summary", "alerts.annotations", "review_queue.reason", "review_queue.details",
              "kill_switch.reason", "quarantine.reason", "alert_events.detail", "silences.comment", "job_runs.error",
              "quarantine.changed_by", "topics.label"}
    assert {k for k, n in dry.items() if n} >= copies
    counts = forget(store, FORGET)

    assert {t for t, n in counts.items() if n} >= {"answers", "votes", "flags", "alerts", "review_queue", "quarantine",
                                                   "kill_switch", "alert_events", "silences", "job_runs", "topics"}
    assert columns_holding(store, *needles) == set()
    assert set(store.user_rows(FORGET).values()) == {0}
    (after,) = query(store, "SELECT annotations, summary FROM alerts WHERE alert = 'coverage_gap'")
    gap_after = json.loads(after["annotations"])
    assert gap_after["by_user"][FORGOTTEN] == 2                        # the count stays, nobody is named
    assert sum(gap_after["by_user"].values()) == gap_after["users"] + 1 == 5
    assert gap_after["samples"].count(REMOVED) == 2 and len(gap_after["samples"]) == 5
    assert count(store, "SELECT COUNT(*) FROM reply_retries") == 0   # went with the answer
    assert killswitch.disabled_collections(store) == {"api"}           # actions stay
    assert set(forget(store, FORGET).values()) == {0}


def test_retention_scrubs_the_copies_of_what_it_removes(store, tmp_path, sample_settings, sample_kb) -> None:
    traffic_through_the_jobs(store, tmp_path, sample_settings, sample_kb, operator=False)
    askers = [FORGET, *ASKERS[:9]]
    questions = [r["question"] for r in query(store, "SELECT question FROM answers")]
    assert columns_holding(store, *questions) >= {("alerts", "summary"), ("alerts", "annotations"),
                                                  ("review_queue", "reason"), ("review_queue", "details")}

    counts = store.apply_retention(questions_days=1, user_ids_days=1, now=NOW + timedelta(days=2))

    assert counts["questions"] == len(questions) and counts["copies"] >= 4
    assert columns_holding(store, *questions) == set()
    assert {(t, c) for t, c, text in texts_held(store) if text in askers} == set()
    (gap,) = query(store, "SELECT annotations FROM alerts WHERE alert = 'coverage_gap'")
    by_user = json.loads(gap["annotations"])["by_user"]
    assert by_user[store.pseudonym(FORGET)] == 2 and sum(by_user.values()) == 5   # the same pseudonym as the rows
    assert set(store.apply_retention(questions_days=1, user_ids_days=1, now=NOW + timedelta(days=2)).values()) == {0}
    forget(store, FORGET)                            # the pseudonym is found in the copies too
    assert json.loads(query(store, "SELECT annotations FROM alerts WHERE alert = 'coverage_gap'")[0]["annotations"])[
        "by_user"][FORGOTTEN] == 2


def test_forget_and_retention_reach_the_expert_tables(store) -> None:
    """Issue 25's tables hold askers' ids and questions: forgetting the asker removes their escalation and the
    question a kept answer quoted; their votes on kept answers go; an expert's id reads FORGOTTEN; retention
    ages escalations like answers."""
    store.claim_expert_request(request_id="r1", question="how do I file my medical leave form", attempt="no idea",
                               asker=FORGET, channel="C1", thread_ts="1.0", whom="UEXPERT", doc_ids=[],
                               language="en", requested_at=NOW - timedelta(days=40))
    store.claim_expert_request(request_id="r2", question="someone else's question about parking", attempt="…",
                               asker="U002", channel="C1", thread_ts="2.0", whom="UEXPERT", doc_ids=[],
                               language="en", requested_at=NOW - timedelta(days=40))
    kept = store.record_expert_answer(request_id="r1", question="how do I file my medical leave form",
                                      answer="Send it to HR.", expert=FORGET, answered_at=NOW,
                                      expires_at=NOW + timedelta(days=180), doc_ids=[], page_wrong=False,
                                      language="en")
    store.record_expert_vote(kept, FORGET, "up", NOW)
    store.record_expert_vote(kept, "U003", "up", NOW)
    ask(store, 990, question="where do I send the leave paperwork", user=FORGET, days_ago=1)
    assert store.add_expert_answer_wording(kept, "where do I send the leave paperwork")
    assert store.add_expert_answer_wording(kept, "someone else's wording of it")
    assert not store.add_expert_answer_wording(kept, "someone else's  wording of it")  # the same, once

    found = store.user_rows(FORGET)
    assert (found["expert_requests.asker"], found["expert_answer_votes.user_id"], found["expert_answers.expert"]) == (
        1, 1, 1)
    counts = forget(store, FORGET)

    assert (counts["expert_requests"], counts["expert_answer_votes"], counts["expert_answers"]) == (1, 1, 1)
    assert store.expert_request("r1") is None and store.expert_request("r2") is not None
    row = store.expert_answer(kept)
    assert (row["question"], row["expert"], row["answer"]) == (REMOVED, FORGOTTEN, "Send it to HR.")
    assert row["also_asked"] == ["someone else's wording of it"]
    assert set(store.user_rows(FORGET).values()) == {0}

    changed = store.apply_retention(questions_days=30, user_ids_days=30, now=NOW)
    assert changed["expert_requests"] == 1
    aged = store.expert_request("r2")
    assert aged["question"] == REMOVED and aged["asker"].startswith("anon:")
