"""Inhibition: while a collection is being re-indexed, its freshness and citation alerts are not notified
(rules with ``muted_during_reindex``; notes/monitoring.md). An alert without a collection (a global figure
such as citation health) is muted while any collection is re-indexed. The re-index marks itself running in
``job_runs`` (job "reindex", target = the collection)::

    with reindex_running(store, "handbook"):
        kb.sync(sources=[settings.source("handbook")])

A mark left "running" by a crash stops counting after ``reindex_mark_max_hours`` (config/alerts.yaml).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import datetime, timedelta

from jobs._store import iso, rows, utcnow, writing

REINDEX_JOB = "reindex"


@contextlib.contextmanager
def reindex_running(store, collection: str, *, now=utcnow) -> Iterator[None]:
    """Mark ``collection`` as being re-indexed for the duration of the ``with`` block.

    Args:
        store: the feedback store.
        collection: the collection (source name) being re-indexed.
        now: clock, a callable returning an aware datetime (tests pass a fixed one).

    The run is recorded in ``job_runs`` with outcome "ok" or "failed" (and the error) at the end.
    """
    with writing(store) as db:
        run_id = db.execute(
            "INSERT INTO job_runs (job, target, trigger, started_at, outcome, pid) VALUES (?, ?, 'mark', ?, 'running', ?)",
            [REINDEX_JOB, collection, iso(now()), os.getpid()],
        ).lastrowid
    outcome, error = "ok", None
    try:
        yield
    except BaseException as exc:
        outcome, error = "failed", repr(exc)
        raise
    finally:
        with writing(store) as db:
            db.execute("UPDATE job_runs SET ended_at = ?, outcome = ?, error = ? WHERE run_id = ?",
                       [iso(now()), outcome, error, run_id])


def reindexing_in(db, now: datetime, *, max_age: timedelta) -> set[str]:
    """Collections with a re-index mark still running and younger than ``max_age`` (inside `reading`)."""
    found = rows(db, "SELECT DISTINCT target FROM job_runs WHERE job = ? AND outcome = 'running' AND started_at > ?",
                 [REINDEX_JOB, iso(now - max_age)])
    return {r["target"] for r in found}
