"""Digests and alerts in Slack, end to end: Block Kit within limits, posting into the fake Slack (channels,
overflow thread, 429 retry, not_in_channel, pacing, chart upload), the Ack / Silence buttons clicked through
real signed requests on a restarted app, the weekly report (``minerva report``) and App Home (the dashboard:
test_dashboard.py).
"""

from __future__ import annotations

import base64
import copy
import io
import json
import re
import time
from contextlib import AsyncExitStack
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import pytest
import structlog
from aiohttp.test_utils import TestServer
from click.testing import CliRunner

from bot.slack.alert_buttons import ALERT_UNKNOWN
from bot.slack.app import build_app, make_client
from bot.slack.blocks import BLOCK_LIMIT, SECTION_LIMIT
from bot.cli.main import cli
from bot.slack.digest_blocks import ALERT_ACK_ACTION, ALERT_SILENCE_ACTION, MESSAGE_CHAR_BUDGET, digest_messages
from bot.slack.digests import SlackNotifier
from bot.slack.server import EVENTS_PATH, SlackSecrets, create_app, create_web_app
from config.alerts import AlertsConfig, RoutingConfig, load_alerts_config
from feedback import FeedbackStore
from feedback import alerting as alert_store
from jobs import alerts
from jobs.alerts import evaluate, fingerprint
from jobs.digest import build_digest
from jobs.findings import Finding
from jobs.notify import notify_now, resend_undelivered, send_digest
from jobs.runner import JobEnv, JobRunner
from jobs.report import NO_DATA, build_report
from knowledge import KnowledgeBase
from tests.fakes.fixtures import signed_request_headers
from tests.fakes.slack_api import BOT_USER_ID

SECRET = "digest-test-secret"
NOW = datetime.now(timezone.utc).replace(microsecond=0)


@pytest.fixture
def config() -> AlertsConfig:
    cfg = load_alerts_config()
    cfg.routing = RoutingConfig(alert_channel="CALERTS", daily_digest_channel="CDAILY", weekly_digest_channel="CWEEKLY")
    cfg.digest.seconds_between_posts = 0.0
    return cfg


@pytest.fixture
def store(store_target, monkeypatch):
    """The store on SQLite, then on a real PostgreSQL server (`tests.postgres`); a job runner of the test
    finds the same database (``MINERVA_DATABASE_URL``)."""
    if not isinstance(store_target, Path):
        monkeypatch.setenv("MINERVA_DATABASE_URL", store_target)
    with FeedbackStore.open(store_target) as opened:
        yield opened


def notifications(store, *columns: str) -> list[dict]:
    """The alert_notifications log, oldest first, cut to ``columns``."""
    with store.snapshot() as conn:
        return [{c: n[c] for c in columns} for n in alert_store.notifications(conn)]


def notifier_for(fake, *, pace: float = 0.0) -> SlackNotifier:
    return SlackNotifier(make_client("xoxb-test", fake.url), seconds_between_posts=pace, top_items=3)


def bad_docs(count: int, summary: str = "low thumbs-up rate") -> list[Finding]:
    return [Finding("bad_document", "warning", {"doc_id": f"api:page-{i:02d}.md"}, 0.1 + i / 100, 0.3, 30 + i,
                    f"{summary} #{i}", link=f"https://wiki.example/api/page-{i:02d}.md") for i in range(count)]


def fire(store, config, source: str, findings: list[Finding], times: int = 2) -> None:
    for k in range(times):  # twice: rules with fire_after 2 (coverage_gap, drift*) fire too
        evaluate(store, config, source, findings, now=NOW - timedelta(minutes=10 - k))


def item_fingerprints(blocks: list[dict]) -> list[str]:
    return [e["value"] for b in blocks if b["type"] == "actions" for e in b["elements"] if e["action_id"] == ALERT_ACK_ACTION]


# --- Block Kit ------------------------------------------------------------------------------------------


