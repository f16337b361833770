"""A person takes pages out of search or puts them back: from an alert's button in Slack or from the CLI.

Issue 26, "no page leaves search without evidence and a person": users' reports and 👎 only *propose* a
quarantine. A ``wrong_answer_spike`` (five reports in a day from a few users can be aimed at a correct page)
and a ``bad_document`` alert carry a "Take out of search" button; the page's owner or an admin
(``slack.admins``) clicks it, or runs ``minerva killswitch quarantine DOC_ID``. The announcement of a
quarantined page (``kill_switch_engaged``) carries "Put back in search". Only signals users cannot cause (a
permission leak) still act on their own (`jobs.alerts`, ``kill_switch`` rules in config/alerts.yaml).
"""

from __future__ import annotations

from datetime import datetime

from jobs import alerts, killswitch

#: What an alert's button does to the pages it names.
QUARANTINE, RELEASE = "quarantine", "release"
#: Pages one button takes out at most: a spike's most reported documents (`jobs.signals.bad_docs`).
MAX_PAGES = 3
#: Alerts about pages users judged: they propose a quarantine, a person decides.
PROPOSE_QUARANTINE = frozenset({"wrong_answer_spike", "bad_document"})


def page_action(alert: str, labels: dict, annotations: dict) -> tuple[str, tuple[str, ...]]:
    """What a person may do from an alert: ``(QUARANTINE, doc ids)`` for a spike (its most reported
    documents, at most `MAX_PAGES`) or a bad document; ``(RELEASE, (doc_id,))`` for the announcement of a
    quarantined page; ``("", ())`` otherwise."""
    if alert in PROPOSE_QUARANTINE:
        documents = [str(d) for d in annotations.get("documents") or []] or (
            [str(labels["doc_id"])] if labels.get("doc_id") else [])
        return (QUARANTINE, tuple(documents[:MAX_PAGES])) if documents else ("", ())
    if alert == "kill_switch_engaged" and labels.get("doc_id"):
        return RELEASE, (str(labels["doc_id"]),)
    return "", ()


def take_out(store, config, doc_ids: list[str], *, by: str, reason: str, now: datetime) -> list[str]:
    """Quarantine ``doc_ids`` and announce each one taken out in the alert channel (a critical
    ``kill_switch_engaged`` with the command that puts it back). Returns the ids that were not already out.

    Raises:
        ValueError: a doc id is not "collection:path"."""
    return _each_changed(
        doc_ids, lambda d: killswitch.quarantine(store, d, reason=reason, changed_by=by, now=now),
        lambda d: alerts.announce(store, config, killswitch.announcement(
            what=f"document {d}", subject={"doc_id": d}, why=reason, command=killswitch.release_command(d), by=by),
            now=now))


def put_back(store, config, doc_ids: list[str], *, by: str, reason: str, now: datetime) -> list[str]:
    """Release ``doc_ids`` and resolve their announcements. Returns the ids that were quarantined.

    Raises:
        ValueError: a doc id is not "collection:path"."""
    return _each_changed(doc_ids, lambda d: killswitch.release(store, d, reason=reason, changed_by=by, now=now),
                         lambda d: alerts.resolve_announcement(store, config, {"doc_id": d}, now=now))


def _each_changed(doc_ids: list[str], change, then) -> list[str]:
    """The ids ``change(id)`` changed (it returns False when there was nothing to do), ``then(id)`` run for each."""
    changed = []
    for doc_id in doc_ids:
        if change(doc_id):
            then(doc_id)
            changed.append(doc_id)
    return changed
