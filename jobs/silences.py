"""Silences: mute one alert's notifications until an expiry (``minerva silence FP --hours 24``, the digest's
"Silence 24h" button). A silence never changes the alert's state; evaluation goes on underneath, so the
alert is notified normally once the silence expires if it is still firing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs._store import iso, log_event, parse_iso, resolve_in, rows, writing

#: The digest button's duration.
BUTTON_HOURS = 24
#: Longest silence accepted, so a typo cannot mute an alert for years.
MAX_HOURS = 24 * 90


@dataclass(frozen=True)
class Silence:
    """One silence: ``fingerprint`` is muted from ``created_at`` until ``expires_at`` (aware UTC)."""

    silence_id: int
    fingerprint: str
    created_at: datetime
    expires_at: datetime
    created_by: str
    comment: str


def add_silence(store, fingerprint_or_prefix: str, *, hours: float, by: str, now: datetime,
                comment: str = "") -> Silence:
    """Silence an alert for ``hours`` from ``now``.

    Args:
        store: the feedback store.
        fingerprint_or_prefix: an alert's fingerprint or a unique prefix (>= 4 characters).
        hours: duration, > 0 and <= MAX_HOURS.
        by: who: a Slack user id or "cli".
        now: aware datetime.
        comment: free text kept with the silence.

    Returns:
        The new silence. Silencing again while silenced adds a new one; the latest expiry counts.

    Raises:
        ValueError: ``hours`` out of range.
        UnknownAlert, AmbiguousFingerprint: see `jobs.alerts.resolve_fingerprint`.
    """
    if not 0 < hours <= MAX_HOURS:
        raise ValueError(f"hours must be > 0 and <= {MAX_HOURS}; got {hours:g}")
    expires = now + timedelta(hours=hours)
    with writing(store) as db:
        fp = resolve_in(db, fingerprint_or_prefix)
        cursor = db.execute(
            "INSERT INTO silences (fingerprint, created_at, expires_at, created_by, comment) VALUES (?, ?, ?, ?, ?)",
            [fp, iso(now), iso(expires), by, comment],
        )
        log_event(db, fp, iso(now), "silenced", {"by": by, "until": iso(expires), "comment": comment})
        return Silence(cursor.lastrowid, fp, now, expires, by, comment)


def remove_silences(store, fingerprint_or_prefix: str, *, by: str, now: datetime) -> int:
    """End every active silence of an alert now; returns how many were active (>= 0).

    Raises:
        UnknownAlert, AmbiguousFingerprint: see `jobs.alerts.resolve_fingerprint`.
    """
    with writing(store) as db:
        fp = resolve_in(db, fingerprint_or_prefix)
        cursor = db.execute("UPDATE silences SET expires_at = ? WHERE fingerprint = ? AND expires_at > ?",
                            [iso(now), fp, iso(now)])
        if cursor.rowcount:
            log_event(db, fp, iso(now), "unsilenced", {"by": by})
        return cursor.rowcount


def active_in(db, now: datetime) -> dict[str, datetime]:
    """Fingerprint → latest expiry of the silences active at ``now`` (run inside `reading`/`writing`)."""
    found = rows(db, "SELECT fingerprint, max(expires_at) AS until FROM silences WHERE expires_at > ? "
                     "GROUP BY fingerprint", [iso(now)])
    return {r["fingerprint"]: parse_iso(r["until"]) for r in found}
