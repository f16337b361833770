"""Running one job the same way whether the scheduler or ``minerva jobs run NAME`` asks.

Every run is recorded in ``job_runs`` (start, end, outcome, error). A signal job runs in a worker thread
with its own store connection, then its findings are evaluated into alerts and critical ones are posted at
once. A job that raises (or exceeds ``schedule.job_timeout_minutes``) is recorded as failed and raises a
``job_failed`` alert: warning, critical after `CRITICAL_AFTER` failures in a row; one good run resolves it.
`JobRunner.run` itself never raises for a job's failure, so the scheduler keeps running.

Jobs: the signal jobs of `jobs.signals.SIGNAL_JOBS` (when that package exists) plus `BUILTIN_JOBS`
(notifications, digests, ``retention``: the privacy policy of `jobs.retention`, and ``expert_reminders``:
`jobs.escalations`).
"""

from __future__ import annotations

import asyncio
import importlib
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from config.alerts import AlertsConfig
from config.errors import MinervaError
from feedback import utcnow
from jobs import alerts, runs
from jobs.findings import Finding, JobContext
from jobs.notify import (Delivery, Notifier, Undelivered, failures_of, notify_now, resend_replies, resend_undelivered,
                         send_digest)

log = structlog.get_logger(__name__)

#: Failures in a row after which job_failed becomes critical (posted at once instead of in the digest).
CRITICAL_AFTER = 3
JOB_FAILED = "job_failed"
BUILTIN_JOBS = ("critical_notifications", "daily_digest", "weekly_digest", "retention", "expert_reminders",
               "verification")
SignalJob = Callable[[JobContext], list[Finding]]


class UnknownJob(MinervaError, LookupError):
    """No job has this name; the message lists the known ones."""


@dataclass
class JobEnv:
    """What jobs run with.

    Attributes:
        settings: `config.Settings`.
        home: MINERVA_HOME; the store is ``home / "minerva.sqlite"`` unless ``MINERVA_DATABASE_URL`` or the
            config's ``database.url`` names another (`store_path`).
        config: the alerting config.
        kb: a `knowledge.KnowledgeBase`, or None.
        notifier: posts to Slack; None defers notifications (they stay due).
        clock: returns the current aware time (tests pass a fixed clock).
        extra: passed to signal jobs as ``JobContext.extra``.
    """

    settings: Any
    home: Path
    config: AlertsConfig
    kb: Any = None
    notifier: Notifier | None = None
    clock: Callable[[], datetime] = utcnow
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def store_path(self) -> str | Path:
        """The feedback store's file or database URL (`feedback.db.database_target`)."""
        from feedback.db import database_target

        database = getattr(self.settings, "database", None)
        return database_target(Path(self.home), database.url if database else None)


@dataclass(frozen=True)
class RunResult:
    """How a run ended: outcome "ok" or "failed", the error text, and how many findings it produced."""

    job: str
    run_id: int
    outcome: str
    error: str | None = None
    findings: int | None = None


def load_signal_jobs() -> dict[str, SignalJob]:
    """`jobs.signals.SIGNAL_JOBS`, or {} while that package does not exist (logged once per call)."""
    try:
        module = importlib.import_module("jobs.signals")
    except ModuleNotFoundError as exc:
        if exc.name not in ("jobs.signals", "jobs"):
            raise
        log.info("jobs.no_signal_jobs", reason="jobs.signals is not installed yet")
        return {}
    return dict(getattr(module, "SIGNAL_JOBS", {}) or {})


