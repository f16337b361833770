"""The scheduler and the job runner: one scheduler per home, explicit defaults, every run recorded, a failing
job raising job_failed (critical after 3 failures, posted at once) while the other jobs keep running, and
``minerva jobs list|run``. Real APScheduler on the test's event loop, real SQLite, the fake Slack.
"""

from __future__ import annotations

import asyncio
import socket
import time
import zoneinfo
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import aiohttp
import pytest
import structlog
from click.testing import CliRunner

from bot.slack.app import make_client
from bot.cli.main import cli
from bot.slack.digests import SlackNotifier
from bot.slack.server import SlackSecrets, create_app, run
from config.alerts import AlertsConfig, RoutingConfig, ScheduleEntry, load_alerts_config
from feedback import FeedbackStore, alerting, job_runs
from jobs import alerts, runs
from jobs.findings import Finding, JobContext
from jobs.runner import BUILTIN_JOBS, JobEnv, JobRunner, UnknownJob
from jobs.scheduler import MinervaScheduler
from knowledge import KnowledgeBase

ALERT_CHANNEL = "CALERTS"


@pytest.fixture
def config() -> AlertsConfig:
    cfg = load_alerts_config()
    cfg.routing = RoutingConfig(alert_channel=ALERT_CHANNEL, daily_digest_channel="CDAILY", weekly_digest_channel="CWEEKLY")
    cfg.digest.seconds_between_posts = 0.0
    cfg.schedule.timezone = "Europe/Berlin"
    return cfg


def broken(ctx: JobContext) -> list[Finding]:
    raise RuntimeError("the drift statistics exploded")


def healthy(ctx: JobContext) -> list[Finding]:
    assert ctx.store.db.execute("SELECT count(*) FROM answers").fetchone() == (0,)  # its own open store
    return [Finding("coverage_gap", "warning", {"intent": "how-to", "topic": "vpn"}, 0.5, 0.2, 30, "many refusals")]


def every(seconds: float) -> ScheduleEntry:
    return ScheduleEntry(interval_minutes=seconds / 60)


def alert_rows(home: Path) -> list[dict]:
    """Every alert row of the home's store (`feedback.alerting`: labels decoded, times as datetimes)."""
    with FeedbackStore.open(home / "minerva.sqlite") as store, store.snapshot() as conn:
        return alerting.alerts_in_states(conn, ("pending", "firing", "resolved"))


def run_rows(home: Path) -> list[dict]:
    """Every job run of the home's store, oldest first (`feedback.job_runs`)."""
    with FeedbackStore.open(home / "minerva.sqlite") as store, store.snapshot() as conn:
        return job_runs.recent_runs(conn, limit=100_000)[::-1]


