"""The kill switch's two change logs and their queries: ``kill_switch`` (collections) and ``quarantine``
(documents). The latest row per subject is its current state; no row counts as "in search".

`jobs.killswitch` keeps the policy (who may switch what, announcements, logging) and calls these with a
connection from ``store.transaction()`` / ``store.snapshot()``. A change reads the subject's latest row and
appends one only when the flag differs, under `feedback.alerting.lock_alert_state`, so two replicas
disabling the same collection at once write one change, and exactly one of them gets True.

Rows come back as dicts with ``changed_at`` an aware UTC datetime and the flag as bool:
``{"collection": "plans", "disabled": True, "reason": str, "fingerprint": str | None, "changed_by": str,
"changed_at": datetime}`` (``doc_id`` / ``quarantined`` for the quarantine).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Table
from sqlalchemy.engine import Connection

from feedback import schema
from feedback._time import parse_utc, utc_iso
from feedback.alerting import lock_alert_state
from feedback.db import first, rows, run
from feedback.errors import InvalidRecord

#: Longest reason kept, in characters.
MAX_REASON_CHARS = 500

#: (table, subject column, flag column) of the two change logs; the only names that reach the SQL text.
_COLLECTIONS = (schema.kill_switch, "collection", "disabled")
_DOCUMENTS = (schema.quarantine, "doc_id", "quarantined")


def set_collection_disabled(conn: Connection, collection: str, disabled: bool, *, reason: str,
                            fingerprint: str | None, changed_by: str, at: datetime) -> bool:
    """Records that ``collection`` is now out of search (``disabled``) or back in.

    Args:
        fingerprint: the alert that made the change; None for a person's.
        changed_by: "alert", "cli" or a Slack user id.

    Returns:
        False, writing nothing, when its current state already is ``disabled``.

    Raises:
        InvalidRecord: empty ``collection`` or a naive ``at``.
    """
    if not collection:
        raise InvalidRecord("collection must be a non-empty name")
    return _record_change(conn, _COLLECTIONS, collection, disabled, reason=reason, fingerprint=fingerprint,
                          changed_by=changed_by, at=at)


def set_document_quarantined(conn: Connection, doc_id: str, quarantined: bool, *, reason: str,
                             fingerprint: str | None, changed_by: str, at: datetime) -> bool:
    """Records that the document ``doc_id`` is now quarantined (out of search) or released.

    Returns:
        False, writing nothing, when its current state already is ``quarantined``.

    Raises:
        InvalidRecord: ``doc_id`` is not "collection:path", or a naive ``at``.
    """
    if ":" not in (doc_id or ""):
        raise InvalidRecord(f"doc_id must be 'collection:path', not {doc_id!r}")
    return _record_change(conn, _DOCUMENTS, doc_id, quarantined, reason=reason, fingerprint=fingerprint,
                          changed_by=changed_by, at=at)


def collection_states(conn: Connection) -> list[dict[str, Any]]:
    """The current state of every collection ever switched, in order of their latest change (see the module
    docstring; callers sort by name in Python, since PostgreSQL's collation may order text unlike SQLite)."""
    return _latest(conn, _COLLECTIONS)


def document_states(conn: Connection) -> list[dict[str, Any]]:
    """The current quarantine state of every document ever quarantined, in order of their latest change."""
    return _latest(conn, _DOCUMENTS)


def collection_changes(conn: Connection) -> list[dict[str, Any]]:
    """Every kill-switch change, oldest first (``change_id`` added to the row shape above)."""
    return _decode(rows(conn, "SELECT * FROM kill_switch ORDER BY change_id"), "disabled")


def document_changes(conn: Connection) -> list[dict[str, Any]]:
    """Every quarantine change, oldest first (``change_id`` added to the row shape above)."""
    return _decode(rows(conn, "SELECT * FROM quarantine ORDER BY change_id"), "quarantined")


def _record_change(conn: Connection, log: tuple[Table, str, str], key: str, flag: bool, *, reason: str,
                   fingerprint: str | None, changed_by: str, at: datetime) -> bool:
    table, key_column, flag_column = log
    stamp = utc_iso(at, field="at")
    lock_alert_state(conn)
    latest = first(conn, f"SELECT {flag_column} AS flag FROM {table.name} WHERE {key_column} = :key "
                         "ORDER BY change_id DESC LIMIT 1", key=key)
    if bool(latest and latest["flag"]) == bool(flag):
        return False
    run(conn, f"INSERT INTO {table.name} ({key_column}, {flag_column}, reason, fingerprint, changed_by, changed_at) "
              "VALUES (:key, :flag, :reason, :fingerprint, :changed_by, :at)",
        key=key, flag=int(bool(flag)), reason=(reason or "")[:MAX_REASON_CHARS], fingerprint=fingerprint,
        changed_by=changed_by, at=stamp)
    return True


def _latest(conn: Connection, log: tuple[Table, str, str]) -> list[dict[str, Any]]:
    table, key_column, flag_column = log
    found = rows(conn, f"SELECT t.* FROM {table.name} t JOIN (SELECT {key_column}, max(change_id) AS change_id "
                       f"FROM {table.name} GROUP BY {key_column}) m ON m.change_id = t.change_id "
                       "ORDER BY t.change_id")
    return [{k: v for k, v in r.items() if k != "change_id"} for r in _decode(found, flag_column)]


def _decode(found: list[dict[str, Any]], flag_column: str) -> list[dict[str, Any]]:
    return [dict(r, **{flag_column: bool(r[flag_column])}, changed_at=parse_utc(r["changed_at"])) for r in found]
