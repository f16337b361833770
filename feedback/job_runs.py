"""The ``job_runs`` table and its queries: one row per scheduled or manual job run, and the re-index marks.

`jobs.runs` (the run history, the job_failed alert's failure count) and `jobs.inhibition` (a running
re-index mutes its collection's alerts) call these with a connection from ``store.transaction()`` /
``store.snapshot()``. A run row is::

    {"run_id": int, "job": str, "target": str, "trigger": "schedule" | "manual" | "mark",
     "started_at": datetime, "ended_at": datetime | None, "outcome": "running" | "ok" | "failed",
     "error": str | None, "findings": int | None, "pid": int}

with aware UTC datetimes. A re-index mark is a run with trigger "mark" and job "reindex".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from feedback._time import parse_utc, utc_iso
from feedback.db import rows, run, scalar
from feedback.errors import InvalidRecord

OUTCOMES = ("running", "ok", "failed")
#: Longest error text kept, in characters.
MAX_ERROR_CHARS = 2000


def start_run(conn: Connection, job: str, *, trigger: str, started_at: datetime, pid: int, target: str = "") -> int:
    """Records that ``job`` started (outcome "running"); returns its run_id for `finish_run`.

    Args:
        trigger: "schedule", "manual" or "mark" (a re-index mark).
        pid: the process running it.
        target: what it runs on, e.g. a collection; "" for none.
    """
    return int(run(conn, "INSERT INTO job_runs (job, target, trigger, started_at, outcome, pid) "
                         "VALUES (:job, :target, :trigger, :at, 'running', :pid) RETURNING run_id",
                   job=job, target=target, trigger=trigger, at=utc_iso(started_at, field="started_at"),
                   pid=int(pid)).scalar_one())


def finish_run(conn: Connection, run_id: int, *, outcome: str, ended_at: datetime, error: str | None = None,
               findings: int | None = None) -> bool:
    """Records the end of a run: ``outcome`` "ok" or "failed" (``error`` cut to MAX_ERROR_CHARS).

    Returns:
        False when no run has this id.

    Raises:
        InvalidRecord: another outcome, or a naive ``ended_at``.
    """
    if outcome not in ("ok", "failed"):
        raise InvalidRecord(f"outcome must be 'ok' or 'failed', not {outcome!r}")
    return run(conn, "UPDATE job_runs SET ended_at = :at, outcome = :outcome, error = :error, findings = :findings "
                     "WHERE run_id = :run_id",
               at=utc_iso(ended_at, field="ended_at"), outcome=outcome,
               error=(error or None) and error[:MAX_ERROR_CHARS], findings=findings, run_id=int(run_id)).rowcount == 1


def running_targets(conn: Connection, job: str, *, started_after: datetime) -> set[str]:
    """Targets of ``job``'s runs still "running" that started after ``started_after`` (older ones count as
    crashed), e.g. the collections being re-indexed."""
    found = rows(conn, "SELECT DISTINCT target FROM job_runs "
                       "WHERE job = :job AND outcome = 'running' AND started_at > :after",
                 job=job, after=utc_iso(started_after, field="started_after"))
    return {r["target"] for r in found}


def consecutive_failures(conn: Connection, job: str) -> int:
    """Failed runs of ``job`` since its last successful one (0 after a success or before any run)."""
    return int(scalar(conn, "SELECT count(*) FROM job_runs WHERE job = :job AND outcome = 'failed' AND run_id > "
                            "coalesce((SELECT max(run_id) FROM job_runs WHERE job = :job AND outcome = 'ok'), 0)",
                      job=job))


def latest_runs(conn: Connection) -> list[dict[str, Any]]:
    """Each job's latest run, re-index marks left out (see the module docstring for the row shape)."""
    return _decode(rows(conn, "SELECT r.* FROM job_runs r JOIN (SELECT job, max(run_id) AS run_id FROM job_runs "
                              "WHERE trigger != 'mark' GROUP BY job) m ON m.run_id = r.run_id ORDER BY r.run_id"))


def recent_runs(conn: Connection, job: str | None = None, *, limit: int = 20) -> list[dict[str, Any]]:
    """The latest ``limit`` runs (of ``job`` when given, marks included), newest first."""
    where, params = ("WHERE job = :job", {"job": job}) if job is not None else ("", {})
    return _decode(rows(conn, f"SELECT * FROM job_runs {where} ORDER BY run_id DESC LIMIT :limit",
                        limit=int(limit), **params))


def _decode(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(r, started_at=parse_utc(r["started_at"]), ended_at=parse_utc(r["ended_at"])) for r in found]
