"""Timestamps as the store writes them: ISO-8601 text in UTC.

One fixed format (microseconds, ``+00:00`` offset) keeps the text sortable, so ``created_at >= ?`` and
``ORDER BY created_at`` compare correctly as plain strings. This module is the one place that formats
(`utc_iso`) and parses (`parse_utc`) it; `jobs` and `bot` use these too.
"""

from __future__ import annotations

from datetime import datetime, timezone

from feedback.errors import InvalidRecord


def utc_iso(moment: datetime | None, *, field: str = "time") -> str:
    """Formats a timezone-aware datetime (or now, when None) as UTC ISO-8601 text.

    Args:
        moment: an aware datetime in any zone, or None for the current time.
        field: the argument's name, used in the error message.

    Returns:
        Text like ``"2024-05-01T12:00:00.000000+00:00"`` (always 32 characters).

    Raises:
        InvalidRecord: `moment` is naive; its zone is unknown, and guessing local time vs UTC would
            shift rows by hours in the jobs' time windows.
    """
    if moment is None:
        moment = datetime.now(timezone.utc)
    elif moment.tzinfo is None or moment.utcoffset() is None:
        raise InvalidRecord(f"{field} must be timezone-aware, e.g. datetime.now(timezone.utc)")
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def parse_utc(text: str | None) -> datetime | None:
    """The inverse of `utc_iso`: stored text → aware datetime (text without an offset is taken as UTC).

    None (a NULL column) and "" (an index record without the date) give None.
    """
    if not text:
        return None
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def utcnow() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(timezone.utc)
