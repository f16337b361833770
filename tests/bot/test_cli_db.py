"""Choosing the feedback store's database (config ``database.url``, ``MINERVA_DATABASE_URL``) and ``minerva db``:
``status`` and ``migrate`` (a SQLite store copied into a real, empty PostgreSQL database, `tests.postgres`)."""

from __future__ import annotations

import pytest

from config import ConfigError, load_settings
from feedback.db import DATABASE_URL_ENV, database_target


@pytest.mark.parametrize("body, message", [
    ("database: {url: 'mysql://u:secret@h/db'}", "must be a postgresql://… or sqlite:///… URL, not a 'mysql' one"),
    ("database: {url: 'db.internal:5432'}", "database.url must be a URL"),
    ("database: {uri: 'postgresql://h/db'}", "unknown key 'database.uri'"),
])
def test_the_database_section_is_validated_without_echoing_a_password(tmp_path, body: str, message: str) -> None:
    path = tmp_path / "minerva.yaml"
    path.write_text(body + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as raised:
        load_settings(path)
    assert "secret" not in str(raised.value)


def test_the_environment_overrides_the_config_which_overrides_the_home_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "minerva.yaml"
    path.write_text("database: {url: 'postgresql://minerva@db.internal:5432/minerva'}\n", encoding="utf-8")
    configured = load_settings(path).database.url
    assert configured == "postgresql://minerva@db.internal:5432/minerva"
    assert load_settings().database.url == ""
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    assert database_target(tmp_path, "") == tmp_path / "minerva.sqlite"
    assert database_target(tmp_path, configured) == configured
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://other@db2/minerva")
    assert database_target(tmp_path, configured) == "postgresql://other@db2/minerva"


# --- minerva db migrate / status ------------------------------------------------------------------------------

import json  # noqa: E402
from datetime import datetime, timedelta, timezone  # noqa: E402

from click.testing import CliRunner  # noqa: E402

from feedback import FeedbackStore, schema  # noqa: E402
from feedback.copy import copied_tables  # noqa: E402

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=timezone.utc)


def at(minutes: float) -> str:
    return (NOW + timedelta(minutes=minutes)).isoformat(timespec="microseconds")


def fill(store: FeedbackStore) -> None:
    """A small store with a row in every table: through the store API where it has one, else through the schema."""
    for i in range(12):
        store.record_answer(answer_id=f"a{i}", question=f"question {i} — naïve ünïcode?", channel="C1",
                            thread_ts=f"{i}.0", user_id=f"U{i % 3}",
                            retrieved=[{"chunk_id": f"d{i}#0", "doc_id": f"hr:d{i}.md", "score": 0.5 + i / 100}],
                            cited_doc_ids=[f"hr:d{i}.md"] if i % 4 else [], refused=not i % 4, top_score=0.5 + i / 100,
                            latency_ms=10.5 * i, created_at=NOW + timedelta(minutes=i),
                            follow_up_of="a0" if i == 5 else None)
        store.record_vote(f"a{i}", "U9", "down" if i % 2 else "up", voted_at=NOW + timedelta(minutes=i))
    store.record_vote_reason("a1", "U9", "outdated", at=NOW)
    store.record_flag("a3", "U8", "wrong page", created_at=NOW)
    store.keep_undelivered_reply("a7", channel="C1", thread_ts="7.0", text="reply 7", blocks=[{"type": "divider"}],
                                 error="ratelimited", now=NOW)
    store.claim_event("Ev1")
    store.record_gap_scores("run1", [{"query": "leave days", "score": 0.7, "expected": 0.6, "top_doc_id": "hr:d1.md"}],
                            generation="g1", measured_at=NOW)
    store.pseudonym("U1")  # makes the salt in store_meta
    with store.transaction() as conn:
        conn.execute(schema.topics.insert(), [dict(topic_id=7, label="leave", model="m", centroid=b"\x00\x01\x02\x03",
                                                   n=2, created_at=at(0), updated_at=at(0))])
        conn.execute(schema.answer_labels.insert(), [dict(answer_id="a1", intent="policy", topic_id=7,
                                                          created_at=at(1), labelled_at=at(2))])
        conn.execute(schema.alerts.insert(), [dict(
            fingerprint="fp1", alert="bad_document", severity="warning", labels='{"doc_id": "hr:d1.md"}',
            source="bad_docs", state="firing", bad_streak=2, good_streak=0, value=0.25, threshold=0.5, n=8,
            summary="hr:d1.md is rated badly", link="", annotations="{}", first_seen_at=at(0),
            last_evaluated_at=at(1), notify_count=1)])
        for _ in range(3):
            conn.execute(schema.alert_events.insert(), [dict(fingerprint="fp1", at=at(1), kind="fired", detail="{}")])
        conn.execute(schema.alert_events.delete().where(schema.alert_events.c.event_id == 3))  # ids are not reused
        conn.execute(schema.alert_notifications.insert(), [dict(fingerprint="fp1", kind="fired", route="default",
                                                                channel="C2", ts="1.1", sent_at=at(1))])
        conn.execute(schema.silences.insert(), [dict(fingerprint="fp1", created_at=at(0), expires_at=at(60),
                                                     created_by="U1", comment="on it")])
        conn.execute(schema.job_runs.insert(), [dict(job="bad_docs", target="", trigger="cron", started_at=at(0),
                                                     ended_at=at(1), outcome="ok", findings=1, pid=42)])
        conn.execute(schema.kill_switch.insert(), [dict(collection="hr", disabled=1, reason="r", changed_by="U1",
                                                        changed_at=at(0))])
        conn.execute(schema.quarantine.insert(), [dict(doc_id="hr:d2.md", quarantined=1, reason="r",
                                                       changed_by="U1", changed_at=at(0))])
        conn.execute(schema.review_queue.insert(), [dict(
            problem="bad_document", subject="hr:d1.md", signal="bad_docs", action="rewrite", priority=1, weight=0.5,
            reason="rated badly", details='{"n": 8}', auto_deprecate=0, status="open", first_seen_at=at(0),
            last_seen_at=at(1))])
        conn.execute(schema.job_leases.insert(), [dict(job="bad_docs", slot=at(0), holder="h:1", taken_at=at(0),
                                                       expires_at=at(5))])
    store.claim_expert_request(request_id="a2", question="question 2", attempt="no idea", asker="U2", channel="C1",
                               thread_ts="2.0", whom="UEXPERT", doc_ids=["hr:d2.md"], language="en", requested_at=NOW)
    kept = store.record_expert_answer(request_id="a2", question="question 2", answer="ask HR", expert="UEXPERT",
                                      answered_at=NOW, expires_at=NOW + timedelta(days=180), doc_ids=["hr:d2.md"],
                                      page_wrong=False, language="en")
    store.record_expert_vote(kept, "U1", "up", NOW)
    store.claim_verification_ask("hr:d1.md", "UOWNER", due_at=NOW, now=NOW)