class JobRunner:
    """Runs jobs by name with recording, alerting and notification.

    Usage::

        runner = JobRunner(JobEnv(settings, home, load_alerts_config(), notifier=SlackNotifier(client)))
        result = await runner.run("daily_digest", trigger="manual")
    """

    def __init__(self, env: JobEnv, signal_jobs: dict[str, SignalJob] | None = None):
        self.env = env
        self.signal_jobs = load_signal_jobs() if signal_jobs is None else dict(signal_jobs)
        # Jobs run concurrently on one loop; "read what is due, post, record" must not interleave, or two jobs
        # finishing together would post the same alert twice. Created on first use, on the running loop.
        self._notify_lock: asyncio.Lock | None = None

    async def _notify_now(self, store, now: datetime, *, resend: bool = False) -> list[Delivery]:
        """Post due critical alerts (and, with ``resend``, the digest items and answers a failed post left
        undelivered)."""
        async with self._lock():
            deliveries = await notify_now(store, self.env.config, self.env.notifier, now=now)
            if resend:
                deliveries += await resend_undelivered(store, self.env.config, self.env.notifier, now=now)
                deliveries += await resend_replies(store, self.env.config, self.env.notifier, now=now)
            return deliveries

    async def _send_digest(self, store, now: datetime, **kwargs) -> None:
        """Post a digest; when it fails, post the resulting delivery alert at once and raise.

        Raises:
            Undelivered: some of the digest could not be posted (recorded; the next sweep posts it again).
        """
        async with self._lock():
            delivery = await send_digest(store, self.env.config, self.env.notifier, now=now, **kwargs)
        failed = failures_of([delivery])
        if failed:
            await self._notify_now(store, now)  # the slack_delivery_failed alert goes to the alert channel now
            raise Undelivered(failed)

    def _lock(self) -> asyncio.Lock:
        if self._notify_lock is None:
            self._notify_lock = asyncio.Lock()
        return self._notify_lock

    def job_names(self) -> list[str]:
        """Signal jobs (sorted) then the built-in ones."""
        return sorted(self.signal_jobs) + [name for name in BUILTIN_JOBS if name not in self.signal_jobs]

    async def run(self, name: str, *, trigger: str = "manual") -> RunResult:
        """Run job ``name`` now and record it; a failure of the job is recorded, not raised.

        Raises:
            UnknownJob: no such job.
            StoreUnavailable: the feedback store cannot be opened or written (nothing can be recorded;
                the scheduler's EVENT_JOB_ERROR listener logs it).
        """
        if name not in self.job_names():
            raise UnknownJob(f"no job named {name!r}; known jobs: {', '.join(self.job_names())}")
        from feedback import FeedbackStore

        store = await asyncio.to_thread(FeedbackStore.open, self.env.store_path)
        try:
            return await self._run_recorded(store, name, trigger)
        finally:
            await asyncio.to_thread(store.close)

    async def record_crash(self, name: str, error: BaseException) -> None:
        """Best effort after the runner itself failed (seen by the scheduler's EVENT_JOB_ERROR listener):
        record a failed run and the job_failed alert; logs when even that is impossible."""
        from feedback import FeedbackStore

        try:
            store = await asyncio.to_thread(FeedbackStore.open, self.env.store_path)
        except Exception:
            log.exception("job.crash_not_recorded", job=name)
            return
        try:
            now = self.env.clock()
            run_id = await asyncio.to_thread(runs.start_run, store, name, trigger="schedule", now=now)
            text = f"{type(error).__name__}: {error}"
            await asyncio.to_thread(runs.finish_run, store, run_id, outcome="failed", error=text, now=now)
            await self._job_health(store, name, text, now)
        except Exception:
            log.exception("job.crash_not_recorded", job=name)
        finally:
            await asyncio.to_thread(store.close)

    async def _run_recorded(self, store, name: str, trigger: str) -> RunResult:
        started = self.env.clock()
        run_id = await asyncio.to_thread(runs.start_run, store, name, trigger=trigger, now=started)
        log.info("job.started", job=name, run_id=run_id, trigger=trigger)
        timeout = self.env.config.schedule.job_timeout_minutes * 60
        outcome, error, findings = "ok", None, None
        try:
            findings = await asyncio.wait_for(self._body(store, name, started), timeout=timeout)
        except asyncio.TimeoutError:
            outcome, error = "failed", f"timed out after {timeout:g} s (schedule.job_timeout_minutes)"
            log.error("job.timed_out", job=name, run_id=run_id, seconds=timeout)
        except Undelivered as exc:  # loud but expected: no traceback; slack_delivery_failed says the rest
            outcome, error = "failed", f"undelivered: {exc}"
            paused = self.env.notifier is not None and self.env.notifier.paused
            (log.warning if paused else log.error)("job.undelivered", job=name, run_id=run_id, error=error)
        except Exception as exc:  # the job failed: record it and raise an alert, never kill the scheduler
            outcome, error = "failed", f"{type(exc).__name__}: {exc}"
            # The traceback as plain text: a console renderer's pretty traceback takes ~1 s on the event loop.
            log.error("job.failed", job=name, run_id=run_id, error=error, traceback=traceback.format_exc())
        ended = self.env.clock()
        await asyncio.to_thread(runs.finish_run, store, run_id, outcome=outcome, error=error, findings=findings, now=ended)
        log.info("job.finished", job=name, run_id=run_id, outcome=outcome, findings=findings)
        if error is not None and error.startswith("undelivered: "):
            # Not a broken job: the delivery alert covers it, and job_failed would be one more post to fail.
            return RunResult(name, run_id, outcome, error, findings)
        try:
            await self._job_health(store, name, error, ended)
        except Exception:
            log.exception("job.health_failed", job=name, run_id=run_id)
        return RunResult(name, run_id, outcome, error, findings)

    def _resolve_gone_documents(self, store, now: datetime) -> None:
        """Resolve alerts on documents archived or deleted since they fired (`alerts.resolve_gone_documents`)."""
        if self.env.kb is None:
            return
        try:
            documents = self.env.kb.index().documents
        except Exception as exc:  # no index yet, or another model's: nothing to compare with
            log.info("alerts.gone_documents_skipped", reason=str(exc)[:200])
            return
        resolved = alerts.resolve_gone_documents(store, self.env.config, documents, now=now)
        if resolved:
            log.info("alerts.gone_documents_resolved", count=len(resolved))

    async def _body(self, store, name: str, now: datetime) -> int | None:
        if name in self.signal_jobs:
            findings = await asyncio.to_thread(self._run_signal, self.signal_jobs[name], now)
            evaluation = await asyncio.to_thread(alerts.evaluate, store, self.env.config, name, findings, now=now)
            if evaluation.disabled_collections:
                log.warning("killswitch.collections_disabled", job=name, collections=evaluation.disabled_collections)
            if evaluation.quarantined_documents:
                log.warning("killswitch.documents_quarantined", job=name, documents=evaluation.quarantined_documents)
            await asyncio.to_thread(self._resolve_gone_documents, store, now)
            await self._notify_now(store, now)
            return len(findings)
        if name == "critical_notifications":
            deliveries = await self._notify_now(store, now, resend=True)
            failed = failures_of(deliveries)
            if failed:
                raise Undelivered(failed)
            return len(deliveries)
        if name == "retention":  # questions are personal data: config `retention`, jobs.retention
            from jobs.retention import apply as apply_retention

            await asyncio.to_thread(apply_retention, store, self.env.settings.retention, now=now)
            return None
        if name == "expert_reminders":  # unanswered "Ask an expert" requests, reminded once (issue 25)
            from jobs.escalations import remind

            return await remind(store, self.env.settings, self.env.notifier, now=now)
        if name == "daily_digest":  # the channel digest, then each owner's direct message (issue 11 item 9)
            undelivered = None
            try:
                await self._send_digest(store, now, kind="daily")
            except Undelivered as exc:
                undelivered = exc
            await self._send_owner_messages(store, now)
            if undelivered is not None:
                raise undelivered
            return None
        if name == "verification":  # owners confirm their pages (issue 25 item 3, jobs.verification)
            return await self._verify_pages(store, now)
        if name == "weekly_digest":
            chart = await asyncio.to_thread(self._write_weekly_report, store, now)
            await self._send_digest(store, now, kind="weekly", chart_png=chart, post_when_empty=True)
            return None
        raise UnknownJob(name)

    async def _send_owner_messages(self, store, now: datetime) -> int:
        """One direct message per page owner with the findings on their pages, once per digest cycle
        (`jobs.owners`). Returns how many owners were messaged.

        Raises:
            Undelivered: some messages failed (a ``slack_delivery_failed`` alert per user id is raised and
                posted to the alert channel at once; those owners are tried again on the next run).
        """
        from jobs import owners
        from jobs.notify import record_delivery_health

        notifier = self.env.notifier
        if self.env.kb is None:
            return 0
        try:
            documents = await asyncio.to_thread(lambda: self.env.kb.index().documents)
        except Exception as exc:  # no index yet: no pages, no owners
            log.info("owners.skipped", reason=str(exc)[:200])
            return 0
        reports = await asyncio.to_thread(owners.collect, store, self.env.config, documents,
                                          owners.source_owners(self.env.settings), now=now)
        cycle = owners.cycle_of(now, self.env.config.schedule.timezone)
        due = owners.due_reports(reports, Path(self.env.home), cycle)
        if not due:
            return 0
        if notifier is None or not hasattr(notifier, "post_direct"):
            log.warning("owners.messages_deferred", owners=len(due), reason="no Slack client (SLACK_BOT_TOKEN unset)")
            return 0
        sent, deliveries = [], []
        async with self._lock():
            for report in due:
                posted = await notifier.post_direct(report.owner, report)
                deliveries += posted
                if posted and all(d.ok for d in posted):
                    sent.append(report.owner)
        await asyncio.to_thread(owners.mark_sent, Path(self.env.home), [r for r in due if r.owner in sent], cycle,
                                reports)
        if not notifier.paused:
            await asyncio.to_thread(record_delivery_health, store, self.env.config, deliveries, now=now)
        failed = failures_of(deliveries)
        if failed:
            await self._notify_now(store, now)
            raise Undelivered(failed)
        return len(sent)

    async def _verify_pages(self, store, now: datetime) -> int:
        """Ask owners of due pages and remind once (`jobs.verification.run_verification`); returns how many
        messages were sent.

        Raises:
            Undelivered: some messages failed (undone: those pages are asked on the next run).
        """
        from jobs.verification import run_verification

        if self.env.kb is None:
            return 0
        try:
            documents = await asyncio.to_thread(lambda: self.env.kb.index().documents)
        except Exception as exc:  # no index yet: no pages to verify
            log.info("verification.skipped", reason=str(exc)[:200])
            return 0
        async with self._lock():
            done = await run_verification(store, self.env.settings, self.env.config, documents, self.env.notifier,
                                          now=now)
        if done.failed:
            raise Undelivered(f"verification messages for {', '.join(done.failed[:5])} were not delivered")
        return len(done.asked) + len(done.reminded)

    def _run_signal(self, job: SignalJob, now: datetime) -> list[Finding]:
        """In a worker thread, with a store of its own: the job may hold its store's snapshot for seconds, and a
        job that outlives its timeout cannot disturb the runner's connection."""
        from feedback import FeedbackStore

        with FeedbackStore.open(self.env.store_path) as store:
            ctx = JobContext(settings=self.env.settings, home=Path(self.env.home), store=store, now=now,
                             kb=self.env.kb, extra=dict(self.env.extra))
            findings = list(job(ctx) or [])
        bad = [f for f in findings if not isinstance(f, Finding)]
        if bad:
            raise TypeError(f"a signal job must return Finding objects, got {type(bad[0]).__name__}")
        return findings

    def _write_weekly_report(self, store, now: datetime) -> bytes | None:
        from jobs.report import build_report, collect_summaries

        ctx = JobContext(settings=self.env.settings, home=Path(self.env.home), store=store, now=now, kb=self.env.kb,
                         extra=dict(self.env.extra))
        report = build_report(store, self.env.config, now=now, kb=self.env.kb, summaries=collect_summaries(ctx),
                              window_days=self.env.config.digest.report_window_days)
        folder = Path(self.env.home) / "reports"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"quality-{now.strftime('%Y-%m-%d')}.html"
        path.write_text(report.html, encoding="utf-8")
        log.info("report.written", path=str(path), charts=sorted(report.charts))
        return report.main_chart_png

    async def _job_health(self, store, name: str, error: str | None, now: datetime) -> None:
        findings = []
        if error is not None:
            failures = await asyncio.to_thread(runs.consecutive_failures, store, name)
            findings.append(Finding(
                alert=JOB_FAILED, severity="critical" if failures >= CRITICAL_AFTER else "warning",
                labels={"job": name}, value=failures, threshold=CRITICAL_AFTER, n=failures,
                summary=f"Job {name} failed {failures} time(s) in a row: {error[:300]}",
                annotations={"error": error[:2000]},
            ))
        await asyncio.to_thread(alerts.evaluate, store, self.env.config, f"job:{name}", findings, now=now)
        if findings:
            await self._notify_now(store, now)
