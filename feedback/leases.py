"""Job leases: each scheduled job slot runs on one replica, however many replicas schedule it.

Every ``minerva serve`` replica runs the same schedule. When a job fires, the replica tries to take the
job's lease for that slot with one conditional upsert (issue 13 item 3)::

    INSERT INTO job_leases (...) VALUES (...)
    ON CONFLICT (job) DO UPDATE SET slot = excluded.slot, ... WHERE job_leases.slot < excluded.slot

Exactly one replica changes the row for a given slot: on SQLite the write lock serialises the upserts; on
PostgreSQL the conflicting upserts wait on the row lock and re-check the WHERE against the committed row,
so the losers update nothing. A replica that crashes mid-run does not block the next slot (it is newer).
The same lease works on one machine with SQLite and across machines with PostgreSQL.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta

from sqlalchemy.engine import Connection

from feedback._time import utc_iso
from feedback.db import first, run
from feedback.errors import InvalidRecord


def holder_name() -> str:
    """This process as a lease holder: ``"<host>:<pid>"``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def take_lease(conn: Connection, job: str, slot: datetime, *, holder: str, now: datetime,
               ttl: timedelta = timedelta(hours=1)) -> bool:
    """Takes ``job``'s lease for ``slot`` unless some replica already took this slot (or a later one).

    Args:
        conn: a connection inside a write transaction (`feedback.store.FeedbackStore.transaction`).
        job: the scheduled job's name.
        slot: aware datetime naming the slot, the same on every replica (the scheduled fire time,
            floored to the trigger's period: `jobs.scheduler.slot_of`).
        holder: who takes it (`holder_name`), kept for people reading the table.
        now: aware datetime of the attempt.
        ttl: how long the lease is meant to be held; recorded as ``expires_at`` (informative: a newer slot
            always wins, so a crashed holder never blocks the next run).

    Returns:
        True when this call took the lease (run the job), False when the slot was already taken.

    Raises:
        InvalidRecord: an empty job name or a naive datetime.
    """
    if not job:
        raise InvalidRecord("job must be a non-empty string")
    taken = run(
        conn,
        "INSERT INTO job_leases (job, slot, holder, taken_at, expires_at) "
        "VALUES (:job, :slot, :holder, :now, :expires) "
        "ON CONFLICT (job) DO UPDATE SET slot = excluded.slot, holder = excluded.holder, "
        "taken_at = excluded.taken_at, expires_at = excluded.expires_at "
        "WHERE job_leases.slot < excluded.slot",
        job=job, slot=utc_iso(slot, field="slot"), holder=holder, now=utc_iso(now, field="now"),
        expires=utc_iso(now + ttl, field="now"),
    )
    return taken.rowcount == 1


def lease_of(conn: Connection, job: str) -> dict | None:
    """The lease row of ``job`` (``{"job", "slot", "holder", "taken_at", "expires_at"}``), None before its first run."""
    return first(conn, "SELECT job, slot, holder, taken_at, expires_at FROM job_leases WHERE job = :job", job=job)