def test_digest_blocks_stay_within_slack_limits_and_escape_document_text(store, config: AlertsConfig) -> None:
    hostile = "<!channel> ping & <@U123> " + "🇰🇷 한국어 日本語 👩‍👩‍👧 " * 80
    fire(store, config, "bad_documents", bad_docs(80, summary=hostile))
    digest = build_digest(store, config, kind="daily", now=NOW)
    messages = digest_messages(digest, top_items=10)
    everything = [messages.main, *messages.thread]
    assert messages.thread
    for message in everything:
        assert len(message.blocks) <= BLOCK_LIMIT
        raw = json.dumps(message.blocks, ensure_ascii=False)
        assert "<!channel>" not in raw and "<@U123>" not in raw and "&lt;!channel&gt;" in raw
        sections = [b["text"]["text"] for b in message.blocks if b["type"] == "section"]
        assert all(len(text) <= SECTION_LIMIT for text in sections)
        assert sum(len(text) for text in sections) <= MESSAGE_CHAR_BUDGET
        assert "\ufffd" not in raw
    shown = [fp for message in everything for fp in item_fingerprints(message.blocks)]
    assert sorted(shown) == sorted(n.alert.fingerprint for n in digest.notices) and len(shown) == 80


def test_an_empty_weekly_digest_says_where_the_warnings_firing_go(store, config: AlertsConfig) -> None:
    """A newcomer's weekly preview read "🟠 2 warning firing" over "Nothing firing on this route. ✅": the counts
    are every route's, and warnings go to the daily digest."""
    fire(store, config, "bad_documents", bad_docs(2))

    weekly = digest_messages(build_digest(store, config, kind="weekly", now=NOW)).main
    daily = digest_messages(build_digest(store, config, kind="daily", now=NOW)).main

    sections = " ".join(b["text"]["text"] for b in weekly.blocks if b["type"] == "section")
    assert "*2* warning" in sections and "Nothing firing" not in sections and "daily digest" in sections
    assert item_fingerprints(daily.blocks)


# --- posting --------------------------------------------------------------------------------------------


async def test_digest_lands_in_the_configured_channels_with_counts_and_overflow_in_a_thread(
        store, config: AlertsConfig, fake_slack) -> None:
    fire(store, config, "bad_documents", bad_docs(7))
    fire(store, config, "coverage", [Finding("coverage_gap", "warning", {"intent": "how-to", "topic": t}, 0.4, 0.2, 50,
                                             f"{t}: 40 % refused") for t in ("vpn", "expenses")])
    fire(store, config, "security", [Finding("permission_leak", "critical", {"doc_id": "plans:x.md"}, 1, 0, 1, "leak")])
    fire(store, config, "drift", [Finding("drift_intent", "info", {"dimension": "intent"}, 0.21, 0.1, 900, "intent shift")])
    notifier = notifier_for(fake_slack)

    daily = await send_digest(store, config, notifier, kind="daily", now=NOW)
    assert daily.ok and daily.channel == "CDAILY"
    main, reply = [c["body"] for c in fake_slack.calls_to("chat.postMessage")]
    assert main["channel"] == "CDAILY" and "thread_ts" not in main
    # the leak and the kill switch's announcement that it disabled the collection (issue 11)
    assert main["text"].endswith("2 critical, 9 warning, 1 info firing")
    assert main["blocks"][0]["type"] == "header"
    counts = main["blocks"][1]["text"]["text"]
    assert "*2* critical" in counts and "*9* warning" in counts and "*1* info" in counts
    titles = [b["text"]["text"] for b in main["blocks"] if b["type"] == "section" and "firing" in b["text"]["text"]]
    assert any("*bad_document* — 7 firing" in t for t in titles) and any("*coverage_gap* — 2 firing" in t for t in titles)
    assert len(item_fingerprints(main["blocks"])) == 5  # top 3 bad documents + 2 coverage gaps
    assert any("+4 more bad_document in the thread" in e["text"] for b in main["blocks"] if b["type"] == "context"
               for e in b["elements"])
    footer = main["blocks"][-1]["elements"][0]["text"]
    assert footer.startswith("Window: ") and "bad_document: threshold 0.3" in footer
    assert reply["channel"] == "CDAILY" and reply["thread_ts"] == daily.ts and len(item_fingerprints(reply["blocks"])) == 4
    notified = notifications(store, "route", "channel", "ts")
    assert len(notified) == 9 and {(n["route"], n["channel"], n["ts"]) for n in notified} == {("daily", "CDAILY", daily.ts)}

    chart = _tiny_png()
    weekly = await send_digest(store, config, notifier, kind="weekly", now=NOW, chart_png=chart)
    post = fake_slack.calls_to("chat.postMessage")[-1]["body"]
    assert weekly.ok and post["channel"] == "CWEEKLY" and item_fingerprints(post["blocks"]) == [
        fingerprint("drift_intent", {"dimension": "intent"})]
    (upload,) = fake_slack.calls_to("file_upload")
    assert upload["body"]["size"] == len(chart)
    (complete,) = fake_slack.calls_to("files.completeUploadExternal")
    assert complete["body"]["channel_id"] == "CWEEKLY" and complete["body"]["thread_ts"] == weekly.ts

    await notify_now(store, config, notifier, now=NOW)
    assert fake_slack.calls_to("chat.postMessage")[-1]["body"]["channel"] == "CALERTS"


