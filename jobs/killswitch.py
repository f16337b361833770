"""The kill switch: take a collection out of search when a critical alert says it is harmful (a permission
leak, a wrong-answer spike), and put it back by hand. Every change is a row in ``kill_switch``; the latest
row per collection is its current state, so the table is also the log.

Retrieval asks `disabled_collections` and filters those collections out::

    blocked = disabled_collections(store)         # {"pricing"}
    allowed = {s.name for s in settings.sources} - blocked

An alert turns the switch on (rules with ``kill_switch: true`` in config/alerts.yaml); only a person turns
it off (``minerva killswitch enable COLLECTION``): re-enabling automatically on resolution would flap.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import structlog

from jobs._store import iso, parse_iso, reading, rows, writing

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class SwitchState:
    """A collection's current kill-switch state and the change that set it."""

    collection: str
    disabled: bool
    reason: str
    fingerprint: str | None
    changed_by: str
    changed_at: datetime


def disabled_collections(store) -> set[str]:
    """Collections currently taken out of search (empty when nothing was ever switched off).

    Raises:
        StoreUnavailable: SQLite failed.
    """
    with reading(store) as db:
        return {s.collection for s in _states(db) if s.disabled}


def list_states(store) -> list[SwitchState]:
    """The current state of every collection that was ever switched, by name."""
    with reading(store) as db:
        return sorted(_states(db), key=lambda s: s.collection)


def disable(store, collection: str, *, reason: str, changed_by: str, now: datetime) -> bool:
    """Take ``collection`` out of search. Returns False when it already was (nothing is written)."""
    with writing(store) as db:
        return disable_in(db, collection, reason=reason, fingerprint=None, changed_by=changed_by, now=now)


def enable(store, collection: str, *, reason: str, changed_by: str, now: datetime) -> bool:
    """Put ``collection`` back into search. Returns False when it was not disabled."""
    with writing(store) as db:
        return _change(db, collection, disabled=False, reason=reason, fingerprint=None, changed_by=changed_by, now=now)


def disable_in(db, collection: str, *, reason: str, fingerprint: str | None, changed_by: str, now: datetime) -> bool:
    """`disable` inside a transaction the caller holds (the alert evaluation's)."""
    return _change(db, collection, disabled=True, reason=reason, fingerprint=fingerprint, changed_by=changed_by, now=now)


def _change(db, collection: str, *, disabled: bool, reason: str, fingerprint: str | None, changed_by: str,
            now: datetime) -> bool:
    if not collection:
        raise ValueError("collection must be a non-empty name")
    latest = rows(db, "SELECT disabled FROM kill_switch WHERE collection = ? ORDER BY change_id DESC LIMIT 1", [collection])
    if bool(latest and latest[0]["disabled"]) == disabled:
        return False
    db.execute(
        "INSERT INTO kill_switch (collection, disabled, reason, fingerprint, changed_by, changed_at) VALUES (?, ?, ?, ?, ?, ?)",
        [collection, int(disabled), reason[:500], fingerprint, changed_by, iso(now)],
    )
    log.warning("killswitch.changed", collection=collection, disabled=disabled, reason=reason[:200],
                by=changed_by, fingerprint=fingerprint)
    return True


def _states(db) -> list[SwitchState]:
    latest = rows(db, "SELECT k.* FROM kill_switch k JOIN (SELECT collection, max(change_id) AS change_id "
                      "FROM kill_switch GROUP BY collection) m ON m.change_id = k.change_id")
    return [SwitchState(r["collection"], bool(r["disabled"]), r["reason"], r["fingerprint"], r["changed_by"],
                        parse_iso(r["changed_at"])) for r in latest]
