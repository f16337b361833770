"""The alert layer on a real store, SQLite and PostgreSQL (`store_target`): fingerprints, hysteresis,
resolution, repeat interval, cooldown, silences, acknowledgement, inhibition, the kill switch, the config
loader and the CLI over them.

Slack posts go through the real `bot.slack.digests.SlackNotifier` into the fake Slack Web API server.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from bot.slack.app import make_client
from bot.cli.main import cli
from bot.slack.digests import SlackNotifier
from config import ConfigError, load_settings
from config.alerts import AlertsConfig, RoutingConfig, RuleConfig, alerts_config_for, load_alerts_config
from feedback import FeedbackStore, job_runs, switches
from feedback import alerting as alert_store
from feedback.migrations import MIGRATIONS
from jobs import alerts, killswitch
from jobs.alerts import UnknownAlert, due_notices, evaluate, fingerprint
from jobs.findings import Finding
from jobs.inhibition import reindex_running
from jobs.notify import notify_now
from jobs.silences import add_silence, remove_silences

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)
ALERT_CHANNEL = "CALERTS"


@pytest.fixture
def store(store_target):
    """The alert tables on SQLite and on a real PostgreSQL server."""
    with FeedbackStore.open(store_target) as opened:
        yield opened


@pytest.fixture
def config() -> AlertsConfig:
    cfg = load_alerts_config()
    cfg.routing = RoutingConfig(alert_channel=ALERT_CHANNEL, daily_digest_channel="CDAILY", weekly_digest_channel="CWEEKLY")
    cfg.digest.seconds_between_posts = 0.0
    return cfg


def leak(doc: str = "plans:secret.md") -> Finding:
    return Finding("permission_leak", "critical", {"doc_id": doc}, value=3, threshold=0, n=3,
                   summary="Restricted page cited in a public channel", link="https://wiki.example/secret")


def bad_doc(doc: str = "api:auth.md", value: float = 0.21) -> Finding:
    return Finding("bad_document", "warning", {"doc_id": doc}, value=value, threshold=0.3, n=40,
                   summary=f"{doc} has a low thumbs-up rate")


def state_of(store, finding: Finding) -> str:
    return alerts.get_alert(store, fingerprint(finding.alert, finding.labels)).state


# --- fingerprints and config ----------------------------------------------------------------------------


def test_fingerprint_is_name_plus_sorted_labels_as_text() -> None:
    a = fingerprint("bad_document", {"doc_id": "x", "collection": "api"})
    assert a == fingerprint("bad_document", {"collection": "api", "doc_id": "x"})
    assert a != fingerprint("bad_document", {"doc_id": "x"})
    assert a != fingerprint("stale_document", {"doc_id": "x", "collection": "api"})
    assert fingerprint("drift", {"n": 1}) == fingerprint("drift", {"n": "1"})
    assert len(a) == 16 and int(a, 16) >= 0


def test_config_rules_match_exact_names_then_patterns_then_defaults(config: AlertsConfig) -> None:
    assert config.rule("permission_leak").kill_switch and config.rule("permission_leak").severity == "critical"
    assert config.rule("stale_high_citation").muted_during_reindex  # "stale_*"
    assert config.rule("drift_intent").fire_after == 2  # "drift*"
    assert config.rule("something_new") == config.defaults
    assert config.rule("bad_document").repeat_interval_hours == 4.0  # Alertmanager's default
    assert config.schedule.entry("a_signal_without_entry").cron == "0 * * * *"


@pytest.mark.parametrize("text, message", [
    ("rules: {x: {fire_afterr: 2}}", "unknown key 'rules.x.fire_afterr'"),
    ("routing: {alert_chanel: C1}", "unknown key 'routing.alert_chanel'"),
    ("bogus: 1", "unknown key 'bogus'"),
    ("rules: {x: {severity: urgent}}", "severity must be one of"),
    ("schedule: {timezone: Mars/Olympus}", "unknown time zone"),
    ("schedule: {jobs: {coverage: {cron: '61 * * * *'}}}", "cron '61 * * * *'"),
    ("schedule: {jobs: {coverage: {cron: '0 * * * *', interval_minutes: 5}}}", "exactly one of cron or interval_minutes"),
    ("defaults: {fire_after: 0}", "must be >= 1"),
])
def test_config_rejects_unknown_keys_and_bad_values(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "alerts.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("*", r"\*").replace("(", r"\(")):
        load_alerts_config(path)


def test_rules_inherit_defaults_and_channels_fall_back_to_the_main_config(tmp_path: Path) -> None:
    (tmp_path / "minerva.yaml").write_text("slack: {alert_channel: CA, digest_channel: CD}\n")
    (tmp_path / "alerts.yaml").write_text("defaults: {resolve_after: 5}\nrules: {x: {fire_after: 3}}\n"
                                          "routing: {weekly_digest_channel: CW}\n")
    cfg = alerts_config_for(load_settings(tmp_path / "minerva.yaml"))
    assert (cfg.rule("x").fire_after, cfg.rule("x").resolve_after) == (3, 5)
    assert (cfg.routing.alert_channel, cfg.routing.daily_digest_channel, cfg.routing.weekly_digest_channel) == ("CA", "CD", "CW")


def test_migration_creates_the_alerting_tables(store) -> None:
    tables = set(sa.inspect(store.engine).get_table_names())
    assert {"alerts", "alert_events", "alert_notifications", "silences", "job_runs", "kill_switch", "quarantine"} <= tables
    assert "_create_alerting_tables" in [m.__name__ for m in MIGRATIONS]


# --- state machine --------------------------------------------------------------------------------------


def test_hysteresis_fires_only_after_n_bad_evaluations_in_a_row(store, config: AlertsConfig) -> None:
    config.rules["bad_document"] = dataclasses.replace(config.rule("bad_document"), fire_after=3)
    f = bad_doc()
    evaluate(store, config, "bad_documents", [f], now=T0)
    evaluate(store, config, "bad_documents", [f], now=T0 + timedelta(hours=1))
    assert state_of(store, f) == "pending"
    evaluate(store, config, "bad_documents", [], now=T0 + timedelta(hours=2))  # a good run breaks the streak
    assert state_of(store, f) == "resolved"
    for hour in (3, 4):
        evaluate(store, config, "bad_documents", [f], now=T0 + timedelta(hours=hour))
    assert state_of(store, f) == "pending"
    result = evaluate(store, config, "bad_documents", [f], now=T0 + timedelta(hours=5))
    assert state_of(store, f) == "firing"
    assert result.entered("firing") == [fingerprint(f.alert, f.labels)]
    assert alerts.get_alert(store, fingerprint(f.alert, f.labels)).started_at == T0 + timedelta(hours=5)


def test_resolution_needs_m_good_evaluations_and_a_pending_alert_resolves_quietly(store, config: AlertsConfig) -> None:
    f = bad_doc()
    evaluate(store, config, "bad_documents", [f], now=T0)
    assert state_of(store, f) == "firing"
    evaluate(store, config, "bad_documents", [], now=T0 + timedelta(hours=1))
    assert state_of(store, f) == "firing"  # resolve_after = 2
    evaluate(store, config, "bad_documents", [f], now=T0 + timedelta(hours=2))  # bad again: good streak reset
    evaluate(store, config, "bad_documents", [], now=T0 + timedelta(hours=3))
    assert state_of(store, f) == "firing"
    result = evaluate(store, config, "bad_documents", [], now=T0 + timedelta(hours=4))
    alert = alerts.get_alert(store, fingerprint(f.alert, f.labels))
    assert (alert.state, alert.resolved_at) == ("resolved", T0 + timedelta(hours=4))
    assert [t.after for t in result.transitions] == ["resolved"]
    # Another job's run never resolves this job's alerts.
    g = bad_doc("api:other.md")
    evaluate(store, config, "bad_documents", [g], now=T0 + timedelta(hours=5))
    evaluate(store, config, "freshness", [], now=T0 + timedelta(hours=6))
    evaluate(store, config, "freshness", [], now=T0 + timedelta(hours=7))
    assert state_of(store, g) == "firing"


async def test_same_alert_twice_posts_one_message_and_one_reminder_after_the_repeat_interval(
        store, config: AlertsConfig, fake_slack) -> None:
    notifier = SlackNotifier(make_client("xoxb-test", fake_slack.url), seconds_between_posts=0)
    for minutes in (0, 30):
        evaluate(store, config, "security", [leak()], now=T0 + timedelta(minutes=minutes))
        await notify_now(store, config, notifier, now=T0 + timedelta(minutes=minutes))
    posts = fake_slack.calls_to("chat.postMessage")
    assert len(posts) == 1 and posts[0]["body"]["channel"] == ALERT_CHANNEL
    # one page for both: the leak and the announcement of the collection it disabled, with the way back
    assert "2 critical alerts: kill_switch_engaged, permission_leak" in posts[0]["body"]["text"]
    assert "minerva killswitch enable plans" in json.dumps(posts[0]["body"]["blocks"])

    later = T0 + timedelta(hours=4, minutes=1)
    evaluate(store, config, "security", [leak()], now=later)
    await notify_now(store, config, notifier, now=later)
    await notify_now(store, config, notifier, now=later + timedelta(minutes=5))
    posts = fake_slack.calls_to("chat.postMessage")
    assert len(posts) == 2 and posts[1]["body"]["text"].startswith("Still firing: permission_leak")
    with store.snapshot() as conn:
        sent = [{k: n[k] for k in ("kind", "route", "channel", "error")} for n in alert_store.notifications(conn)]
    assert sent == [{"kind": "firing", "route": "now", "channel": ALERT_CHANNEL, "error": None}] * 2 + [
                    {"kind": "reminder", "route": "now", "channel": ALERT_CHANNEL, "error": None}]  # leak + announcement


def _due(store, config, **kwargs):
    """`due_notices` without the kill switch's announcements (a leak also announces the collection it disabled)."""
    return [n for n in due_notices(store, config, **kwargs) if n.alert.alert != "kill_switch_engaged"]