def dump(store: FeedbackStore) -> dict[str, list[dict]]:
    """Every row of every copied table, in primary-key order."""
    with store.snapshot() as conn:
        return {t.name: [dict(r) for r in conn.execute(t.select().order_by(*t.primary_key.columns)).mappings()]
                for t in copied_tables()}


@pytest.fixture
def sqlite_home(tmp_path):
    home = tmp_path / "home"
    with FeedbackStore.open(home / "minerva.sqlite") as store:
        fill(store)
    return home


def invoke(home, *args):
    from bot.cli.main import cli

    return CliRunner().invoke(cli, ["--home", str(home), "db", *args])


def test_migrate_copies_every_row_and_new_rows_get_fresh_ids(sqlite_home, postgres_url, monkeypatch) -> None:
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    result = invoke(sqlite_home, "migrate", "--to", postgres_url)
    assert result.exit_code == 0, result.output
    assert "copied " in result.output and "  answers" in result.output and "12" in result.output

    with FeedbackStore.open(sqlite_home / "minerva.sqlite") as old, FeedbackStore.open(postgres_url) as new:
        before, after = dump(old), dump(new)
        assert {name: len(rows) for name, rows in after.items()} == {name: len(rows) for name, rows in before.items()}
        assert all(before.values()), [name for name, rows in before.items() if not rows]
        assert after == before
        # through the store API
        for i in range(12):
            assert new.get_answer(f"a{i}") == old.get_answer(f"a{i}")
            assert new.votes_for(f"a{i}") == old.votes_for(f"a{i}")
        assert new.claim_event("Ev1") is False and new.claim_event("Ev2") is True
        assert new.pseudonym("U1") == old.pseudonym("U1")               # the salt came along
        assert new.user_rows("U1") == old.user_rows("U1")
        assert new.last_gap_scores() == old.last_gap_scores()
        # the sequences continue after the copied ids (3 was deleted before the copy: never reused)
        with new.transaction() as conn:
            event = conn.execute(schema.alert_events.insert().returning(schema.alert_events.c.event_id),
                                 [dict(fingerprint="fp1", at=at(9), kind="resolved", detail="{}")]).scalar_one()
            item = conn.execute(schema.review_queue.insert().returning(schema.review_queue.c.item_id), [dict(
                problem="gap", subject="x", signal="coverage", action="write", priority=2, weight=0.1, reason="r",
                details="{}", auto_deprecate=0, status="open", first_seen_at=at(0), last_seen_at=at(0))]).scalar_one()
            run = conn.execute(schema.job_runs.insert().returning(schema.job_runs.c.run_id), [dict(
                job="drift", target="", trigger="cron", started_at=at(2), outcome="running", pid=1)]).scalar_one()
        assert (event, item, run) == (4, 2, 2)
        new.record_vote("a0", "U1", "up")
        assert len(new.votes_for("a0")) == 2


