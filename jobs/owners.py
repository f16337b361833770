"""Owners hear about their pages: one direct message per owner per daily digest cycle (issue 11 item 9).

A document's owner is its front matter ``owner`` (`knowledge.sync` stores it in the index record), else its
collection's ``owner`` in the source config (`config.SourceConfig.owner`): a Slack user id (U…/W…) or a user
group id (S…, whose members each get the message). What an owner is told, per page, with the evidence the
finding carries (its annotations: answer ids, sample questions, newer version, both values and dates, …):

- every unresolved alert (pending or firing, not silenced) whose ``doc_id`` label — or ``other_doc``, for a
  contradiction — is the page: bad, stale and cited, outdated and cited, contradicting, …; and a wrong-answer
  spike on the pages its reported answers quoted (`jobs.page_actions.page_action`: the owner decides whether
  the page leaves search);
- the page's ``near_duplicate_of`` (set by the ingest gate, `knowledge.sync`): the pages it repeats.

Once per cycle, each item once: the day (in the schedule's time zone) an owner was last messaged and the items
told (`item_key`) are kept in ``{home}/owner_messages.json``; a second ``daily_digest`` run that day messages
nobody again, a later day tells only what is new or whose figures changed, and an owner whose message could
not be delivered is tried again on the next run. `jobs.runner` calls `due_reports` then
`mark_sent` around the notifier's ``post_direct``; nothing here knows Slack.
"""

from __future__ import annotations

import hashlib
import json
import zoneinfo
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from config import slack_owner_id

from config.alerts import AlertsConfig
from jobs import alerts
from jobs.page_actions import page_action

log = structlog.get_logger(__name__)

STATE_FILE = "owner_messages.json"
#: Alert names that are about Minerva itself, not about a page's content: never sent to owners.
NOT_ABOUT_CONTENT = frozenset({"job_failed", "slack_delivery_failed"})
#: Annotation keys too bulky or internal for a direct message.
_DROPPED_EVIDENCE = frozenset({"interval", "fingerprint"})


@dataclass(frozen=True)
class PageFinding:
    """One finding on one page.

    Attributes:
        doc_id, title, url: the page.
        alert: what was found ("bad_document", "stale_high_citation", "contradiction", "near_duplicate", …).
        severity: "critical", "warning" or "info".
        summary: the finding's sentence.
        evidence: JSON-ready extras (the alert's annotations, or the near-duplicate pages).
    """

    doc_id: str
    title: str
    url: str
    alert: str
    severity: str
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    fingerprint: str = ""  # the alert's, for its buttons ("" for a near-duplicate, which is no alert)


@dataclass(frozen=True)
class OwnerReport:
    """What one owner (user or group id) is told: their pages' findings, grouped by page in reading order."""

    owner: str
    findings: list[PageFinding]

    @property
    def pages(self) -> list[str]:
        return sorted({f.doc_id for f in self.findings})


def source_owners(settings) -> dict[str, str]:
    """Each configured source's default owner (``owner:`` in the config) by collection name, for `owner_of`."""
    return {s.name: s.owner for s in getattr(settings, "sources", []) if getattr(s, "owner", "")}


def owner_of(doc: dict, defaults: dict[str, str]) -> str:
    """The page's owner: front matter ``owner`` when it is a Slack user or user group id (`slack_owner_id`: an
    index built before ingest checked it may hold "general" or "<!channel>"), else its collection's default,
    else ""."""
    return slack_owner_id(doc.get("owner")) or slack_owner_id(defaults.get(doc.get("collection", ""))) or ""


