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

from feedback import job_runs
from feedback import utcnow

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
    with store.transaction() as conn:
        run_id = job_runs.start_run(conn, REINDEX_JOB, trigger="mark", started_at=now(), pid=os.getpid(),
                                    target=collection)
    outcome, error = "ok", None
    try:
        yield
    except BaseException as exc:
        outcome, error = "failed", repr(exc)
        raise
    finally:
        with store.transaction() as conn:
            job_runs.finish_run(conn, run_id, outcome=outcome, ended_at=now(), error=error)


def reindexing_in(conn, now: datetime, *, max_age: timedelta) -> set[str]:
    """Collections with a re-index mark still running and younger than ``max_age``, inside the caller's
    transaction (a connection from ``store.snapshot()`` or ``store.transaction()``)."""
    return job_runs.running_targets(conn, REINDEX_JOB, started_after=now - max_age)
