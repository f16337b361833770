"""The history of job runs (``job_runs``): one row per run with start, end, outcome and error.

APScheduler only logs failures (#205) and keeps no history in a MemoryJobStore, so the runner records
every run here; ``minerva jobs list`` reads it back and `consecutive_failures` drives the job_failed alert.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime

from jobs._store import iso, parse_iso, reading, rows, writing

OUTCOMES = ("running", "ok", "failed")


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
        return cls(row["run_id"], row["job"], row["target"], row["trigger"], parse_iso(row["started_at"]),
                   parse_iso(row["ended_at"]), row["outcome"], row["error"], row["findings"])


def start_run(store, job: str, *, trigger: str, now: datetime, target: str = "") -> int:
    """Record that ``job`` started; returns the run id for `finish_run`.

    Args:
        trigger: "schedule" (APScheduler) or "manual" (``minerva jobs run``).
    """
    with writing(store) as db:
        return db.execute(
            "INSERT INTO job_runs (job, target, trigger, started_at, outcome, pid) VALUES (?, ?, ?, ?, 'running', ?)",
            [job, target, trigger, iso(now), os.getpid()],
        ).lastrowid


def finish_run(store, run_id: int, *, outcome: str, now: datetime, error: str | None = None,
               findings: int | None = None) -> None:
    """Record the end of a run: ``outcome`` "ok" or "failed" (with ``error``, at most 2,000 characters)."""
    if outcome not in ("ok", "failed"):
        raise ValueError(f"outcome must be 'ok' or 'failed', not {outcome!r}")
    with writing(store) as db:
        db.execute("UPDATE job_runs SET ended_at = ?, outcome = ?, error = ?, findings = ? WHERE run_id = ?",
                   [iso(now), outcome, (error or None) and error[:2000], findings, run_id])


def consecutive_failures(store, job: str) -> int:
    """Failed runs of ``job`` since its last successful one (0 after a success or before any run)."""
    with reading(store) as db:
        last_ok = rows(db, "SELECT max(run_id) AS run_id FROM job_runs WHERE job = ? AND outcome = 'ok'", [job])[0]["run_id"]
        return rows(db, "SELECT count(*) AS n FROM job_runs WHERE job = ? AND outcome = 'failed' AND run_id > ?",
                    [job, last_ok or 0])[0]["n"]


def last_runs(store) -> dict[str, JobRun]:
    """Each job's latest run (re-index marks included), by job name."""
    with reading(store) as db:
        found = rows(db, "SELECT r.* FROM job_runs r JOIN (SELECT job, max(run_id) AS run_id FROM job_runs "
                         "WHERE trigger != 'mark' GROUP BY job) m ON m.run_id = r.run_id")
    return {r["job"]: JobRun.from_row(r) for r in found}


def recent_runs(store, job: str, *, limit: int = 20) -> list[JobRun]:
    """The latest ``limit`` runs of ``job``, newest first."""
    with reading(store) as db:
        return [JobRun.from_row(r) for r in rows(
            db, "SELECT * FROM job_runs WHERE job = ? ORDER BY run_id DESC LIMIT ?", [job, limit])]
