"""The kill switch: take harmful content out of search, and put it back by hand (issue 11 item 3).

Two levels, each a log table whose latest row per subject is its current state:

- **documents** (``quarantine``): a wrong-answer spike quarantines the *documents cited by the reported
  answers* (``wrong_answer_spike`` carries them), never their collection: five reports from a few users on one
  answer can take at most the pages that answer quoted out of search, and only until a person releases them
  (``minerva killswitch release DOC_ID``).
- **collections** (``kill_switch``): only an owner or admin disables a collection — ``minerva killswitch
  disable COLLECTION`` — or a critical signal users cannot cause (a permission leak: rules with
  ``kill_switch_scope: collection`` in config/alerts.yaml).

Every disable is announced: `announcement` builds a critical ``kill_switch_engaged`` finding (what was
taken out, why, and the one command that puts it back), which the alert layer sends to the alert channel
at once like any critical alert. Retrieval asks `disabled_collections` and `quarantined_documents` (the bot
passes both to `knowledge.KnowledgeBase`)::

    kb = KnowledgeBase(settings, home, disabled_collections=lambda: disabled_collections(store),
                       quarantined_documents=lambda: quarantined_documents(store))

Re-enabling automatically on resolution would flap, so only a person turns either switch off. The
``quarantine`` table is created on first use (``CREATE TABLE IF NOT EXISTS``), so older stores need no
migration.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import structlog

from jobs._store import iso, parse_iso, reading, rows, writing
from jobs.findings import Finding

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
    if not _record_change(db, "kill_switch", "collection", "disabled", collection, disabled, reason=reason,
                          fingerprint=fingerprint, changed_by=changed_by, now=now):
        return False
    log.warning("killswitch.changed", collection=collection, disabled=disabled, reason=reason[:200],
                by=changed_by, fingerprint=fingerprint)
    return True


def _record_change(db, table: str, key_column: str, flag_column: str, key: str, flag: bool, *, reason: str,
                   fingerprint: str | None, changed_by: str, now: datetime) -> bool:
    """Append a row setting ``key``'s flag in a switch log table (``kill_switch`` or ``quarantine``).

    Returns False, writing nothing, when the latest row for ``key`` already has that flag (no row counts as off).
    ``table`` and the column names are this module's constants, never user input.
    """
    latest = rows(db, f"SELECT {flag_column} FROM {table} WHERE {key_column} = ? ORDER BY change_id DESC LIMIT 1",
                  [key])
    if bool(latest and latest[0][flag_column]) == flag:
        return False
    db.execute(
        f"INSERT INTO {table} ({key_column}, {flag_column}, reason, fingerprint, changed_by, changed_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [key, int(flag), reason[:500], fingerprint, changed_by, iso(now)],
    )
    return True


def _latest(db, table: str, key_column: str) -> list[dict]:
    """The newest change row per key of a change-log table (``kill_switch`` or ``quarantine``). The names are
    this module's constants, never user input."""
    return rows(db, f"SELECT t.* FROM {table} t JOIN (SELECT {key_column}, max(change_id) AS change_id "
                    f"FROM {table} GROUP BY {key_column}) m ON m.change_id = t.change_id")


def _states(db) -> list[SwitchState]:
    latest = _latest(db, "kill_switch", "collection")
    return [SwitchState(r["collection"], bool(r["disabled"]), r["reason"], r["fingerprint"], r["changed_by"],
                        parse_iso(r["changed_at"])) for r in latest]


_QUARANTINE_DDL = """
    CREATE TABLE IF NOT EXISTS quarantine (
        change_id INTEGER PRIMARY KEY AUTOINCREMENT,
        doc_id TEXT NOT NULL,
        quarantined INTEGER NOT NULL CHECK (quarantined IN (0, 1)),  -- the latest row per doc_id is current
        reason TEXT NOT NULL,
        fingerprint TEXT,                  -- the alert that quarantined it; NULL for a manual change
        changed_by TEXT NOT NULL,          -- "alert", "cli", or a Slack user id
        changed_at TEXT NOT NULL
    )
"""