def _listed(store, config, **kwargs):
    """`alerts.list_alerts` without the kill switch's announcements."""
    return [a for a in alerts.list_alerts(store, config, **kwargs) if a.alert.alert != "kill_switch_engaged"]


def test_a_silence_suppresses_notifications_until_it_expires(store, config: AlertsConfig) -> None:
    evaluate(store, config, "security", [leak()], now=T0)
    fp = fingerprint("permission_leak", {"doc_id": "plans:secret.md"})
    made = add_silence(store, fp[:6], hours=24, by="U1", now=T0)
    assert made.fingerprint == fp and made.expires_at == T0 + timedelta(hours=24)
    assert _due(store, config, route="now", now=T0 + timedelta(hours=5)) == []
    (status,) = _listed(store, config, now=T0 + timedelta(hours=5))
    assert status.silenced_until == T0 + timedelta(hours=24)
    (notice,) = _due(store, config, route="now", now=T0 + timedelta(hours=24, seconds=1))
    assert notice.kind == "firing"
    # Silencing again and then unsilencing ends it at once.
    add_silence(store, fp, hours=48, by="cli", now=T0 + timedelta(hours=25))
    assert _due(store, config, route="now", now=T0 + timedelta(hours=26)) == []
    assert remove_silences(store, fp, by="cli", now=T0 + timedelta(hours=26)) == 1
    assert len(_due(store, config, route="now", now=T0 + timedelta(hours=26, seconds=1))) == 1
    with pytest.raises(UnknownAlert):
        add_silence(store, "deadbeef", hours=1, by="cli", now=T0)
    with pytest.raises(ValueError):
        add_silence(store, fp, hours=0, by="cli", now=T0)