async def wait_until(condition, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def test_a_failing_job_raises_job_failed_and_the_scheduler_keeps_running_the_others(
        tmp_path: Path, config: AlertsConfig, sample_settings, fake_slack) -> None:
    for name in ("broken", "healthy"):
        config.schedule.jobs[name] = every(0.3)
    for name in BUILTIN_JOBS:
        config.schedule.jobs[name] = ScheduleEntry(cron="0 0 1 1 *")  # not during the test
    notifier = SlackNotifier(make_client("xoxb-test", fake_slack.url), seconds_between_posts=0)
    runner = JobRunner(JobEnv(sample_settings, tmp_path, config, notifier=notifier), {"broken": broken, "healthy": healthy})
    scheduler = MinervaScheduler(runner, config, tmp_path)
    assert scheduler.start()
    try:
        def counts() -> dict[str, int]:
            return dict(Counter(f"{r['job']}:{r['outcome']}" for r in run_rows(tmp_path)))

        await wait_until(lambda: counts().get("broken:failed", 0) >= 3 and counts().get("healthy:ok", 0) >= 3)
        await fake_slack.wait_for("chat.postMessage")
    finally:
        scheduler.shutdown()
    (failed,) = [a for a in alert_rows(tmp_path) if a["alert"] == "job_failed"]
    assert failed["state"] == "firing" and failed["severity"] == "critical" and failed["labels"]["job"] == "broken"
    assert "RuntimeError: the drift statistics exploded" in failed["summary"]
    (message,) = [c["body"] for c in fake_slack.calls_to("chat.postMessage") if c["body"]["channel"] == ALERT_CHANNEL]
    assert "job_failed" in message["text"]
    run = [r for r in run_rows(tmp_path) if r["job"] == "broken"][0]
    assert run["ended_at"] >= run["started_at"] and run["error"] == "RuntimeError: the drift statistics exploded"
    assert [a["state"] for a in alert_rows(tmp_path) if a["alert"] == "coverage_gap"] == ["firing"]  # 3+ runs
    assert not scheduler.running and not scheduler.lock.is_locked


async def test_one_scheduler_per_home_with_explicit_defaults_and_time_zones(tmp_path: Path, config: AlertsConfig,
                                                                             sample_settings) -> None:
    runner = JobRunner(JobEnv(sample_settings, tmp_path, config), {"healthy": healthy})
    first, second = MinervaScheduler(runner, config, tmp_path), MinervaScheduler(runner, config, tmp_path)
    assert first.start()
    try:
        assert not second.start() and not second.running and second.jobs()[0].next_run is None
        jobs = first._scheduler.get_jobs()
        assert sorted(j.id for j in jobs) == sorted(["healthy", *BUILTIN_JOBS])
        for job in jobs:
            assert (job.misfire_grace_time, job.coalesce, job.max_instances) == (300, True, 1)
            assert job.trigger.timezone == zoneinfo.ZoneInfo("Europe/Berlin")
        assert {j.name: j.schedule for j in first.jobs()}["weekly_digest"] == "cron 0 9 * * mon"
        assert first.start()  # idempotent
    finally:
        first.shutdown()
    assert second.start()  # the lock was released
    second.shutdown()


async def test_runner_records_runs_evaluates_findings_and_resolves_job_failed(tmp_path: Path, config: AlertsConfig,
                                                                               sample_settings) -> None:
    state = {"fail": True}

    def flaky(ctx: JobContext) -> list[Finding]:
        if state["fail"]:
            raise ValueError("source listing timed out")
        return [Finding("bad_document", "warning", {"doc_id": "api:auth.md"}, 0.1, 0.3, 25, "bad")]

    runner = JobRunner(JobEnv(sample_settings, tmp_path, config), {"flaky": flaky})
    failed = await runner.run("flaky")
    assert (failed.outcome, failed.error) == ("failed", "ValueError: source listing timed out")
    (alert,) = [(a["state"], a["severity"]) for a in alert_rows(tmp_path) if a["alert"] == "job_failed"]
    assert alert == ("firing", "warning")
    state["fail"] = False
    ok = await runner.run("flaky")
    assert (ok.outcome, ok.findings) == ("ok", 1)
    assert sorted((a["alert"], a["state"]) for a in alert_rows(tmp_path)) == [
        ("bad_document", "firing"), ("job_failed", "resolved")]
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as store:
        assert runs.consecutive_failures(store, "flaky") == 0
        assert [r.outcome for r in runs.recent_runs(store, "flaky")] == ["ok", "failed"]
    with pytest.raises(UnknownJob, match="known jobs: flaky, critical_notifications"):
        await runner.run("nope")


async def test_a_job_over_its_timeout_is_recorded_as_failed(tmp_path: Path, config: AlertsConfig, sample_settings) -> None:
    config.schedule.job_timeout_minutes = 0.2 / 60

    def slow(ctx: JobContext) -> list[Finding]:
        time.sleep(0.6)
        return []

    result = await JobRunner(JobEnv(sample_settings, tmp_path, config), {"slow": slow}).run("slow")
    assert result.outcome == "failed" and result.error.startswith("timed out after 0.2 s")
    await asyncio.sleep(0.6)  # let the abandoned thread finish before tmp_path goes


async def test_a_signal_job_returning_something_else_fails_clearly(tmp_path: Path, config: AlertsConfig,
                                                                   sample_settings) -> None:
    result = await JobRunner(JobEnv(sample_settings, tmp_path, config), {"odd": lambda ctx: [{"alert": "x"}]}).run("odd")
    assert result.error == "TypeError: a signal job must return Finding objects, got dict"


def test_cli_jobs_run_and_list(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["--home", str(tmp_path), "jobs", "run", "daily_digest"], catch_exceptions=False)
    assert result.exit_code == 0 and result.stdout.startswith("job daily_digest: ok (run #1")
    listed = runner.invoke(cli, ["--home", str(tmp_path), "jobs", "list"], catch_exceptions=False).stdout
    line = next(line for line in listed.splitlines() if line.startswith("daily_digest"))
    assert "cron 0 9 * * *" in line and line.rstrip().endswith("ok")
    assert "never run" in next(line for line in listed.splitlines() if line.startswith("weekly_digest"))
    unknown = runner.invoke(cli, ["--home", str(tmp_path), "jobs", "run", "nope"])
    assert unknown.exit_code == 1 and "no job named 'nope'" in unknown.output


async def test_weekly_digest_job_writes_the_report_and_posts_the_digest(tmp_path: Path, config: AlertsConfig,
                                                                        sample_settings, fake_slack) -> None:
    notifier = SlackNotifier(make_client("xoxb-test", fake_slack.url), seconds_between_posts=0)
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as store:
        alerts.evaluate(store, config, "drift", [Finding("drift", "info", {"metric": "intent"}, 0.2, 0.1, 900, "drift")],
                        now=datetime.now(timezone.utc))
    result = await JobRunner(JobEnv(sample_settings, tmp_path, config, notifier=notifier), {}).run("weekly_digest")
    assert result.outcome == "ok"
    (page,) = (tmp_path / "reports").glob("quality-*.html")
    assert "Knowledge quality report" in page.read_text()
    (post,) = fake_slack.calls_to("chat.postMessage")
    assert post["body"]["channel"] == "CWEEKLY"  # the drift alert is still pending (fire_after 2): empty, but posted


async def test_serve_starts_one_scheduler_per_home_and_a_second_serve_runs_without_jobs(
        tmp_path: Path, sample_settings, fake_slack) -> None:
    def free_port() -> int:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    secrets = SlackSecrets("xoxb-test", "secret", api_url=fake_slack.url)
    ports, tasks = [free_port(), free_port()], []
    with structlog.testing.capture_logs() as logs:
        try:
            for port in ports:
                app = create_app(sample_settings, tmp_path, secrets, kb=KnowledgeBase(sample_settings, tmp_path))
                tasks.append(asyncio.create_task(run(app, secrets, host="127.0.0.1", port=port)))
                async with aiohttp.ClientSession() as session:
                    for _ in range(100):
                        try:
                            async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                                if response.status == 200:
                                    break
                        except aiohttp.ClientConnectionError:
                            await asyncio.sleep(0.05)
            # Warning level: CLI tests may have set the log level to WARNING for the whole session.
            assert [e["event"] for e in logs].count("scheduler.not_started") == 1
            assert not MinervaScheduler(JobRunner(JobEnv(sample_settings, tmp_path, load_alerts_config()), {}),
                                        load_alerts_config(), tmp_path).start()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    third = MinervaScheduler(JobRunner(JobEnv(sample_settings, tmp_path, load_alerts_config()), {}), load_alerts_config(), tmp_path)
    assert third.start()  # the lock went with the first serve
    third.shutdown()
