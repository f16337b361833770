"""The kill switch: take harmful content out of search, and put it back by hand (issue 11 item 3).

Two levels, each a log table whose latest row per subject is its current state:

- **documents** (``quarantine``): a person takes a page out of search, from the "Take out of search" button of a
  wrong-answer spike or bad-document alert (the page's owner or an admin, `jobs.page_actions`) or with
  ``minerva killswitch quarantine DOC_ID``; users' reports alone never do (issue 26: five reports from a few
  users took two correct pages out). It stays out until a person releases it (the announcement's "Put back in
  search" button, ``minerva killswitch release DOC_ID``).
- **collections** (``kill_switch``): only an owner or admin disables a collection — ``minerva killswitch
  disable COLLECTION`` — or a critical signal users cannot cause (a permission leak: rules with
  ``kill_switch_scope: collection`` in config/alerts.yaml).

Every disable is announced: `announcement` builds a critical ``kill_switch_engaged`` finding (what was
taken out, why, and the one command that puts it back), which the alert layer sends to the alert channel
at once like any critical alert. Retrieval asks `disabled_collections` and `quarantined_documents` (the bot
passes both to `knowledge.KnowledgeBase`)::

    kb = KnowledgeBase(settings, home, disabled_collections=lambda: disabled_collections(store),
                       quarantined_documents=lambda: quarantined_documents(store))

Re-enabling automatically on resolution would flap, so only a person turns either switch off. The two
change logs and their queries belong to `feedback.switches`; this module keeps the policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import structlog

from feedback import switches
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
        StoreUnavailable: the database failed.
    """
    with store.snapshot() as conn:
        return {s.collection for s in _states(conn) if s.disabled}


def list_states(store) -> list[SwitchState]:
    """The current state of every collection that was ever switched, by name."""
    with store.snapshot() as conn:
        return sorted(_states(conn), key=lambda s: s.collection)


def disable(store, collection: str, *, reason: str, changed_by: str, now: datetime) -> bool:
    """Take ``collection`` out of search. Returns False when it already was (nothing is written)."""
    with store.transaction() as conn:
        return disable_in(conn, collection, reason=reason, fingerprint=None, changed_by=changed_by, now=now)


def enable(store, collection: str, *, reason: str, changed_by: str, now: datetime) -> bool:
    """Put ``collection`` back into search. Returns False when it was not disabled."""
    with store.transaction() as conn:
        return _change(conn, collection, disabled=False, reason=reason, fingerprint=None, changed_by=changed_by,
                       now=now)


def disable_in(conn, collection: str, *, reason: str, fingerprint: str | None, changed_by: str, now: datetime) -> bool:
    """`disable` inside a transaction the caller holds (a connection from the alert evaluation's
    ``store.transaction()``)."""
    return _change(conn, collection, disabled=True, reason=reason, fingerprint=fingerprint, changed_by=changed_by, now=now)


def _change(conn, collection: str, *, disabled: bool, reason: str, fingerprint: str | None, changed_by: str,
            now: datetime) -> bool:
    # an empty name raises InvalidRecord (a ValueError) in feedback.switches
    if not switches.set_collection_disabled(conn, collection, disabled, reason=reason, fingerprint=fingerprint,
                                            changed_by=changed_by, at=now):
        return False
    log.warning("killswitch.changed", collection=collection, disabled=disabled, reason=reason[:200],
                by=changed_by, fingerprint=fingerprint)
    return True


def _states(conn) -> list[SwitchState]:
    return [SwitchState(**row) for row in switches.collection_states(conn)]


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
        StoreUnavailable: the database failed.
    """
    with store.snapshot() as conn:
        return {s.doc_id for s in _quarantine_states(conn) if s.quarantined}


def list_quarantine(store) -> list[QuarantineState]:
    """The current state of every document that was ever quarantined, by doc id."""
    with store.snapshot() as conn:
        return sorted(_quarantine_states(conn), key=lambda s: s.doc_id)


def quarantine(store, doc_id: str, *, reason: str, changed_by: str, now: datetime) -> bool:
    """Take one document out of search. Returns False when it already was (nothing is written)."""
    with store.transaction() as conn:
        return quarantine_in(conn, doc_id, reason=reason, fingerprint=None, changed_by=changed_by, now=now)


def release(store, doc_id: str, *, reason: str, changed_by: str, now: datetime) -> bool:
    """Put a quarantined document back into search. Returns False when it was not quarantined."""
    with store.transaction() as conn:
        return _quarantine_change(conn, doc_id, False, reason=reason, fingerprint=None, changed_by=changed_by,
                                  now=now)


def quarantine_in(conn, doc_id: str, *, reason: str, fingerprint: str | None, changed_by: str, now: datetime) -> bool:
    """`quarantine` inside a transaction the caller holds (a connection from the alert evaluation's
    ``store.transaction()``)."""
    return _quarantine_change(conn, doc_id, True, reason=reason, fingerprint=fingerprint, changed_by=changed_by, now=now)


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


def _quarantine_change(conn, doc_id: str, quarantined: bool, *, reason: str, fingerprint: str | None,
                       changed_by: str, now: datetime) -> bool:
    # a doc id that is not "collection:path" raises InvalidRecord (a ValueError) in feedback.switches
    if not switches.set_document_quarantined(conn, doc_id, quarantined, reason=reason, fingerprint=fingerprint,
                                             changed_by=changed_by, at=now):
        return False
    log.warning("killswitch.quarantine", doc_id=doc_id, quarantined=quarantined, reason=reason[:200],
                by=changed_by, fingerprint=fingerprint)
    return True


def _quarantine_states(conn) -> list[QuarantineState]:
    return [QuarantineState(**row) for row in switches.document_states(conn)]
