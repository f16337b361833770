"""The history of job runs (``job_runs``): one row per run with start, end, outcome and error.

APScheduler only logs failures (#205) and keeps no history in a MemoryJobStore, so the runner records
every run here; ``minerva jobs list`` reads it back and `consecutive_failures` drives the job_failed alert.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime

from feedback import job_runs
from feedback.job_runs import OUTCOMES

__all__ = ["OUTCOMES", "JobRun", "consecutive_failures", "finish_run", "last_runs", "recent_runs", "start_run"]


@dataclass(frozen=True)
class JobRun:
    """One recorded run. ``ended_at`` is None while it runs (or when the process died mid-run)."""

    run_id: int
    job: str
    target: str
    trigger: str
    started_at: datetime
    ended_at: datetime | None
    outcome: str
    error: str | None
    findings: int | None

    @classmethod
    def from_row(cls, row: dict) -> JobRun:
        """From a row of `feedback.job_runs` (times already aware datetimes)."""
        return cls(row["run_id"], row["job"], row["target"], row["trigger"], row["started_at"], row["ended_at"],
                   row["outcome"], row["error"], row["findings"])


def start_run(store, job: str, *, trigger: str, now: datetime, target: str = "") -> int:
    """Record that ``job`` started; returns the run id for `finish_run`.

    Args:
        trigger: "schedule" (APScheduler) or "manual" (``minerva jobs run``).
    """
    with store.transaction() as conn:
        return job_runs.start_run(conn, job, trigger=trigger, started_at=now, pid=os.getpid(), target=target)


def finish_run(store, run_id: int, *, outcome: str, now: datetime, error: str | None = None,
               findings: int | None = None) -> None:
    """Record the end of a run: ``outcome`` "ok" or "failed" (with ``error``, at most 2,000 characters)."""
    if outcome not in ("ok", "failed"):
        raise ValueError(f"outcome must be 'ok' or 'failed', not {outcome!r}")
    with store.transaction() as conn:
        job_runs.finish_run(conn, run_id, outcome=outcome, ended_at=now, error=error, findings=findings)


def consecutive_failures(store, job: str) -> int:
    """Failed runs of ``job`` since its last successful one (0 after a success or before any run)."""
    with store.snapshot() as conn:
        return job_runs.consecutive_failures(conn, job)


def last_runs(store) -> dict[str, JobRun]:
    """Each job's latest run (re-index marks included), by job name."""
    with store.snapshot() as conn:
        found = job_runs.latest_runs(conn)
    return {r["job"]: JobRun.from_row(r) for r in found}


def recent_runs(store, job: str, *, limit: int = 20) -> list[JobRun]:
    """The latest ``limit`` runs of ``job``, newest first."""
    with store.snapshot() as conn:
        return [JobRun.from_row(r) for r in job_runs.recent_runs(conn, job, limit=limit)]
