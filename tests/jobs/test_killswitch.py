"""The kill switch at a team's volume (issue 11 item 3, issue 26): reports propose a quarantine, a person takes pages
out; collections are disabled only by an owner (CLI) or a signal users cannot cause; every change is announced."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from config.alerts import load_alerts_config
from feedback import FeedbackStore
from jobs import alerts, killswitch
from jobs.alerts import due_notices, evaluate, fingerprint
from jobs.signals import bad_docs
from knowledge import KnowledgeBase
from tests.jobs.monitoring_helpers import add_answer, by_alert, ctx, store  # noqa: F401

DISK, COPY = "runbooks:disk-full.md", "runbooks:incident-response.md"


def test_five_reports_on_one_correct_answer_take_nothing_out_of_search_until_a_person_does(ctx) -> None:  # noqa: F811
    """Issue 26: five reports from a few users quarantined two correct pages. Now the spike alerts, files a review
    item per page and proposes the quarantine with a button; a person's decision takes the pages out."""
    from bot.slack.digest_blocks import ALERT_QUARANTINE_ACTION, alert_messages
    from jobs.page_actions import QUARANTINE, page_action, take_out
    from jobs.review import items as review_items

    config = load_alerts_config()
    now = datetime.now(timezone.utc)
    for day in range(3, 30, 3):  # the handbook answers well the rest of the month
        add_answer(ctx.store, question="disk full?", cited=(DISK,), votes=("up",), created_at=now - timedelta(days=day))
    answer = add_answer(ctx.store, question="node disk is at 96%, what do I do first?", cited=(DISK, COPY), flags=5,
                        created_at=now - timedelta(hours=3))

    findings = bad_docs.run(ctx)
    (spike,) = by_alert(findings, "wrong_answer_spike")
    assert spike.annotations["answer_ids"] == [answer]
    result = evaluate(ctx.store, config, "bad_docs", findings, now=now)

    assert result.disabled_collections == [] and killswitch.disabled_collections(ctx.store) == set()
    assert result.quarantined_documents == [] and killswitch.quarantined_documents(ctx.store) == set()
    items = {i["subject"]: i for i in review_items(ctx.store) if i["problem"] == "wrong_answer_spike"}
    assert set(items) == {DISK, COPY} and {i["action"] for i in items.values()} == {"check_reports"}
    (notice,) = [n for n in due_notices(ctx.store, config, route="now", now=now) if n.alert.alert == "wrong_answer_spike"]
    assert page_action(notice.alert.alert, notice.alert.labels, notice.alert.annotations) == (QUARANTINE, (DISK, COPY))
    (_, message), = alert_messages([notice])
    buttons = [e for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    (take,) = [b for b in buttons if b["action_id"] == ALERT_QUARANTINE_ACTION]
    assert take["value"] == notice.alert.fingerprint and "confirm" in take

    # a person decides: the pages leave search, each announced with the command that puts it back
    assert take_out(ctx.store, config, [DISK, COPY], by="U0OWNER", reason="checked: wrong", now=now) == [DISK, COPY]
    assert killswitch.quarantined_documents(ctx.store) == {DISK, COPY}
    announced = {n.alert.labels.get("doc_id"): n.alert for n in due_notices(ctx.store, config, route="now", now=now)
                 if n.alert.alert == "kill_switch_engaged"}
    assert set(announced) == {DISK, COPY}
    assert f"`minerva killswitch release {DISK}`" in announced[DISK].summary
    assert take_out(ctx.store, config, [DISK], by="U0OWNER", reason="again", now=now) == []  # once
    # the same spike still firing an hour later quarantines nothing by itself
    assert evaluate(ctx.store, config, "bad_docs", findings, now=now + timedelta(hours=1)).quarantined_documents == []


@pytest.fixture
def any_store(store_target):
    """A store on SQLite, then on PostgreSQL (the signal-driven tests above read SQLite through `ctx`)."""
    with FeedbackStore.open(store_target) as opened:
        yield opened


def test_a_signal_users_cannot_cause_may_disable_a_collection_with_an_announcement(any_store) -> None:
    store = any_store
    config = load_alerts_config()
    now = datetime.now(timezone.utc)
    leak = alerts.Finding("permission_leak", "critical", {"doc_id": "plans:secret.md"}, value=1, threshold=0, n=1,
                          summary="Restricted page cited in a public channel")
    result = evaluate(store, config, "security", [leak], now=now)
    assert result.disabled_collections == ["plans"] and result.quarantined_documents == []
    (notice,) = [n for n in due_notices(store, config, route="now", now=now) if n.alert.alert == "kill_switch_engaged"]
    assert "collection plans" in notice.alert.summary and "`minerva killswitch enable plans`" in notice.alert.summary


def test_manual_quarantine_and_release_change_the_state_once(any_store) -> None:
    store, now = any_store, datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)
    assert killswitch.quarantined_documents(store) == set() and killswitch.list_quarantine(store) == []
    assert killswitch.quarantine(store, DISK, reason="wrong threshold", changed_by="U1", now=now)
    assert not killswitch.quarantine(store, DISK, reason="again", changed_by="U2", now=now + timedelta(minutes=1))
    assert killswitch.quarantined_documents(store) == {DISK}
    (state,) = killswitch.list_quarantine(store)
    assert (state.doc_id, state.quarantined, state.reason, state.changed_by, state.changed_at) == (
        DISK, True, "wrong threshold", "U1", now)
    assert killswitch.release(store, DISK, reason="fixed", changed_by="cli", now=now + timedelta(hours=1))
    assert not killswitch.release(store, DISK, reason="fixed", changed_by="cli", now=now + timedelta(hours=2))
    assert killswitch.quarantined_documents(store) == set()
    assert [s.quarantined for s in killswitch.list_quarantine(store)] == [False]
    with pytest.raises(ValueError):
        killswitch.quarantine(store, "no-collection", reason="x", changed_by="cli", now=now)
    assert killswitch.disable(store, "api", reason="leak", changed_by="cli", now=now)
    assert not killswitch.disable(store, "api", reason="leak", changed_by="cli", now=now)
    assert killswitch.disable(store, "plans", reason="leak", changed_by="cli", now=now)
    assert [(s.collection, s.disabled) for s in killswitch.list_states(store)] == [("api", True), ("plans", True)]