@dataclass(frozen=True)
class QuarantineState:
    """A document's current quarantine state and the change that set it."""

    doc_id: str
    quarantined: bool
    reason: str
    fingerprint: str | None
    changed_by: str
    changed_at: datetime


def quarantined_documents(store) -> set[str]:
    """Doc ids currently quarantined (left out of search); empty when none ever was.

    Raises:
        StoreUnavailable: SQLite failed.
    """
    with reading(store) as db:
        return {s.doc_id for s in _quarantine_states(db) if s.quarantined}


def list_quarantine(store) -> list[QuarantineState]:
    """The current state of every document that was ever quarantined, by doc id."""
    with reading(store) as db:
        return sorted(_quarantine_states(db), key=lambda s: s.doc_id)


def quarantine(store, doc_id: str, *, reason: str, changed_by: str, now: datetime) -> bool:
    """Take one document out of search. Returns False when it already was (nothing is written)."""
    with writing(store) as db:
        return quarantine_in(db, doc_id, reason=reason, fingerprint=None, changed_by=changed_by, now=now)


def release(store, doc_id: str, *, reason: str, changed_by: str, now: datetime) -> bool:
    """Put a quarantined document back into search. Returns False when it was not quarantined."""
    with writing(store) as db:
        return _quarantine_change(db, doc_id, False, reason=reason, fingerprint=None, changed_by=changed_by, now=now)


def quarantine_in(db, doc_id: str, *, reason: str, fingerprint: str | None, changed_by: str, now: datetime) -> bool:
    """`quarantine` inside a transaction the caller holds (the alert evaluation's)."""
    return _quarantine_change(db, doc_id, True, reason=reason, fingerprint=fingerprint, changed_by=changed_by, now=now)


def announcement(*, what: str, subject: dict[str, str], why: str, command: str, by: str) -> Finding:
    """The critical ``kill_switch_engaged`` finding that announces a disable in the alert channel.

    Args:
        what: human name of what left search, e.g. "collection handbook" or "2 documents: a, b".
        subject: the alert's labels: ``{"collection": name}`` or ``{"doc_id": id}`` (one alert per subject).
        why: the reason (the alert's summary, or the operator's reason).
        command: the one command that puts it back.
        by: who or what disabled it ("alert", "cli", a Slack user id).
    """
    return Finding(
        alert="kill_switch_engaged", severity="critical", labels=dict(subject), value=1.0, threshold=1.0, n=1,
        summary=f"Taken out of search: {what}. Why: {why}. Put it back with `{command}`",
        annotations={"what": what, "why": why, "re_enable": command, "by": by},
    )


def release_command(doc_id: str) -> str:
    """The command that releases a quarantined document."""
    return f"minerva killswitch release {doc_id}"


def enable_command(collection: str) -> str:
    """The command that puts a disabled collection back into search."""
    return f"minerva killswitch enable {collection}"


def _quarantine_change(db, doc_id: str, quarantined: bool, *, reason: str, fingerprint: str | None,
                       changed_by: str, now: datetime) -> bool:
    if ":" not in (doc_id or ""):
        raise ValueError(f"doc_id must be 'collection:path', not {doc_id!r}")
    db.execute(_QUARANTINE_DDL)
    if not _record_change(db, "quarantine", "doc_id", "quarantined", doc_id, quarantined, reason=reason,
                          fingerprint=fingerprint, changed_by=changed_by, now=now):
        return False
    log.warning("killswitch.quarantine", doc_id=doc_id, quarantined=quarantined, reason=reason[:200],
                by=changed_by, fingerprint=fingerprint)
    return True


def _quarantine_states(db) -> list[QuarantineState]:
    exists = rows(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'quarantine'")
    if not exists:
        return []
    latest = _latest(db, "quarantine", "doc_id")
    return [QuarantineState(r["doc_id"], bool(r["quarantined"]), r["reason"], r["fingerprint"], r["changed_by"],
                            parse_iso(r["changed_at"])) for r in latest]
