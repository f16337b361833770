"""Idempotency keys for incoming Slack events.

Slack re-delivers an event when the ack takes longer than 3 s (``X-Slack-Retry-Num``; bolt-python#868).
The bot claims the event id here before any side effect: the INSERT on the `slack_events`
primary key (``ON CONFLICT DO NOTHING``, on SQLite and PostgreSQL alike) is atomic, so exactly one delivery gets True even when retries race each other.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.engine import Connection

from feedback._time import utc_iso
from feedback.db import run
from feedback.errors import InvalidRecord


def insert_event_key(conn: Connection, key: str, seen_at: datetime | None = None) -> bool:
    """Records an event key unless it is already stored.

    Args:
        conn: the open database (inside a transaction; the statement is atomic either way).
        key: Slack ``event_id`` (``"Ev…"``), or another key such as ``"{channel}:{ts}"`` to dedupe an
            ``app_mention`` and a ``message`` event for the same post.
        seen_at: aware datetime; None means now.

    Returns:
        True when this call stored the key (first sighting), False when it was already there.

    Raises:
        InvalidRecord: `key` is empty, or `seen_at` is naive.
    """
    if not key:
        raise InvalidRecord("event key must be a non-empty string")
    return run(
        conn,
        "INSERT INTO slack_events (key, seen_at) VALUES (:key, :seen_at) ON CONFLICT (key) DO NOTHING",
        key=key, seen_at=utc_iso(seen_at, field="seen_at"),
    ).rowcount == 1


def delete_event_keys(conn: Connection, older_than: datetime) -> int:
    """Deletes event keys first seen before `older_than`; Slack stops retrying after minutes.

    Args:
        conn: the open database.
        older_than: aware datetime; keys with ``seen_at < older_than`` are removed.

    Returns:
        Number of keys deleted (>= 0).

    Raises:
        InvalidRecord: `older_than` is naive.
    """
    return run(conn, "DELETE FROM slack_events WHERE seen_at < :older_than",
               older_than=utc_iso(older_than, field="older_than")).rowcount