async def test_a_429_on_the_digest_is_retried(store, config: AlertsConfig, fake_slack) -> None:
    fire(store, config, "bad_documents", bad_docs(1))
    fake_slack.fail_next("chat.postMessage", status=429, retry_after=0)
    delivery = await send_digest(store, config, notifier_for(fake_slack), kind="daily", now=NOW)
    assert delivery.ok
    assert len(fake_slack.calls_to("chat.postMessage")) == 2


async def test_not_in_channel_is_logged_and_alerted_never_raised(store, config: AlertsConfig, fake_slack) -> None:
    fire(store, config, "bad_documents", bad_docs(2))
    fake_slack.fail_next("chat.postMessage", error="not_in_channel")
    with structlog.testing.capture_logs() as logs:
        delivery = await send_digest(store, config, notifier_for(fake_slack), kind="daily", now=NOW)
    assert delivery.error == "not_in_channel"
    (entry,) = [e for e in logs if e["event"] == "slack.post_failed"]
    assert entry["log_level"] == "error" and entry["channel"] == "CDAILY" and "/invite" in entry["fix"]
    (failed,) = [s.alert for s in alerts.list_alerts(store, config, now=NOW) if s.alert.alert == "slack_delivery_failed"]
    assert failed.state == "firing" and failed.labels == {"channel": "CDAILY"} and "Invite the bot" in failed.summary
    assert {n.alert.last_notified_at for n in alerts.due_notices(store, config, route="daily", now=NOW)} == {None}
    assert failed.severity == "critical"  # posted to the alert channel, not in the failing digest
    # Once the bot is invited, the next digest goes out and the failure resolves.
    later = NOW + timedelta(minutes=1)
    assert (await send_digest(store, config, notifier_for(fake_slack), kind="daily", now=later)).ok
    assert alerts.get_alert(store, failed.fingerprint).state == "resolved"


def runner_for(store_path: Path, settings, config: AlertsConfig, fake) -> JobRunner:
    env = JobEnv(settings, store_path.parent, config, notifier=notifier_for(fake), clock=lambda: NOW)
    return JobRunner(env, signal_jobs={})


def notification_rows(store) -> list[dict]:
    return notifications(store, "fingerprint", "channel", "ts", "error")


async def test_four_429s_on_a_digest_reply_are_undelivered_alerted_and_resent_on_the_next_sweep(
        tmp_path: Path, store, config: AlertsConfig, sample_settings, fake_slack) -> None:
    fire(store, config, "bad_documents", bad_docs(5))  # 3 items in the main message, 2 in a thread reply
    fake_slack.fail_next("chat.postMessage", status=429, retry_after=0, times=4, when=lambda body: "thread_ts" in body)
    runner = runner_for(tmp_path / "minerva.sqlite", sample_settings, config, fake_slack)

    with structlog.testing.capture_logs() as logs:
        result = await runner.run("daily_digest")

    assert result.outcome == "failed" and result.error == "undelivered: CDAILY: ratelimited"
    assert [e["log_level"] for e in logs if e["event"] == "job.undelivered"] == ["error"]
    posts = [c["body"] for c in fake_slack.calls_to("chat.postMessage")]
    assert [p["channel"] for p in posts] == ["CDAILY"] + ["CDAILY"] * 4 + ["CALERTS"]  # the reply tried 4 times
    assert "slack_delivery_failed" in posts[-1]["text"] and "CDAILY" in json.dumps(posts[-1]["blocks"])
    rows = notification_rows(store)
    assert sum(r["error"] is None for r in rows if r["channel"] == "CDAILY") == 3
    undelivered = {r["fingerprint"] for r in rows if r["error"] == "ratelimited"}
    assert len(undelivered) == 2 and set(alerts.undelivered(store, route="daily")) == undelivered

    sweep = await runner.run("critical_notifications")  # five minutes later: the two items go out again

    assert sweep.outcome == "ok"
    resent = fake_slack.calls_to("chat.postMessage")[-1]["body"]
    assert resent["channel"] == "CDAILY" and "thread_ts" not in resent
    assert set(item_fingerprints(resent["blocks"])) == undelivered
    assert alerts.undelivered(store, route="daily") == []
    (failure,) = [s.alert for s in alerts.list_alerts(store, config, states=("firing", "resolved"), now=NOW)
                  if s.alert.alert == "slack_delivery_failed"]
    assert failure.state == "resolved"
    assert await runner.run("critical_notifications") and len(fake_slack.calls_to("chat.postMessage")) == 7