def test_cooldown_holds_back_a_flapping_alert_and_ack_stops_reminders(store, config: AlertsConfig) -> None:
    evaluate(store, config, "security", [leak()], now=T0)
    (notice,) = _due(store, config, route="now", now=T0)
    alerts.record_delivery(store, [notice], channel=ALERT_CHANNEL, ts="1.1", now=T0)
    for minutes in (5, 10):  # resolves (resolve_after = 2) ...
        evaluate(store, config, "security", [], now=T0 + timedelta(minutes=minutes))
    evaluate(store, config, "security", [leak()], now=T0 + timedelta(minutes=15))  # ... and fires again
    assert _due(store, config, route="now", now=T0 + timedelta(minutes=15)) == []  # cooldown 30 min
    (again,) = _due(store, config, route="now", now=T0 + timedelta(minutes=31))
    assert again.kind == "firing"

    acked = alerts.acknowledge(store, notice.alert.fingerprint, by="U7", now=T0 + timedelta(minutes=32))
    assert acked.acked_by == "U7"
    assert _due(store, config, route="now", now=T0 + timedelta(hours=9)) == []
    # A new episode clears the acknowledgement.
    for minutes in (40, 45):
        evaluate(store, config, "security", [], now=T0 + timedelta(minutes=minutes))
    evaluate(store, config, "security", [leak()], now=T0 + timedelta(hours=2))
    assert alerts.get_alert(store, notice.alert.fingerprint).acked_at is None
    assert len(_due(store, config, route="now", now=T0 + timedelta(hours=2))) == 1


def test_escalation_to_critical_notifies_at_once(store, config: AlertsConfig) -> None:
    warn = Finding("job_failed", "warning", {"job": "coverage"}, 1, 3, 1, "Job coverage failed")
    evaluate(store, config, "job:coverage", [warn], now=T0)
    assert due_notices(store, config, route="now", now=T0) == []
    (digest_notice,) = due_notices(store, config, route="daily", now=T0)
    alerts.record_delivery(store, [digest_notice], channel="CDAILY", ts="1.2", now=T0)
    evaluate(store, config, "job:coverage", [dataclasses.replace(warn, severity="critical")], now=T0 + timedelta(minutes=1))
    (notice,) = due_notices(store, config, route="now", now=T0 + timedelta(minutes=1))
    assert notice.kind == "escalated"