def test_migrate_refuses_a_non_empty_target_unless_forced_and_prints_json(sqlite_home, postgres_url) -> None:
    assert invoke(sqlite_home, "migrate", "--to", postgres_url).exit_code == 0
    again = invoke(sqlite_home, "migrate", "--to", postgres_url)
    assert again.exit_code == 1 and "already holds feedback rows (" in again.output
    assert "answers: 12" in again.output
    assert "nothing was copied" in again.output
    with FeedbackStore.open(sqlite_home / "minerva.sqlite") as store:
        store.record_answer(answer_id="late", question="one more", channel=None, thread_ts=None, user_id=None,
                            retrieved=[], cited_doc_ids=[], refused=True, top_score=0.0, latency_ms=1.0)
    forced = invoke(sqlite_home, "migrate", "--to", postgres_url, "--force", "--json", "--batch-size", "5")
    assert forced.exit_code == 0, forced.output
    body = json.loads(forced.output)
    assert body["tables"]["answers"] == 13 and body["cleared"]["answers"] == 12
    assert body["sequences"]["alert_events.event_id"] == 4 and "topics.topic_id" not in body["sequences"]
    with FeedbackStore.open(postgres_url) as new:
        assert new.get_answer("late")["question"] == "one more"


def test_migrate_errors_exit_1_with_a_clear_message_and_no_password(sqlite_home, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    unreachable = "postgresql://minerva:s3cret-pw@127.0.0.1:1/minerva"
    result = invoke(sqlite_home, "migrate", "--to", unreachable)
    assert result.exit_code == 1 and "cannot open feedback database" in result.output
    assert "s3cret-pw" not in result.output and "***" in result.output
    result = invoke(sqlite_home, "migrate", "--to", "mysql://u:s3cret-pw@h/db")
    assert result.exit_code == 1 and "must be a postgresql://" in result.output and "s3cret-pw" not in result.output
    result = invoke(sqlite_home, "migrate", "--to", "postgresql://h/db", "--from", str(tmp_path / "missing.sqlite"))
    assert result.exit_code == 1 and "no SQLite store at" in result.output
    assert not (tmp_path / "missing.sqlite").exists()
    # the README's order: MINERVA_DATABASE_URL set first, then migrate without --from: the home's SQLite file is
    # the source (the error is about the unreachable target, not a missing source)
    monkeypatch.setenv(DATABASE_URL_ENV, unreachable)
    result = invoke(sqlite_home, "migrate", "--to", unreachable)
    assert result.exit_code == 1 and "cannot open feedback database" in result.output
    assert "no SQLite store" not in result.output and "s3cret-pw" not in result.output


def test_status_names_the_database_and_counts_rows_on_both_backends(sqlite_home, postgres_url, monkeypatch) -> None:
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    result = invoke(sqlite_home, "status")
    assert result.exit_code == 0, result.output
    assert "backend: sqlite" in result.output and str(sqlite_home / "minerva.sqlite") in result.output
    assert invoke(sqlite_home, "migrate", "--to", postgres_url).exit_code == 0
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    result = invoke(sqlite_home, "status", "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["backend"] == "postgresql" and body["tables"]["answers"] == 12 and body["tables"]["votes"] == 12
    assert body["schema_version"] == body["current_version"]
    password = __import__("sqlalchemy").make_url(postgres_url).password
    assert not password or password not in result.output
    monkeypatch.delenv(DATABASE_URL_ENV)
    empty = invoke(sqlite_home.parent / "nowhere", "status")
    assert empty.exit_code == 1 and "no feedback store at" in empty.output
    assert not (sqlite_home.parent / "nowhere" / "minerva.sqlite").exists()


def test_doctor_names_the_database_in_use_without_its_password(tmp_path, postgres_url, monkeypatch) -> None:
    import sqlalchemy as sa

    from bot.cli.doctor import FAIL, OK, run_checks

    def store_line():
        return {c.name: c for c in run_checks(load_settings(), tmp_path, slack=False)}["store"]

    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    shown = sa.make_url(postgres_url).render_as_string(hide_password=True)
    line = store_line()
    assert line.status == OK and line.detail.startswith(shown) and "empty" in line.detail
    FeedbackStore.open(postgres_url).close()
    line = store_line()
    assert line.status == OK and line.detail == f"{shown}: schema version {line.detail.split()[-2]} (current)"
    password = sa.make_url(postgres_url).password
    assert not password or password not in line.detail
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://minerva:s3cret-pw@127.0.0.1:1/minerva")
    line = store_line()
    assert line.status == FAIL and "s3cret-pw" not in line.detail + line.fix and "MINERVA_DATABASE_URL" in line.fix
    monkeypatch.delenv(DATABASE_URL_ENV)
    assert str(tmp_path / "minerva.sqlite") in store_line().detail


def test_any_command_on_an_unreachable_database_is_one_line_and_exit_1(sqlite_home) -> None:
    """Not a 150-line traceback: the error, the password hidden, and what to check."""
    import os
    import subprocess
    import sys

    env = {**os.environ, DATABASE_URL_ENV: "postgresql://minerva:s3cret-pw@127.0.0.1:1/minerva", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", "from bot.cli.main import main; main()", "--home", str(sqlite_home),
                           "jobs", "run", "bad_docs"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "s3cret-pw" not in done.stderr
    assert "cannot open feedback database postgresql://minerva:***@127.0.0.1:1/minerva" in done.stderr
    assert "→ check MINERVA_DATABASE_URL" in done.stderr