async def test_a_channel_that_keeps_refusing_posts_is_tried_again_with_a_growing_wait(
        store, config: AlertsConfig, fake_slack) -> None:
    fire(store, config, "bad_documents", bad_docs(2))
    fake_slack.fail_next("chat.postMessage", error="is_archived", times=100)
    notifier = notifier_for(fake_slack)
    posts = lambda: len(fake_slack.calls_to("chat.postMessage"))  # noqa: E731

    await send_digest(store, config, notifier, kind="daily", now=NOW)  # fails once: the next sweep tries again
    await resend_undelivered(store, config, notifier, now=NOW + timedelta(minutes=5))
    tried = posts()
    await resend_undelivered(store, config, notifier, now=NOW + timedelta(minutes=9))  # twice: waits 5 minutes

    assert tried == 2 and posts() == tried
    assert alerts.resend_wait(store, route="daily", now=NOW + timedelta(minutes=9)) == timedelta(minutes=1)
    await resend_undelivered(store, config, notifier, now=NOW + timedelta(minutes=10))
    assert posts() == tried + 1
    assert alerts.resend_wait(store, route="daily", now=NOW + timedelta(minutes=10)) == timedelta(minutes=10)


@pytest.mark.parametrize("error", ["token_revoked", "invalid_auth"])
async def test_a_dead_token_logs_one_critical_line_pauses_posting_and_adds_no_rows(
        tmp_path: Path, store, config: AlertsConfig, sample_settings, fake_slack, error: str) -> None:
    fire(store, config, "security", [Finding("permission_leak", "critical", {"doc_id": "plans:x.md"}, 1, 0, 1, "leak")])
    fire(store, config, "bad_documents", bad_docs(2))
    fake_slack.fail_next("chat.postMessage", error=error, times=100)
    runner = runner_for(tmp_path / "minerva.sqlite", sample_settings, config, fake_slack)

    with structlog.testing.capture_logs() as logs:
        first = await runner.run("critical_notifications")
        rows_after_first = len(notification_rows(store))
        later = [await runner.run(job) for job in ("critical_notifications", "daily_digest", "critical_notifications")]

    assert first.outcome == "failed" and first.error == f"undelivered: CALERTS: {error}"
    assert all(r.outcome == "failed" and error in r.error for r in later)
    (critical,) = [e for e in logs if e["log_level"] == "critical"]
    assert critical["event"] == "slack.access_revoked" and "reinstall the Slack app" in critical["fix"]
    assert "SLACK_BOT_TOKEN" in critical["fix"]
    assert len(fake_slack.calls_to("chat.postMessage")) == 1  # paused after the first refusal
    assert len(notification_rows(store)) == rows_after_first >= 1  # no row growth while paused


async def test_critical_alerts_due_together_page_once_and_posts_to_one_channel_are_paced(
        store, config: AlertsConfig, fake_slack) -> None:
    fire(store, config, "security", [Finding("permission_leak", "critical", {"doc_id": f"plans:{i}.md"}, 1, 0, 1, "leak")
                                     for i in range(20)])
    started = time.monotonic()
    deliveries = await notify_now(store, config, notifier_for(fake_slack, pace=0.3), now=NOW)
    elapsed = time.monotonic() - started
    posts = [c["body"] for c in fake_slack.calls_to("chat.postMessage")]
    assert len(posts) == 2 and all(p["channel"] == "CALERTS" and len(p["blocks"]) <= BLOCK_LIMIT for p in posts)
    # 3 blocks per alert, <= 50 per message; the 20 leaks and the kill switch's announcement
    assert posts[0]["text"] == "16 critical alerts: kill_switch_engaged, permission_leak"
    assert sum(len(d.fingerprints) for d in deliveries) == 21 and elapsed >= 0.3  # the second waited
    assert len({n["fingerprint"] for n in notifications(store, "fingerprint", "error") if n["error"] is None}) == 21
    assert await notify_now(store, config, notifier_for(fake_slack), now=NOW) == []


