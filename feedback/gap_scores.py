"""Gap-query scores: one row per (run, query), every run kept, so score changes can be tracked over time.

`jobs.gaps` writes a run and compares it with the previous scores of each query (DESIGN.md "Gaps": a
sudden drop such as 0.85 → 0.45 raises an alert).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from feedback import schema
from feedback._time import utc_iso
from feedback.db import rows
from feedback.errors import InvalidRecord

#: Columns of a gap-score row, in table order.
COLUMNS = ("run_id", "query", "score", "expected", "top_doc_id", "generation", "measured_at")


def insert_gap_scores(
    conn: Connection, run_id: str, scores: list[dict[str, Any]], generation: str,
    measured_at: datetime | None,
) -> int:
    """Stores one run of gap queries.

    Args:
        conn: a connection inside a write transaction (`feedback.store.FeedbackStore.transaction`).
        run_id: the run's id (e.g. ``uuid4().hex``); unique per run.
        scores: dicts with ``query`` (non-empty str), ``score`` and ``expected`` (floats in [0, 1]) and
            optionally ``top_doc_id`` (str).
        generation: the index generation searched.
        measured_at: aware datetime of the run; None = now.

    Returns:
        The number of rows written.

    Raises:
        InvalidRecord: empty run id or query, a score outside [0, 1], a query twice, or a naive time.
    """
    if not run_id:
        raise InvalidRecord("run_id must be a non-empty string")
    moment = utc_iso(measured_at, field="measured_at")
    records, seen = [], set()
    for item in scores:
        query = str(item.get("query") or "")
        if not query or query in seen:
            raise InvalidRecord(f"each gap score needs a distinct non-empty query, got {query!r}")
        seen.add(query)
        values = [float(item["score"]), float(item["expected"])]
        if not all(0.0 <= v <= 1.0 for v in values):
            raise InvalidRecord(f"gap score and expected must be in [0, 1], got {values} for {query!r}")
        records.append(dict(zip(COLUMNS, (run_id, query, *values, str(item.get("top_doc_id") or ""),
                                          generation, moment))))
    if records:
        conn.execute(schema.gap_scores.insert(), records)
    return len(records)


def fetch_last_scores(conn: Connection, before: datetime | None = None) -> dict[str, dict[str, Any]]:
    """Each query's most recent score, optionally only among runs measured before ``before``.

    Returns:
        query → row dict (the COLUMNS); {} when nothing was stored.
    """
    where, params = "", {}
    if before is not None:
        where, params = "WHERE measured_at < :before", {"before": utc_iso(before, field="before")}
    sql = f"""
        SELECT {', '.join(COLUMNS)} FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY query ORDER BY measured_at DESC, run_id DESC) AS n
            FROM gap_scores {where}
        ) AS ranked WHERE n = 1
    """
    return {row["query"]: row for row in rows(conn, sql, **params)}


def fetch_history(conn: Connection, query: str, limit: int = 50) -> list[dict[str, Any]]:
    """The latest ``limit`` scores of one query, newest first."""
    return rows(
        conn,
        f"SELECT {', '.join(COLUMNS)} FROM gap_scores WHERE query = :query "
        "ORDER BY measured_at DESC, run_id DESC LIMIT :limit",
        query=query, limit=limit,
    )
