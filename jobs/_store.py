"""SQL plumbing shared by the alerting modules: transactions on a `FeedbackStore`, times, JSON columns.

The feedback store serialises every use of its one connection with a lock and starts writes with
``BEGIN IMMEDIATE`` (notes/monitoring.md: a deferred BEGIN fails under concurrent writers). The alert tables
live in the same file, written from Slack button handlers on the bot's executor threads and from scheduler
jobs, so they must go through the same lock and transactions: `writing` and `reading` use the store's public
transaction API (`FeedbackStore.write` / `FeedbackStore.read`), in this one place.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import sqlite_utils


@contextlib.contextmanager
def writing(store) -> Iterator[sqlite_utils.Database]:
    """A ``BEGIN IMMEDIATE`` transaction on ``store`` (committed on exit, rolled back on error).

    Not re-entrant: never call a `FeedbackStore` method or another `writing`/`reading` inside it.

    Raises:
        StoreUnavailable: SQLite failed (translated by the store).
    """
    with store.write() as db:  # the store's lock + BEGIN IMMEDIATE + error translation
        yield db


@contextlib.contextmanager
def reading(store) -> Iterator[sqlite_utils.Database]:
    """Holds ``store``'s lock for a group of reads, so no other thread's half-done transaction is seen."""
    with store.read() as db:
        yield db


def iso(moment: datetime) -> str:
    """Aware datetime → the store's sortable UTC text (``2024-05-01T12:00:00.000000+00:00``).

    Raises:
        ValueError: ``moment`` is naive.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("times must be timezone-aware, e.g. datetime.now(timezone.utc)")
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def parse_iso(text: str | None) -> datetime | None:
    """The inverse of `iso`; None stays None."""
    return None if text is None else datetime.fromisoformat(text)


def utcnow() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(timezone.utc)


def dumps(value: Any) -> str:
    """JSON text for a column (non-ASCII kept, NaN rejected, keys sorted so equal dicts give equal text)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True, default=str)


def rows(db: sqlite_utils.Database, sql: str, params: list | tuple | dict = ()) -> list[dict[str, Any]]:
    """All rows of a SELECT as dicts; ``params`` positional (``?``) or named (``:name``)."""
    cursor = db.execute(sql, params if isinstance(params, dict) else list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


class AlertingError(Exception):
    """Base class of the errors raised by the alert layer (re-exported by `jobs.alerts`)."""


class UnknownAlert(AlertingError, LookupError):
    """No alert has this fingerprint (or fingerprint prefix); ``minerva alerts --all`` lists them."""


class AmbiguousFingerprint(AlertingError, LookupError):
    """A fingerprint prefix matches several alerts; give more characters."""


def resolve_in(db: sqlite_utils.Database, text: str) -> str:
    """The full fingerprint for an exact one or a unique prefix (>= 4 hex characters), as ``git`` does.

    Raises:
        UnknownAlert: too short, or nothing matches.
        AmbiguousFingerprint: the prefix matches several alerts.
    """
    text = (text or "").strip().lower()
    if len(text) < 4 or any(c not in "0123456789abcdef" for c in text):
        raise UnknownAlert(f"{text!r} is not a fingerprint: give at least 4 of its hex digits (see `minerva alerts --all`)")
    found = [r["fingerprint"] for r in rows(db, "SELECT fingerprint FROM alerts WHERE fingerprint LIKE ? LIMIT 2", [text + "%"])]
    if not found:
        raise UnknownAlert(f"no alert with fingerprint {text!r} (see `minerva alerts --all`)")
    if len(found) > 1:
        raise AmbiguousFingerprint(f"fingerprint prefix {text!r} matches several alerts; give more characters")
    return found[0]


def log_event(db: sqlite_utils.Database, fingerprint: str, at: str, kind: str, detail: dict) -> None:
    """Append a row to ``alert_events`` (state changes, acks, silences)."""
    db.execute("INSERT INTO alert_events (fingerprint, at, kind, detail) VALUES (?, ?, ?, ?)",
               [fingerprint, at, kind, dumps(detail)])