# --- buttons after a restart ----------------------------------------------------------------------------


class RunningApp:
    """The real app on a TestServer, its own store on the given file (a "process")."""

    def __init__(self, stack: AsyncExitStack, path: Path, settings, fake) -> None:
        self.stack, self.path, self.settings, self.fake = stack, path, settings, fake

    async def start(self) -> RunningApp:
        self.store = FeedbackStore.open(self.path)
        app = build_app(KnowledgeBase(self.settings, self.path.parent), self.store, self.settings,
                        client=make_client("xoxb-test", self.fake.url), signing_secret=SECRET)
        self.server = TestServer(create_web_app(app), host="127.0.0.1")
        await self.server.start_server()
        self.session = aiohttp.ClientSession()
        return self

    async def stop(self) -> None:
        await self.session.close()
        await self.server.close()
        self.store.close()

    async def click(self, action_id: str, value: str, message: dict, user: str = "U42") -> int:
        payload = {
            "type": "block_actions", "user": {"id": user, "username": "ops", "team_id": "T1"}, "api_app_id": "A1",
            "token": "legacy", "trigger_id": "1.2.3", "team": {"id": "T1", "domain": "minerva-test"},
            "container": {"type": "message", "message_ts": message["ts"], "channel_id": message["channel"], "is_ephemeral": False},
            "channel": {"id": message["channel"], "name": "ops"},
            "message": {"type": "message", "user": BOT_USER_ID, "ts": message["ts"], "text": message["text"],
                        "blocks": message["blocks"]},
            "response_url": self.fake.response_url("alert"),
            "actions": [{"type": "button", "action_id": action_id, "block_id": f"alert_{value}", "value": value,
                         "action_ts": str(time.time())}],
        }
        body = urlencode({"payload": json.dumps(payload)}).encode()
        async with self.session.post(self.server.make_url(EVENTS_PATH), data=body,
                                     headers=signed_request_headers(SECRET, body)) as response:
            return response.status


async def test_ack_and_silence_buttons_of_an_old_digest_work_after_a_restart(
        tmp_path: Path, config: AlertsConfig, sample_settings, fake_slack) -> None:
    path = tmp_path / "minerva.sqlite"
    async with AsyncExitStack() as stack:
        first = await RunningApp(stack, path, sample_settings, fake_slack).start()
        fire(first.store, config, "bad_documents", bad_docs(2))
        delivery = await send_digest(first.store, config, notifier_for(fake_slack), kind="daily", now=NOW)
        digest = {**fake_slack.calls_to("chat.postMessage")[0]["body"], "ts": delivery.ts}
        await first.stop()

        second = await RunningApp(stack, path, sample_settings, fake_slack).start()  # the restarted bot
        try:
            ack_fp, silence_fp = item_fingerprints(digest["blocks"])
            assert await second.click(ALERT_ACK_ACTION, ack_fp, digest) == 200
            (confirm,) = await fake_slack.wait_for("chat.postEphemeral")
            assert confirm["body"]["user"] == "U42" and confirm["body"]["channel"] == "CDAILY"
            assert confirm["body"]["text"].startswith("Acknowledged *bad_document*") and "<@U42>" in confirm["body"]["text"]
            assert await second.click(ALERT_SILENCE_ACTION, silence_fp, digest) == 200
            confirms = await fake_slack.wait_for("chat.postEphemeral", count=2)
            assert confirms[1]["body"]["text"].startswith(f"Silenced alert `{silence_fp}` for 24 h, until ")
            assert await second.click(ALERT_ACK_ACTION, "0123456789abcdef", digest) == 200
            confirms = await fake_slack.wait_for("chat.postEphemeral", count=3)
            assert confirms[2]["body"]["text"] == ALERT_UNKNOWN
            acked = alerts.get_alert(second.store, ack_fp)
            assert acked.acked_by == "U42"
            with second.store.snapshot() as conn:
                (silence,) = [{k: s[k] for k in ("fingerprint", "created_by", "expires_at")}
                              for s in alert_store.silences(conn)]
            assert (silence["fingerprint"], silence["created_by"]) == (silence_fp, "U42")
            # Neither is in the next digest.
            assert alerts.due_notices(second.store, config, route="daily", now=datetime.now(timezone.utc)) == []
        finally:
            await second.stop()


