"""APScheduler 3.x inside ``minerva serve``: exactly one scheduler per MINERVA_HOME, every run recorded.

Practice from notes/monitoring.md ("APScheduler 3.x"):

- one scheduler per home: a non-blocking file lock ``{home}/scheduler.lock``; a second ``serve`` on the same
  home runs the bot without jobs and logs why (#160, #766);
- one run per slot across replicas (issue 13): replicas with their own homes on one shared store each
  schedule every job, and a run starts only on the replica that takes the job's lease for the slot
  (`feedback.leases`, one conditional upsert); interval triggers share one anchor so slots line up;
- explicit job defaults: ``misfire_grace_time`` 300 s, ``coalesce``, ``max_instances`` 1 (#182);
- a time zone on every trigger (#667); a MemoryJobStore with stable ids and ``replace_existing`` (#843);
- started from the app's async start-up, since `AsyncIOScheduler.start` needs a running loop (#994);
- failures never only logged (#205): `jobs.runner.JobRunner` records them and raises ``job_failed``;
  the EVENT_JOB_ERROR listener covers the runner's own failures (e.g. the store cannot be opened).

Usage (inside a coroutine)::

    scheduler = MinervaScheduler(runner, alerts_config, home)
    if scheduler.start():
        ...
    scheduler.shutdown()
"""

from __future__ import annotations

import asyncio
import zoneinfo
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import structlog
from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobEvent
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from filelock import FileLock, Timeout

from config.alerts import AlertsConfig, ScheduleEntry
from jobs.runner import JobRunner

log = structlog.get_logger(__name__)
LOCK_NAME = "scheduler.lock"


@dataclass(frozen=True)
class ScheduledJob:
    """A job as the scheduler sees it: name, schedule text, and next run (None when not scheduled)."""

    name: str
    schedule: str
    next_run: datetime | None


#: Interval jobs count their periods from this instant on every replica, so replicas started at different
#: times fire in the same slots (APScheduler's default start is the process start).
INTERVAL_ANCHOR = datetime(2000, 1, 1, tzinfo=timezone.utc)


def make_trigger(entry: ScheduleEntry, tz: str):
    """The APScheduler trigger for ``entry``, in ``tz`` (an IANA name)."""
    zone = zoneinfo.ZoneInfo(tz)
    if entry.cron:
        return CronTrigger.from_crontab(entry.cron, timezone=zone)
    return IntervalTrigger(seconds=entry.interval_minutes * 60, timezone=zone, start_date=INTERVAL_ANCHOR)