def collect(store, config: AlertsConfig, documents: dict[str, dict], defaults: dict[str, str], *,
            now: datetime) -> list[OwnerReport]:
    """Every owner with at least one finding on an active page they own, owners sorted by id.

    Args:
        store: the feedback store (alerts are read).
        config: the alerting config.
        documents: doc_id → index record (``owner``, ``collection``, ``title``, ``url``, ``stage``,
            ``near_duplicate_of``).
        defaults: collection → default owner (`config.SourceConfig.owner`).
        now: aware time (silences are checked against it).
    """
    by_owner: dict[str, list[PageFinding]] = {}

    def add(doc_id: str, finding: PageFinding) -> None:
        doc = documents.get(doc_id)
        if doc is None or doc.get("stage", "active") != "active":
            return
        owner = owner_of(doc, defaults)
        if owner:
            by_owner.setdefault(owner, []).append(finding)

    for status in alerts.list_alerts(store, config, states=("pending", "firing"), now=now):
        a = status.alert
        if a.alert in NOT_ABOUT_CONTENT or status.silenced_until is not None:
            continue
        evidence = {k: v for k, v in (a.annotations or {}).items() if k not in _DROPPED_EVIDENCE}
        _, proposed = page_action(a.alert, a.labels, a.annotations or {})  # a spike's reported pages too
        pages = [str(a.labels.get(key) or "") for key in ("doc_id", "other_doc")] + list(proposed)
        for doc_id in dict.fromkeys(p for p in pages if p):
            doc = documents.get(doc_id, {})
            add(doc_id, PageFinding(doc_id, doc.get("title", ""), doc.get("url", ""), a.alert, a.severity,
                                    a.summary, evidence, a.fingerprint))
    for doc_id, doc in documents.items():
        others = [o for o in doc.get("near_duplicate_of") or [] if o in documents]
        if others:
            add(doc_id, PageFinding(
                doc_id, doc.get("title", ""), doc.get("url", ""), "near_duplicate", "info",
                f"{doc_id} repeats {', '.join(others[:3])}: the ingest gate kept only the chunks that differ",
                {"near_duplicate_of": others, "titles": [documents[o].get("title", "") for o in others]}))
    order = {"critical": 0, "warning": 1, "info": 2}
    return [OwnerReport(owner, sorted(found, key=lambda f: (f.doc_id, order.get(f.severity, 3), f.alert)))
            for owner, found in sorted(by_owner.items())]


def cycle_of(now: datetime, timezone: str) -> str:
    """The digest cycle ``now`` falls in: its date in the schedule's time zone, e.g. "2026-12-01"."""
    return now.astimezone(zoneinfo.ZoneInfo(timezone)).date().isoformat()


def item_key(finding: PageFinding) -> str:
    """What makes a finding the same item for its owner: its page, its kind and its summary, whose figures
    ("12 👎 of 20 answers") change when the evidence does (issue 26: "an owner receives an item at most once
    until its figures change")."""
    return hashlib.sha256(f"{finding.doc_id}\x00{finding.alert}\x00{finding.summary}".encode()).hexdigest()[:16]


def due_reports(reports: list[OwnerReport], home: Path, cycle: str) -> list[OwnerReport]:
    """``reports`` cut to what each owner has not been told yet: none for an owner already messaged in
    ``cycle``; else only the findings not sent before in the same words and figures (`item_key`). Owners left
    with nothing new are left out."""
    state = _read(home)
    due = []
    for report in reports:
        mine = state.get(report.owner, {})
        if mine.get("cycle") == cycle:
            continue
        told = set(mine.get("sent", []))
        new = [f for f in report.findings if item_key(f) not in told]
        if new:
            due.append(OwnerReport(report.owner, new))
    return due


def mark_sent(home: Path, sent: list[OwnerReport], cycle: str, current: list[OwnerReport]) -> None:
    """Record that the owners of ``sent`` were messaged in ``cycle`` with those findings (written atomically).
    Only findings still among ``current`` (every owner's findings of this run) are remembered: an item that
    was resolved and comes back is news again."""
    state = _read(home)
    now_found = {r.owner: {item_key(f) for f in r.findings} for r in current}
    for owner, mine in list(state.items()):
        mine["sent"] = sorted(set(mine.get("sent", [])) & now_found.get(owner, set()))
    for report in sent:
        mine = state.setdefault(report.owner, {})
        mine["cycle"] = cycle
        mine["sent"] = sorted(set(mine.get("sent", [])) | {item_key(f) for f in report.findings})
    path = Path(home) / STATE_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)


def _read(home: Path) -> dict[str, dict]:
    """owner → {"cycle": the day last messaged, "sent": item keys told}; a file of the old layout (owner →
    day) reads as days with nothing told."""
    path = Path(home) / STATE_FILE
    try:
        raw = dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return {}
    except (ValueError, OSError) as exc:  # a damaged file: message again rather than never
        log.warning("owners.state_unreadable", path=str(path), error=str(exc))
        return {}
    return {owner: (value if isinstance(value, dict) else {"cycle": str(value), "sent": []})
            for owner, value in raw.items()}