async def test_only_an_owner_or_an_admin_takes_a_page_out_of_search_from_its_alert(
        tmp_path: Path, config: AlertsConfig, sample_settings, fake_slack) -> None:
    """Issue 26: a bad-document alert proposes a quarantine; a stranger's click changes nothing, the page owner's
    takes it out (announced), and an admin (a member of the user group in slack.admins) puts it back."""
    import dataclasses

    from bot.slack.digest_blocks import ALERT_QUARANTINE_ACTION, ALERT_RELEASE_ACTION, alert_messages
    from jobs import killswitch

    page = "api:page-00.md"
    sources = [dataclasses.replace(s, owner="U0APIOWNER") if s.name == "api" else s for s in sample_settings.sources]
    settings = dataclasses.replace(sample_settings, sources=sources,
                                   slack=dataclasses.replace(sample_settings.slack, admins=["S0ADMINS"]))
    fake_slack.usergroups["S0ADMINS"] = ["U77"]
    path = tmp_path / "minerva.sqlite"
    async with AsyncExitStack() as stack:
        app = await RunningApp(stack, path, settings, fake_slack).start()
        try:
            fire(app.store, config, "bad_documents", bad_docs(1))
            delivery = await send_digest(app.store, config, notifier_for(fake_slack), kind="daily", now=NOW)
            digest = {**fake_slack.calls_to("chat.postMessage")[0]["body"], "ts": delivery.ts}
            (take,) = [e for b in digest["blocks"] if b["type"] == "actions" for e in b["elements"]
                       if e["action_id"] == ALERT_QUARANTINE_ACTION]

            assert await app.click(ALERT_QUARANTINE_ACTION, take["value"], digest, user="U42") == 200
            (refused,) = await fake_slack.wait_for("chat.postEphemeral")
            assert "Only the page's owner or an admin" in refused["body"]["text"]
            assert killswitch.quarantined_documents(app.store) == set()

            assert await app.click(ALERT_QUARANTINE_ACTION, take["value"], digest, user="U0APIOWNER") == 200
            confirms = await fake_slack.wait_for("chat.postEphemeral", count=2)
            assert confirms[1]["body"]["text"].startswith(f"Took `{page}` out of search")
            assert killswitch.quarantined_documents(app.store) == {page}
            (notice,) = [n for n in alerts.due_notices(app.store, config, route="now", now=datetime.now(timezone.utc))
                         if n.alert.alert == "kill_switch_engaged"]
            assert notice.alert.labels == {"doc_id": page} and notice.alert.annotations["by"] == "U0APIOWNER"
            (_, announcement), = alert_messages([notice])
            (back,) = [e for b in announcement.blocks if b["type"] == "actions" for e in b["elements"]
                       if e["action_id"] == ALERT_RELEASE_ACTION]

            message = {**digest, "blocks": announcement.blocks, "text": announcement.text}
            assert await app.click(ALERT_RELEASE_ACTION, back["value"], message, user="U77") == 200
            confirms = await fake_slack.wait_for("chat.postEphemeral", count=3)
            assert confirms[2]["body"]["text"] == f"Put `{page}` back in search."
            assert killswitch.quarantined_documents(app.store) == set()
        finally:
            await app.stop()


# --- report, dashboard, App Home ------------------------------------------------------------------------


def seed_answers(store, *, weeks: int = 3) -> None:
    """Answers over the last weeks: one page mostly 👎, another mostly 👍, some refusals."""
    k = 0
    for week in range(weeks):
        for i in range(12):
            k += 1
            doc = "api:rate-limits.md" if i % 2 else "plans:pro.md"
            refused = i % 6 == 0
            store.record_answer(
                answer_id=f"a{k}", question=f"question {k}", channel="C1", thread_ts=None, user_id="U1",
                retrieved=[{"chunk_id": f"{doc}#0", "doc_id": doc, "score": 0.7}], cited_doc_ids=[] if refused else [doc],
                refused=refused, top_score=0.2 if refused else 0.7, latency_ms=40.0,
                created_at=NOW - timedelta(days=7 * week + 1, minutes=i))
            if not refused:
                store.record_vote(f"a{k}", "U1", "down" if doc == "api:rate-limits.md" else "up")


