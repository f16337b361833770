"""Plumbing shared by the signal jobs: their result type, their config, time windows and a read snapshot.

Signal jobs aggregate in SQLite (GROUP BY) and read through `snapshot`: a connection of their own, in one
read transaction, so every query of a run sees the same data and the bot's connection (and its lock) is
never held for the seconds an aggregate over 100k answers can take. Writes (labels, the review queue) go
through the store's own transactions (`jobs._store.writing`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from config.monitoring import MonitoringConfig, monitoring_config_for
from jobs.findings import Finding, JobContext

#: Key of `JobContext.extra` holding the loaded `MonitoringConfig` (loaded from files when absent).
CONFIG_KEY = "monitoring"
#: Milliseconds a snapshot read waits for a writer's lock (as the store, notes/monitoring.md).
BUSY_TIMEOUT_MS = 10_000
#: Page cache of a snapshot connection, KiB: a job touches the same index pages in several queries.
CACHE_KIB = 64 * 1024


@dataclass
class SignalResult:
    """What one signal check found.

    Attributes:
        status: plain JSON-ready dict for reports and ``--json`` (the signal's figures, even when fine).
        findings: problems for the alert layer.
        candidates: treatment candidates for the review queue (`jobs.review.Candidate`).
    """

    status: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)
    candidates: list[Any] = field(default_factory=list)


def monitoring_config(ctx: JobContext) -> MonitoringConfig:
    """The monitoring config of this run: ``ctx.extra["monitoring"]``, else the files beside the settings."""
    cfg = ctx.extra.get(CONFIG_KEY)
    if cfg is None:
        cfg = ctx.extra[CONFIG_KEY] = monitoring_config_for(ctx.settings)
    return cfg


def iso(moment: datetime) -> str:
    """Aware datetime → the store's sortable UTC text (same format as `feedback._time.utc_iso`)."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("times must be timezone-aware, e.g. datetime.now(timezone.utc)")
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def window(now: datetime, days: float) -> tuple[str, str]:
    """``(since, until)`` as store text for the last ``days`` days before ``now`` (since inclusive)."""
    return iso(now - timedelta(days=days)), iso(now)


def parse_time(text: str | None) -> datetime | None:
    """ISO-8601 text (index records, store rows) → aware datetime (naive text is taken as UTC); None stays None."""
    if not text:
        return None
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


@contextlib.contextmanager
def snapshot(store) -> Iterator[sqlite3.Connection]:
    """A private connection to the store's file inside one read transaction (closed on exit).

    Args:
        store: an open `feedback.FeedbackStore` (its file is already migrated).

    Yields:
        sqlite3.Connection with ``row_factory = sqlite3.Row``; use it for SELECTs only.
    """
    conn = sqlite3.connect(str(store.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB:d}")
        conn.execute("BEGIN")
        yield conn
        conn.execute("COMMIT")
    finally:
        conn.close()


def rows(conn: sqlite3.Connection, sql: str, params: dict | list | tuple = ()) -> list[dict[str, Any]]:
    """All rows of a SELECT as plain dicts."""
    return [dict(r) for r in conn.execute(sql, params)]


def index_documents(ctx: JobContext) -> dict[str, dict] | None:
    """doc_id → document record of the live index generation, or None when there is no index.

    Raises:
        KnowledgeError: the index exists but cannot be loaded (other than "not built yet").
    """
    if ctx.kb is None:
        return None
    from knowledge import IndexNotBuilt

    try:
        return ctx.kb.index().documents
    except IndexNotBuilt:
        return None


def is_active(doc: dict, now: datetime) -> bool:
    """True when a document is served: stage "active" and not past ``expires_at``."""
    if doc.get("stage", "active") != "active":
        return False
    expires = parse_time(doc.get("expires_at"))
    return expires is None or expires > now


def status_of(check):
    """``summarize(ctx) -> dict``: the status of ``check(ctx)`` (a signal's figures, for reports)."""
    def summarize(ctx: JobContext) -> dict[str, Any]:
        return check(ctx).status

    return summarize
