"""Silences: mute one alert's notifications until an expiry (``minerva silence FP --hours 24``, the digest's
"Silence 24h" button). A silence never changes the alert's state; evaluation goes on underneath, so the
alert is notified normally once the silence expires if it is still firing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from feedback import alerting as alert_store

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
        StoreUnavailable: the database failed; nothing was stored.
    """
    if not 0 < hours <= MAX_HOURS:
        raise ValueError(f"hours must be > 0 and <= {MAX_HOURS}; got {hours:g}")
    expires = now + timedelta(hours=hours)
    with store.transaction() as conn:
        fp = alert_store.resolve_fingerprint(conn, fingerprint_or_prefix)
        silence_id = alert_store.insert_silence(conn, fp, created_at=now, expires_at=expires, created_by=by,
                                                comment=comment)
    return Silence(silence_id, fp, now, expires, by, comment)


def remove_silences(store, fingerprint_or_prefix: str, *, by: str, now: datetime) -> int:
    """End every active silence of an alert now; returns how many were active (>= 0).

    Raises:
        UnknownAlert, AmbiguousFingerprint: see `jobs.alerts.resolve_fingerprint`.
    """
    with store.transaction() as conn:
        fp = alert_store.resolve_fingerprint(conn, fingerprint_or_prefix)
        return alert_store.end_silences(conn, fp, by=by, at=now)


def active_in(conn, now: datetime) -> dict[str, datetime]:
    """Fingerprint → latest expiry of the silences active at ``now``, inside the caller's transaction
    (a connection from ``store.snapshot()`` or ``store.transaction()``)."""
    return alert_store.active_silences(conn, at=now)