def test_minerva_report_writes_one_html_page_with_chart_images(tmp_path: Path) -> None:
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as s:
        seed_answers(s)
    out = tmp_path / "out" / "report.html"
    out.parent.mkdir()
    # --no-signals: the panels come from the store alone (no embedding model to load for labelling questions);
    # the signal summaries' path is covered by test_report_uses_the_signal_summaries.
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "report", "--out", str(out), "--no-signals"],
                                catch_exceptions=False)
    assert result.exit_code == 0 and result.stdout.startswith(f"wrote {out} (2 chart(s): bad_documents, citation_health)")
    page = out.read_text()
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 2 and all(base64.b64decode(data).startswith(b"\x89PNG\r\n\x1a\n") for data in images)
    assert page.count(NO_DATA) >= 2  # coverage (no classification yet) and freshness (no index)
    assert "api:rate-limits.md" in page and "<script" not in page


def test_report_uses_the_signal_summaries(store, config: AlertsConfig) -> None:
    cells = [{"intent": i, "topic": t, "topic_id": k, "n": 20, "refusal_rate": r, "gaps": ["vpn"] if r > 0.3 else []}
             for k, (i, t, r) in enumerate([("how-to", "vpn", 0.4), ("lookup", "vpn", 0.1), ("how-to", "<script>", 0.0)])]
    gap = {"key": "vpn", "label": "vpn", "n": 8, "users": 4, "by_language": {"en": 8}, "samples": ["vpn down?"],
           "nearest": [], "action_text": "add a page"}
    summaries = {
        "coverage": {"cells": cells, "gaps": 1, "question_gaps": [gap]},
        "freshness": {"status": "ok", "timeline": [{"date": "2025-01-06", "stale": 2}, {"date": "2025-01-13", "stale": 3}]},
        "bad_docs": {"worst": [{"doc_id": "api:x.md", "title": "X <b>", "up": 1, "down": 9, "citations": 12}]},
        "drift": {"metrics": {"intent": {"status": "insufficient_data", "n_recent": 30, "n_baseline": 40}}},
    }
    made = build_report(store, config, now=NOW, summaries=summaries)
    assert made.main_chart == "coverage" and made.main_chart_png.startswith(b"\x89PNG")
    assert set(made.charts) == {"coverage", "stale_trend", "bad_documents"}
    assert "1 coverage gap(s), 1 cell(s) outlined in red" in made.html and "<script>" not in made.html and "X &lt;b&gt;" in made.html
    assert "insufficient_data" in made.html and "gaps: 1" in made.html  # drift figures, the status table


async def test_app_home_shows_key_figures_to_an_admin(tmp_path: Path, sample_settings, fake_slack,
                                                      config: AlertsConfig) -> None:
    settings = copy.deepcopy(sample_settings)
    settings.slack.admins = ["U9"]  # the week's figures are an admin's (issue 25 item 4)
    async with AsyncExitStack() as stack:
        running = await RunningApp(stack, tmp_path / "minerva.sqlite", settings, fake_slack).start()
        try:
            seed_answers(running.store, weeks=1)
            fire(running.store, config, "bad_documents", bad_docs(2))
            event = {"type": "app_home_opened", "user": "U9", "channel": "D1", "tab": "home", "event_ts": "1.0"}
            envelope = {"token": "t", "team_id": "T1", "api_app_id": "A1", "event": event, "type": "event_callback",
                        "event_id": "EvHOME1", "event_time": int(time.time())}
            body = json.dumps(envelope).encode()
            async with running.session.post(running.server.make_url(EVENTS_PATH), data=body,
                                            headers=signed_request_headers(SECRET, body)) as response:
                assert response.status == 200
            (call,) = await fake_slack.wait_for("views.publish")
            view = call["body"]["view"]
            view = json.loads(view) if isinstance(view, str) else view
            fields = [f["text"] for b in view["blocks"] if b["type"] == "section" for f in b.get("fields", [])]
            assert fields == ["*Questions*\n12", "*Answered*\n83% of 12", "*👍 / 👎*\n4 / 6", "*Refusals*\n2",
                              "*Open findings*\n0 critical · 2 warning · 0 info alerts · 0 review items"]
        finally:
            await running.stop()


def _tiny_png() -> bytes:
    from matplotlib.figure import Figure  # imported late: matplotlib takes ~0.5 s to import

    buffer = io.BytesIO()
    Figure(figsize=(1, 1), dpi=20).savefig(buffer, format="png")
    return buffer.getvalue()