def slot_of(entry: ScheduleEntry, moment: datetime) -> datetime:
    """The schedule slot a run fired at ``moment`` belongs to, identical on every replica.

    Cron jobs: ``moment`` floored to the minute (cron's resolution). Interval jobs: the start of the period,
    counted from `INTERVAL_ANCHOR`. A replica whose clock is a few seconds off still names the same slot,
    because each fires at its own clock's slot start.
    """
    if entry.cron:
        return moment.replace(second=0, microsecond=0)
    period = timedelta(minutes=entry.interval_minutes)
    return INTERVAL_ANCHOR + ((moment - INTERVAL_ANCHOR) // period) * period


class MinervaScheduler:
    """The monitoring jobs on an `AsyncIOScheduler`, guarded by a file lock on the home folder.

    Args:
        runner: runs and records the jobs.
        config: schedules (``schedule`` section of config/alerts.yaml).
        home: MINERVA_HOME; the lock file lives there.
    """

    def __init__(self, runner: JobRunner, config: AlertsConfig, home: Path):
        self.runner = runner
        self.config = config
        self.lock = FileLock(str(Path(home) / LOCK_NAME), blocking=False)
        self._scheduler: AsyncIOScheduler | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def running(self) -> bool:
        """True between a successful `start` and `shutdown`."""
        return self._scheduler is not None and self._scheduler.running

    def start(self) -> bool:
        """Take the lock and start every job; call from a coroutine (needs the running loop).

        Returns:
            True when this process now runs the jobs; False when another scheduler holds the lock for this
            home (logged; the caller goes on without jobs).
        """
        if self.running:
            return True
        Path(self.lock.lock_file).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.lock.acquire()
        except Timeout:
            log.warning("scheduler.not_started", reason="another scheduler holds the lock", lock=self.lock.lock_file,
                        fix="only one `minerva serve` per MINERVA_HOME runs jobs; this one serves Slack only")
            return False
        schedule = self.config.schedule
        scheduler = AsyncIOScheduler(
            jobstores={"default": MemoryJobStore()},
            job_defaults={"misfire_grace_time": schedule.misfire_grace_seconds, "coalesce": True, "max_instances": 1},
            timezone=zoneinfo.ZoneInfo(schedule.timezone),
        )
        scheduler.add_listener(self._on_event, EVENT_JOB_ERROR | EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES)
        for name in self.runner.job_names():
            scheduler.add_job(self._fire, make_trigger(schedule.entry(name), schedule.timezone), args=[name],
                              id=name, name=name, replace_existing=True)
        unknown = sorted(set(schedule.jobs) - set(self.runner.job_names()))
        if unknown:
            log.warning("scheduler.unknown_jobs_ignored", jobs=unknown, known=self.runner.job_names())
        scheduler.start()
        self._scheduler = scheduler
        log.info("scheduler.started", jobs=self.runner.job_names(), timezone=schedule.timezone, lock=self.lock.lock_file)
        return True

    def shutdown(self) -> None:
        """Stop the jobs (running ones are not waited for) and release the lock; harmless when not started."""
        if self._scheduler is not None:
            if self._scheduler.running:
                self._scheduler.shutdown(wait=False)
            self._scheduler = None
            log.info("scheduler.stopped")
        if self.lock.is_locked:
            self.lock.release()

    def jobs(self) -> list[ScheduledJob]:
        """Every job with its schedule and next run time (next run None when the scheduler is not running)."""
        scheduled = {job.id: job for job in self._scheduler.get_jobs()} if self._scheduler else {}
        schedule = self.config.schedule
        return [ScheduledJob(name, schedule.entry(name).describe(), getattr(scheduled.get(name), "next_run_time", None))
                for name in self.runner.job_names()]

    async def _fire(self, name: str) -> None:
        now = datetime.now(timezone.utc)  # the wall clock fires the trigger, not the jobs' (replayable) clock
        slot = slot_of(self.config.schedule.entry(name), now)
        if not await asyncio.to_thread(self._take_slot, name, slot, now):
            log.info("scheduler.slot_taken_elsewhere", job=name, slot=slot.isoformat(),
                     why="another replica runs this slot (job_leases)")
            return
        await self.runner.run(name, trigger="schedule")

    def _take_slot(self, name: str, slot: datetime, now: datetime) -> bool:
        """Take the job's lease for ``slot`` in the shared store (`feedback.leases`)."""
        from feedback import FeedbackStore
        from feedback.leases import holder_name, take_lease

        with FeedbackStore.open(self.runner.env.store_path) as store, store.transaction() as conn:
            return take_lease(conn, name, slot, holder=holder_name(), now=now)

    def _on_event(self, event: JobEvent) -> None:
        if event.code == EVENT_JOB_ERROR and isinstance(getattr(event, "exception", None), asyncio.CancelledError):
            log.info("scheduler.job_cancelled", job=event.job_id, reason="shutting down")
        elif event.code == EVENT_JOB_ERROR:
            error = getattr(event, "exception", None) or RuntimeError("unknown error")
            log.error("scheduler.job_error", job=event.job_id, error=repr(error), traceback=getattr(event, "traceback", None))
            try:  # the listener runs on the scheduler's loop: record the crash there, without blocking it
                task = asyncio.get_running_loop().create_task(self.runner.record_crash(event.job_id, error))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            except RuntimeError:
                log.error("scheduler.crash_not_recorded", job=event.job_id, reason="no running event loop")
        elif event.code == EVENT_JOB_MISSED:
            log.warning("scheduler.job_missed", job=event.job_id, scheduled=str(getattr(event, "scheduled_run_time", "")))
        elif event.code == EVENT_JOB_MAX_INSTANCES:
            log.warning("scheduler.job_still_running", job=event.job_id,
                        hint="the previous run has not finished; this run was skipped")
