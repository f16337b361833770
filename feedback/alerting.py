"""The alert state's tables and every query over them: alerts, their event log, notifications and silences.

`jobs.alerts` keeps the logic (fingerprints, the pending → firing → resolved state machine, routing, wording)
and calls these functions with a connection from ``store.transaction()`` (writes) or ``store.snapshot()``
(reads), so one evaluation is one transaction::

    with store.transaction() as conn:
        lock_alert_state(conn)
        current = unresolved_alerts(conn, source="bad_docs")
        ...
        save_alert(conn, row)
        log_event(conn, row["fingerprint"], now, "firing", {"from": "pending"})

Rows come back decoded: times are aware UTC datetimes (stored as `feedback._time.utc_iso` text), JSON
columns (``labels``, ``annotations``, ``detail``) are dicts. Writers of the alert state that read before
they write take `lock_alert_state` first, so two replicas (or a Slack button and a scheduled job) never
write a stale row over each other's change.

Errors: `UnknownAlert` / `AmbiguousFingerprint` (both `AlertingError`, a `FeedbackError`) when a fingerprint
prefix matches no alert or several; database failures surface as `StoreUnavailable` from the store's
transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from feedback import schema
from feedback._time import parse_utc, utc_iso
from feedback.db import first, is_postgres, rows, run
from feedback.errors import FeedbackError, InvalidRecord

#: Key of the PostgreSQL advisory lock that serialises writers of the alert state ("alerts" in ASCII).
ALERT_STATE_LOCK_KEY = 0x616C65727473
#: Fingerprints per ``IN :fps`` query (a bound on the statement's parameters on every backend).
FINGERPRINTS_PER_QUERY = 500
#: Columns of an alert row (`feedback.schema.alerts`), in table order.
ALERT_COLUMNS = tuple(schema.alerts.c.keys())
#: The alert columns holding times (aware datetimes in rows, UTC ISO text in the table).
ALERT_TIME_COLUMNS = ("first_seen_at", "started_at", "resolved_at", "last_evaluated_at", "last_notified_at",
                      "acked_at")
#: The alert columns holding JSON objects (dicts in rows, JSON text in the table).
ALERT_JSON_COLUMNS = ("labels", "annotations")


class AlertingError(FeedbackError):
    """Base class of the errors about alerts (re-exported by `jobs.alerts`)."""


class UnknownAlert(AlertingError, LookupError):
    """No alert has this fingerprint (or fingerprint prefix); ``minerva alerts --all`` lists them."""


class AmbiguousFingerprint(AlertingError, LookupError):
    """A fingerprint prefix matches several alerts; give more characters."""


def json_text(value: Any) -> str:
    """JSON text for a column: non-ASCII kept, NaN rejected, keys sorted (equal dicts give equal text)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True, default=str)


def lock_alert_state(conn: Connection) -> None:
    """Serialises the writers of the alert state (alerts, notifications, silences, kill switch, quarantine).

    Call it first in a ``store.transaction()`` that reads alert rows and writes them back. On PostgreSQL it
    takes a transaction-scoped advisory lock (re-entrant, released at commit/rollback), because READ
    COMMITTED alone would let a replica's evaluation overwrite an acknowledgement made in between. On
    SQLite it does nothing: ``BEGIN IMMEDIATE`` already holds the file's one write lock.
    """
    if is_postgres(conn):  # dialect branch: SQLite has no advisory locks and needs none
        run(conn, "SELECT pg_advisory_xact_lock(:key)", key=ALERT_STATE_LOCK_KEY)


# --- alerts --------------------------------------------------------------------------------------------


def resolve_fingerprint(conn: Connection, text: str) -> str:
    """The full fingerprint for an exact one or a unique prefix (>= 4 hex characters), as ``git`` does.

    Raises:
        UnknownAlert: too short, not hex, or nothing matches.
        AmbiguousFingerprint: the prefix matches several alerts.
    """
    text = (text or "").strip().lower()
    if len(text) < 4 or any(c not in "0123456789abcdef" for c in text):
        raise UnknownAlert(f"{text!r} is not a fingerprint: give at least 4 of its hex digits "
                           "(see `minerva alerts --all`)")
    # Only hex digits reach LIKE (checked above), so no wildcard can be smuggled in; stored fingerprints
    # are lower-case, so PostgreSQL's case-sensitive LIKE matches as SQLite's does.
    found = [r["fingerprint"] for r in rows(
        conn, "SELECT fingerprint FROM alerts WHERE fingerprint LIKE :prefix ORDER BY fingerprint LIMIT 2",
        prefix=text + "%")]
    if not found:
        raise UnknownAlert(f"no alert with fingerprint {text!r} (see `minerva alerts --all`)")
    if len(found) > 1:
        raise AmbiguousFingerprint(f"fingerprint prefix {text!r} matches several alerts; give more characters")
    return found[0]


