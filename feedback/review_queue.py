"""The ``review_queue`` table and its queries: treatment candidates, one row per (problem, subject).

`jobs.review` keeps the vocabulary (actions, priorities) and calls these with a connection from
``store.transaction()`` / ``store.snapshot()``. A candidate written again refreshes its signal, action,
priority, weight, reason, details and ``last_seen_at`` (one ``ON CONFLICT (problem, subject) DO UPDATE``,
so replicas filing the same candidate at once keep one row); its status and ``first_seen_at`` stay, so an
item a person closed stays closed.

An item row is::

    {"item_id": int, "problem": str, "subject": str, "signal": str, "action": str, "priority": 1 | 2 | 3,
     "weight": float, "reason": str, "details": dict, "auto_deprecate": bool,
     "status": "open" | "done" | "dismissed", "first_seen_at": str, "last_seen_at": str,
     "closed_at": str | None}

with the times as stored (UTC ISO-8601 text, `feedback._time.utc_iso`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from feedback._time import utc_iso
from feedback.alerting import json_text
from feedback.db import rows, run
from feedback.errors import InvalidRecord

STATUSES = ("open", "done", "dismissed")
#: Keys of a candidate passed to `upsert_items`.
CANDIDATE_KEYS = ("problem", "subject", "action", "priority", "weight", "reason", "details", "auto_deprecate")

_UPSERT = sa.text(
    "INSERT INTO review_queue (problem, subject, signal, action, priority, weight, reason, details, "
    "auto_deprecate, status, first_seen_at, last_seen_at) "
    "VALUES (:problem, :subject, :signal, :action, :priority, :weight, :reason, :details, "
    ":auto_deprecate, 'open', :at, :at) "
    "ON CONFLICT (problem, subject) DO UPDATE SET "
    "signal = excluded.signal, action = excluded.action, priority = excluded.priority, "
    "weight = excluded.weight, reason = excluded.reason, details = excluded.details, "
    "auto_deprecate = excluded.auto_deprecate, last_seen_at = excluded.last_seen_at")


def upsert_items(conn: Connection, signal: str, candidates: Iterable[dict[str, Any]], *, at: datetime) -> int:
    """Adds or refreshes candidates (dicts with `CANDIDATE_KEYS`; ``details`` a JSON-ready dict).

    Args:
        signal: the job proposing them, e.g. "coverage".
        at: aware time recorded as ``last_seen_at`` (and ``first_seen_at`` of a new item).

    Returns:
        How many candidates were written.

    Raises:
        InvalidRecord: a candidate lacks a key, or ``at`` is naive.
    """
    stamp = utc_iso(at, field="at")
    params = []
    for c in candidates:
        missing = [k for k in CANDIDATE_KEYS if k not in c]
        if missing:
            raise InvalidRecord(f"a review candidate needs {', '.join(missing)}")
        params.append({
            "problem": c["problem"], "subject": c["subject"], "signal": signal, "action": c["action"],
            "priority": int(c["priority"]), "weight": float(c["weight"]), "reason": c["reason"],
            "details": json_text(c["details"]), "auto_deprecate": int(bool(c["auto_deprecate"])), "at": stamp,
        })
    if not params:
        return 0
    conn.execute(_UPSERT, params)
    return len(params)


def fetch_items(conn: Connection, *, status: str | None = "open", limit: int | None = None) -> list[dict[str, Any]]:
    """Items, most urgent first: priority, then weight (descending), then oldest, then item_id.

    Args:
        status: "open", "done", "dismissed", or None for all.
        limit: at most this many (None: all).

    Raises:
        InvalidRecord: unknown ``status``.
    """
    if status is not None and status not in STATUSES:
        raise InvalidRecord(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
    where, params = ("WHERE status = :status", {"status": status}) if status else ("", {})
    sql = f"SELECT * FROM review_queue {where} ORDER BY priority, weight DESC, first_seen_at, item_id"
    if limit is not None:
        sql += " LIMIT :limit"
        params["limit"] = int(limit)
    found = rows(conn, sql, **params)
    return [dict(r, details=json.loads(r["details"]), auto_deprecate=bool(r["auto_deprecate"])) for r in found]


def set_status(conn: Connection, item_id: int, status: str, *, at: datetime) -> bool:
    """Marks an item "done" or "dismissed" (``closed_at`` = ``at``) or "open" again (``closed_at`` cleared).

    Returns:
        False when no item has this id.

    Raises:
        InvalidRecord: unknown ``status``, or a naive ``at``.
    """
    if status not in STATUSES:
        raise InvalidRecord(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
    closed_at = None if status == "open" else utc_iso(at, field="at")
    return run(conn, "UPDATE review_queue SET status = :status, closed_at = :closed_at WHERE item_id = :item_id",
               status=status, closed_at=closed_at, item_id=int(item_id)).rowcount == 1