def test_quarantined_documents_are_left_out_of_search(sample_settings, sample_home, embedder) -> None:
    quarantined = {DISK}
    kb = KnowledgeBase(sample_settings, sample_home, embedder=embedder, quarantined_documents=lambda: set(quarantined))
    for mode in ("hybrid", "dense", "bm25"):
        hits = kb.search(["node disk is full, what do I do?"], top_k=20, mode=mode)[0]
        assert hits and DISK not in {p.doc_id for p in hits}, mode
    assert DISK not in {c.doc_id for c in kb.ask("node disk is at 96%, what do I do first?").citations}
    quarantined.clear()  # released: back at once, no re-index
    assert DISK in {p.doc_id for p in kb.search(["node disk is full, what do I do?"], top_k=5)[0]}


def invoke(home: Path, *args: str):
    return CliRunner().invoke(cli, ["--home", str(home), *args], catch_exceptions=False)


def test_cli_quarantine_and_release_are_announced_and_resolved(tmp_path: Path) -> None:
    out = invoke(tmp_path, "killswitch", "quarantine", DISK, "--reason", "quotes a wrong threshold")
    assert out.stdout == f"{DISK}: quarantined (out of search)\n"
    fp = fingerprint("kill_switch_engaged", {"doc_id": DISK})
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as s:
        assert killswitch.quarantined_documents(s) == {DISK}
        alert = alerts.get_alert(s, fp)
        assert alert.state == "firing" and alert.severity == "critical"
        assert "quotes a wrong threshold" in alert.summary and f"minerva killswitch release {DISK}" in alert.summary
    assert f"{DISK}  QUARANTINED" in invoke(tmp_path, "killswitch", "list").stdout
    assert invoke(tmp_path, "killswitch", "release", DISK).stdout == f"{DISK}: released (back in search)\n"
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as s:
        assert killswitch.quarantined_documents(s) == set()
        assert alerts.get_alert(s, fp).state == "resolved"
    assert invoke(tmp_path, "killswitch", "quarantine", "no-collection").exit_code == 1