def fetch_alert(conn: Connection, fingerprint: str) -> dict[str, Any] | None:
    """The alert row with this exact fingerprint (decoded, see the module docstring), or None."""
    row = first(conn, "SELECT * FROM alerts WHERE fingerprint = :fp", fp=fingerprint)
    return None if row is None else _decode_alert(row)


def unresolved_alerts(conn: Connection, *, source: str | None = None) -> list[dict[str, Any]]:
    """Alerts in state "pending" or "firing" (only those raised by ``source`` when given), by fingerprint."""
    where, params = ("state != 'resolved' AND source = :source", {"source": source}) if source is not None \
        else ("state != 'resolved'", {})
    return [_decode_alert(r) for r in rows(conn, f"SELECT * FROM alerts WHERE {where} ORDER BY fingerprint",
                                           **params)]


def alerts_by_fingerprint(conn: Connection, fingerprints: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Fingerprint → alert row for those of ``fingerprints`` that exist (any state)."""
    fps = list(dict.fromkeys(fingerprints))
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(fps), FINGERPRINTS_PER_QUERY):
        chunk = fps[start:start + FINGERPRINTS_PER_QUERY]
        for row in rows(conn, "SELECT * FROM alerts WHERE fingerprint IN :fps", fps=chunk):
            found[row["fingerprint"]] = _decode_alert(row)
    return found


def alerts_in_states(conn: Connection, states: Iterable[str]) -> list[dict[str, Any]]:
    """Alerts whose state is one of ``states`` ("pending", "firing", "resolved"), by fingerprint; [] for none."""
    states = list(states)
    if not states:
        return []
    return [_decode_alert(r) for r in rows(
        conn, "SELECT * FROM alerts WHERE state IN :states ORDER BY fingerprint", states=states)]


def save_alert(conn: Connection, row: dict[str, Any]) -> None:
    """Inserts or replaces one alert row (every column of `ALERT_COLUMNS`, decoded form).

    Raises:
        InvalidRecord: a column is missing or unknown, or a time is naive.
    """
    if set(row) != set(ALERT_COLUMNS):
        missing, extra = set(ALERT_COLUMNS) - set(row), set(row) - set(ALERT_COLUMNS)
        raise InvalidRecord(f"an alert row needs exactly the alerts columns; missing {sorted(missing)}, "
                            f"unknown {sorted(extra)}")
    values = dict(row)
    for key in ALERT_TIME_COLUMNS:
        values[key] = None if values[key] is None else utc_iso(values[key], field=key)
    for key in ALERT_JSON_COLUMNS:
        values[key] = json_text(values[key])
    columns = ", ".join(ALERT_COLUMNS)
    marks = ", ".join(f":{c}" for c in ALERT_COLUMNS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in ALERT_COLUMNS if c != "fingerprint")
    run(conn, f"INSERT INTO alerts ({columns}) VALUES ({marks}) "
              f"ON CONFLICT (fingerprint) DO UPDATE SET {updates}", **values)


def acknowledge(conn: Connection, fingerprint: str, *, by: str, at: datetime) -> bool:
    """Marks the alert acknowledged by ``by`` at ``at`` unless it already is (the first ack is kept).

    Returns:
        True when this call acknowledged it (an "acked" event is logged), False when it already was.
    """
    lock_alert_state(conn)
    changed = run(conn, "UPDATE alerts SET acked_at = :at, acked_by = :by "
                        "WHERE fingerprint = :fp AND acked_at IS NULL",
                  at=utc_iso(at, field="at"), by=by, fp=fingerprint).rowcount == 1
    if changed:
        log_event(conn, fingerprint, at, "acked", {"by": by})
    return changed


def firing_counts(conn: Connection) -> dict[str, int]:
    """Firing alerts per severity that has any, e.g. ``{"critical": 1, "warning": 4}``."""
    return {r["severity"]: int(r["n"]) for r in rows(
        conn, "SELECT severity, count(*) AS n FROM alerts WHERE state = 'firing' GROUP BY severity")}


def resolved_counts(conn: Connection, *, since: datetime) -> dict[str, int]:
    """Alerts resolved at or after ``since`` per severity that has any, e.g. ``{"warning": 2}``."""
    return {r["severity"]: int(r["n"]) for r in rows(
        conn, "SELECT severity, count(*) AS n FROM alerts WHERE state = 'resolved' AND resolved_at >= :since "
              "GROUP BY severity", since=utc_iso(since, field="since"))}


# --- the event log -------------------------------------------------------------------------------------


def log_event(conn: Connection, fingerprint: str, at: datetime, kind: str, detail: dict[str, Any]) -> None:
    """Appends one row to the alert's event log (state changes, acks, silences, kill-switch actions).

    Args:
        kind: e.g. "firing", "resolved", "acked", "silenced", "kill_switch_quarantined".
        detail: a JSON-ready dict kept with it.
    """
    run(conn, "INSERT INTO alert_events (fingerprint, at, kind, detail) VALUES (:fp, :at, :kind, :detail)",
        fp=fingerprint, at=utc_iso(at, field="at"), kind=kind, detail=json_text(detail))


def alert_events(conn: Connection, fingerprint: str | None = None) -> list[dict[str, Any]]:
    """The event log, oldest first (one alert's when ``fingerprint`` is given).

    Returns:
        ``[{"event_id": int, "fingerprint": str, "at": datetime, "kind": str, "detail": dict}, ...]``.
    """
    where, params = ("WHERE fingerprint = :fp", {"fp": fingerprint}) if fingerprint is not None else ("", {})
    found = rows(conn, f"SELECT * FROM alert_events {where} ORDER BY event_id", **params)
    return [dict(r, at=parse_utc(r["at"]), detail=json.loads(r["detail"])) for r in found]


# --- notifications -------------------------------------------------------------------------------------


def record_notification(conn: Connection, fingerprint: str, *, kind: str, route: str, channel: str,
                        ts: str | None, at: datetime, error: str | None = None) -> None:
    """Logs one Slack post of an alert; a successful one (``error`` None) also marks the alert notified
    (``last_notified_at``, ``notified_severity`` = its severity now, ``notify_count`` + 1).

    Args:
        kind: "firing", "escalated", "reminder" or "digest".
        route: "now", "daily" or "weekly".
        ts: the Slack message ts, or None when the post failed.
        error: the Slack error code of a failed post, e.g. "not_in_channel".
    """
    lock_alert_state(conn)
    stamp = utc_iso(at, field="at")
    run(conn, "INSERT INTO alert_notifications (fingerprint, kind, route, channel, ts, sent_at, error) "
              "VALUES (:fp, :kind, :route, :channel, :ts, :at, :error)",
        fp=fingerprint, kind=kind, route=route, channel=channel, ts=ts, at=stamp, error=error)
    if error is None:
        run(conn, "UPDATE alerts SET last_notified_at = :at, notified_severity = severity, "
                  "notify_count = notify_count + 1 WHERE fingerprint = :fp", at=stamp, fp=fingerprint)


def failed_deliveries(conn: Connection, *, route: str) -> list[str]:
    """Fingerprints of firing alerts whose latest post on ``route`` failed, oldest post first."""
    found = rows(conn, "SELECT n.fingerprint FROM alert_notifications n JOIN ("
                       "  SELECT fingerprint, max(notification_id) AS last FROM alert_notifications"
                       "  WHERE route = :route GROUP BY fingerprint) m ON m.last = n.notification_id "
                       "JOIN alerts a ON a.fingerprint = n.fingerprint "
                       "WHERE n.error IS NOT NULL AND a.state = 'firing' ORDER BY n.notification_id", route=route)
    return [r["fingerprint"] for r in found]


def failure_streak(conn: Connection, *, route: str) -> tuple[int, datetime | None]:
    """How many posting attempts on ``route`` failed in a row up to the latest one (an attempt: the posts logged
    at one ``sent_at``; it failed when any of its posts did), and when the latest failed one was; ``(0, None)``
    when the latest attempt succeeded or there was none."""
    found = rows(conn, "SELECT sent_at, max(CASE WHEN error IS NULL THEN 0 ELSE 1 END) AS failed "
                       "FROM alert_notifications WHERE route = :route GROUP BY sent_at ORDER BY sent_at DESC LIMIT 64",
                 route=route)
    streak = 0
    for r in found:
        if not r["failed"]:
            break
        streak += 1
    return streak, (parse_utc(found[0]["sent_at"]) if streak else None)


def notifications(conn: Connection, fingerprint: str | None = None) -> list[dict[str, Any]]:
    """The notification log, oldest first (one alert's when ``fingerprint`` is given).

    Returns:
        ``[{"notification_id": int, "fingerprint", "kind", "route", "channel": str, "ts": str | None,
        "sent_at": datetime, "error": str | None}, ...]``.
    """
    where, params = ("WHERE fingerprint = :fp", {"fp": fingerprint}) if fingerprint is not None else ("", {})
    found = rows(conn, f"SELECT * FROM alert_notifications {where} ORDER BY notification_id", **params)
    return [dict(r, sent_at=parse_utc(r["sent_at"])) for r in found]


# --- silences ------------------------------------------------------------------------------------------


def insert_silence(conn: Connection, fingerprint: str, *, created_at: datetime, expires_at: datetime,
                   created_by: str, comment: str = "") -> int:
    """Stores a silence of ``fingerprint`` from ``created_at`` until ``expires_at``; returns its silence_id.

    A "silenced" event is logged with it.
    """
    lock_alert_state(conn)
    silence_id = run(conn, "INSERT INTO silences (fingerprint, created_at, expires_at, created_by, comment) "
                           "VALUES (:fp, :created_at, :expires_at, :by, :comment) RETURNING silence_id",
                     fp=fingerprint, created_at=utc_iso(created_at, field="created_at"),
                     expires_at=utc_iso(expires_at, field="expires_at"), by=created_by, comment=comment).scalar_one()
    log_event(conn, fingerprint, created_at, "silenced",
              {"by": created_by, "until": utc_iso(expires_at, field="expires_at"), "comment": comment})
    return int(silence_id)


def end_silences(conn: Connection, fingerprint: str, *, by: str, at: datetime) -> int:
    """Ends every silence of ``fingerprint`` still active at ``at`` (its expiry becomes ``at``).

    Returns:
        How many were active (>= 0); an "unsilenced" event is logged when any was.
    """
    lock_alert_state(conn)
    stamp = utc_iso(at, field="at")
    ended = run(conn, "UPDATE silences SET expires_at = :at WHERE fingerprint = :fp AND expires_at > :at",
                at=stamp, fp=fingerprint).rowcount
    if ended:
        log_event(conn, fingerprint, at, "unsilenced", {"by": by})
    return ended


def active_silences(conn: Connection, *, at: datetime) -> dict[str, datetime]:
    """Fingerprint → the latest expiry among its silences active at ``at`` (aware UTC datetimes)."""
    found = rows(conn, "SELECT fingerprint, max(expires_at) AS until FROM silences WHERE expires_at > :at "
                       "GROUP BY fingerprint", at=utc_iso(at, field="at"))
    return {r["fingerprint"]: parse_utc(r["until"]) for r in found}


def silences(conn: Connection) -> list[dict[str, Any]]:
    """Every silence ever stored, oldest first: ``{"silence_id", "fingerprint", "created_at": datetime,
    "expires_at": datetime, "created_by", "comment"}``."""
    return [dict(r, created_at=parse_utc(r["created_at"]), expires_at=parse_utc(r["expires_at"]))
            for r in rows(conn, "SELECT * FROM silences ORDER BY silence_id")]


def _decode_alert(row: dict[str, Any]) -> dict[str, Any]:
    data = dict(row)
    for key in ALERT_TIME_COLUMNS:
        data[key] = parse_utc(data[key])
    for key in ALERT_JSON_COLUMNS:
        data[key] = json.loads(data[key] or "{}")
    return data