def test_a_running_reindex_mutes_freshness_alerts_of_its_collection_only(store, config: AlertsConfig) -> None:
    stale = [Finding("stale_document", "critical", {"doc_id": f"{c}:old.md"}, 200, 90, 1, "stale") for c in ("api", "plans")]
    evaluate(store, config, "freshness", stale, now=T0)
    clock = lambda: T0  # noqa: E731
    with reindex_running(store, "api", now=clock):
        due = _due(store, config, route="now", now=T0)
        assert [n.alert.collection for n in due] == ["plans"]
        # A leak in the same collection is not a freshness alert: never muted.
        evaluate(store, config, "security", [leak("api:secret.md")], now=T0)
        assert {n.alert.alert for n in _due(store, config, route="now", now=T0)} == {"stale_document", "permission_leak"}
        # A mark older than reindex_mark_max_hours counts as a crashed re-index.
        assert "api" in {n.alert.collection for n in _due(store, config, route="now", now=T0 + timedelta(hours=7))
                         if n.alert.alert == "stale_document"}
    assert len(_due(store, config, route="now", now=T0)) == 3
    with store.snapshot() as conn:
        (run,) = job_runs.recent_runs(conn)
    assert (run["job"], run["target"], run["trigger"], run["outcome"]) == ("reindex", "api", "mark", "ok")
    assert run["started_at"] == run["ended_at"] == T0


def test_a_critical_kill_switch_alert_disables_its_collection_until_enabled_by_hand(store, config: AlertsConfig) -> None:
    result = evaluate(store, config, "security", [leak()], now=T0)
    assert result.disabled_collections == ["plans"]
    assert killswitch.disabled_collections(store) == {"plans"}
    # Still firing: no second change; a manual enable sticks while the episode goes on.
    assert evaluate(store, config, "security", [leak()], now=T0 + timedelta(hours=1)).disabled_collections == []
    assert killswitch.enable(store, "plans", reason="fixed the ACL", changed_by="cli", now=T0 + timedelta(hours=2))
    evaluate(store, config, "security", [leak()], now=T0 + timedelta(hours=3))
    assert killswitch.disabled_collections(store) == set()
    # A warning, or a rule without kill_switch, never disables anything.
    evaluate(store, config, "bad_documents", [bad_doc()], now=T0)
    assert killswitch.disabled_collections(store) == set()
    with store.snapshot() as conn:
        log = [(c["collection"], c["disabled"], c["changed_by"], c["fingerprint"] is not None)
               for c in switches.collection_changes(conn)]
    assert log == [("plans", True, "alert", True), ("plans", False, "cli", False)]


# --- CLI ------------------------------------------------------------------------------------------------


def invoke(home: Path, *args: str):
    return CliRunner().invoke(cli, ["--home", str(home), *args], catch_exceptions=False)


def test_cli_lists_silences_and_unsilences_alerts(tmp_path: Path, config: AlertsConfig) -> None:
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as s:
        evaluate(s, config, "bad_documents", [bad_doc()], now=datetime.now(timezone.utc))
    fp = fingerprint("bad_document", {"doc_id": "api:auth.md"})
    listed = invoke(tmp_path, "alerts", "--json")
    assert listed.exit_code == 0
    row = json.loads(listed.stdout.splitlines()[0])
    assert (row["fingerprint"], row["state"], row["severity"], row["note"]) == (fp, "firing", "warning", "")

    result = invoke(tmp_path, "silence", fp[:8], "--hours", "24")
    assert result.exit_code == 0 and result.stdout.startswith(f"silenced {fp} until ")
    assert "silenced until" in invoke(tmp_path, "alerts").stdout
    assert invoke(tmp_path, "unsilence", fp).stdout == "ended 1 silence(s)\n"
    missing = invoke(tmp_path, "silence", "abcdef12")
    assert missing.exit_code == 1 and "no alert with fingerprint 'abcdef12'" in missing.output


def test_cli_kill_switch_disable_enable_round_trip(tmp_path: Path) -> None:
    assert invoke(tmp_path, "killswitch", "list").stdout == "No collection has been disabled and no document quarantined.\n"
    assert invoke(tmp_path, "killswitch", "disable", "api", "--reason", "leak").stdout == (
        "api: disabled (out of search); put it back with `minerva killswitch enable api`\n")
    assert invoke(tmp_path, "killswitch", "disable", "api").stdout == "api was already disabled\n"
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as s:
        assert killswitch.disabled_collections(s) == {"api"}
    assert "api  DISABLED" in invoke(tmp_path, "killswitch", "list").stdout
    assert invoke(tmp_path, "killswitch", "enable", "api").stdout == "api: enabled (back in search)\n"
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as s:
        assert killswitch.disabled_collections(s) == set()
    unknown = invoke(tmp_path, "killswitch", "disable", "nope")
    assert unknown.exit_code == 1 and "no source named 'nope'" in unknown.output


def test_rule_config_validates_in_code_too() -> None:
    with pytest.raises(ConfigError):
        RuleConfig(resolve_after=0)
