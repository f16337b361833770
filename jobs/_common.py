"""Plumbing shared by the signal jobs: their result type, their config, time windows and a read snapshot.

Signal jobs aggregate in the database (GROUP BY, through the query functions of `feedback.windows` and
`feedback.labels`) and read through `snapshot`: one read transaction of the store (`FeedbackStore.snapshot`),
so every query of a run sees the same data without blocking the bot's writers. Writes (labels, the review
queue) go through the store's write transactions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.engine import Connection

from config.monitoring import MonitoringConfig, monitoring_config_for
from feedback import windows
from feedback._time import parse_utc, utc_iso
from jobs.findings import Finding, JobContext

#: Key of `JobContext.extra` holding the loaded `MonitoringConfig` (loaded from files when absent).
CONFIG_KEY = "monitoring"


@dataclass
class SignalResult:
    """What one signal check found.

    Attributes:
        status: plain JSON-ready dict for reports and ``--json`` (the signal's figures, even when fine).
        findings: problems for the alert layer.
        candidates: treatment candidates for the review queue (`jobs.review.Candidate`).
    """

    status: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)
    candidates: list[Any] = field(default_factory=list)


def monitoring_config(ctx: JobContext) -> MonitoringConfig:
    """The monitoring config of this run: ``ctx.extra["monitoring"]``, else the files beside the settings."""
    cfg = ctx.extra.get(CONFIG_KEY)
    if cfg is None:
        cfg = ctx.extra[CONFIG_KEY] = monitoring_config_for(ctx.settings)
    return cfg


def iso(moment: datetime) -> str:
    """Aware datetime → the store's sortable UTC text (`feedback._time.utc_iso`).

    Raises:
        ValueError: ``moment`` is naive (`feedback.InvalidRecord` is a ValueError).
    """
    if moment is None:
        raise ValueError("times must be timezone-aware, e.g. datetime.now(timezone.utc)")
    return utc_iso(moment, field="time")


def window(now: datetime, days: float) -> tuple[str, str]:
    """``(since, until)`` as store text for the last ``days`` days before ``now`` (since inclusive)."""
    return iso(now - timedelta(days=days)), iso(now)


@contextlib.contextmanager
def snapshot(store) -> Iterator[Connection]:
    """One read transaction of ``store`` (`feedback.windows.aggregate_snapshot`) for a signal's queries.

    Args:
        store: an open `feedback.FeedbackStore`.

    Yields:
        A connection to pass to the `feedback.windows` / `feedback.labels` functions; valid inside the block.

    Raises:
        StoreUnavailable: the database failed.
    """
    with windows.aggregate_snapshot(store) as conn:
        yield conn


def index_documents(ctx: JobContext) -> dict[str, dict] | None:
    """doc_id → document record of the live index generation, or None when there is no index.

    Raises:
        KnowledgeError: the index exists but cannot be loaded (other than "not built yet").
    """
    if ctx.kb is None:
        return None
    from knowledge import IndexNotBuilt

    try:
        return ctx.kb.index().documents
    except IndexNotBuilt:
        return None


def alias_targets(docs: dict[str, dict] | None) -> dict[str, str]:
    """Old doc id → the current page that lists its path in front matter ``redirect_from`` (issue 11 item 7).

    Read from the index's document records: a document's ``aliases`` are old page paths (`knowledge.parsing.
    page_key` form). Another document of the same collection whose own path has that form and that is not
    active (archived, deprecated) maps to it, and so does one that lists an old path the current page lists too
    (a rename through a shared alias, issue 26); so do the ids such a page had or would have had when it is no
    longer in the index (``collection:path.md``, ``.../index.md``, ``.markdown``, ``.html``; after a version
    folder, see `current_doc_id`). Only active documents receive feedback; a page never aliases itself.

    Returns:
        {old doc id: current doc id}; {} without an index or without aliases.
    """
    if not docs:
        return {}
    by_key: dict[tuple[str, str], str] = {}
    for doc_id, doc in docs.items():
        if doc.get("stage", "active") == "active":
            for alias in doc.get("aliases") or ():
                by_key.setdefault((doc["collection"], alias), doc_id)
    if not by_key:
        return {}
    targets = {}
    for doc_id, doc in docs.items():
        if doc.get("stage", "active") == "active":
            continue
        key = (doc["collection"], _page_key(doc["rel_path"], doc.get("versions_in_folders", False)))
        # its own path, else an old path it shares with the current page (a rename: both list /tools/timesheets/);
        # not an older version of that page, whose votes judged the old text (versions keep their own feedback)
        shared = next((by_key[(doc["collection"], a)] for a in doc.get("aliases") or ()
                       if (doc["collection"], a) in by_key), None)
        if shared and doc.get("version_family") and docs[shared].get("version_family") == doc["version_family"]:
            shared = None
        target = by_key.get(key) or shared
        if target and target != doc_id:
            targets[doc_id] = target
    for (collection, alias), target in by_key.items():
        for suffix in (".md", ".markdown", ".html", ".htm", "/index.md", "/README.md"):
            old = f"{collection}:{alias}{suffix}"
            if old not in docs:
                targets.setdefault(old, target)
    return targets


def current_doc_id(doc_id: str, docs: dict[str, dict] | None, targets: dict[str, str] | None = None) -> str:
    """The page feedback on ``doc_id`` counts for: its ``redirect_from`` target (`alias_targets`), else itself.

    A doc id no longer in the index is also tried without its first folder (a version folder of a
    ``versions: folders`` source: ``handbook:2021-12/tools/x.md`` → ``handbook:tools/x.md``).
    """
    targets = alias_targets(docs) if targets is None else targets
    if doc_id in targets:
        return targets[doc_id]
    collection, _, rel = doc_id.partition(":")
    if docs and doc_id not in docs and "/" in rel:
        return targets.get(f"{collection}:{rel.split('/', 1)[1]}", doc_id)
    return doc_id


def fold_aliases(aggregates: dict[str, dict[str, Any]], docs: dict[str, dict] | None) -> dict[str, dict[str, Any]]:
    """Per-document aggregates (`jobs.quality.document_aggregates` shape) with every old path's figures added
    to the current page's (`current_doc_id`): counts are summed, ``fused`` is averaged weighted by
    ``citations``. Unchanged (the same dict) when no document has aliases."""
    targets = alias_targets(docs)
    if not targets:
        return aggregates
    folded: dict[str, dict[str, Any]] = {}
    for doc_id, agg in aggregates.items():
        into = folded.setdefault(current_doc_id(doc_id, docs, targets), {})
        if not into:
            into.update(agg)
            continue
        n_into, n_agg = into.get("citations") or 0, agg.get("citations") or 0
        for key, value in agg.items():
            if key == "fused":
                if value is not None and into.get("fused") is not None and n_into + n_agg:
                    into["fused"] = (into["fused"] * n_into + value * n_agg) / (n_into + n_agg)
                elif into.get("fused") is None:
                    into["fused"] = value
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                into[key] = (into.get(key) or 0) + value
    return folded


def fold_citations(citations: dict[str, int], docs: dict[str, dict] | None) -> dict[str, int]:
    """{doc_id: count} with the counts of old paths added to their current page (`current_doc_id`)."""
    targets = alias_targets(docs)
    if not targets:
        return citations
    folded: dict[str, int] = {}
    for doc_id, n in citations.items():
        key = current_doc_id(doc_id, docs, targets)
        folded[key] = folded.get(key, 0) + n
    return folded


def _page_key(rel_path: str, versions_in_folders: bool) -> str:
    """`knowledge.parsing.own_page_key`, imported late: jobs load the knowledge package only when needed."""
    from knowledge.parsing import own_page_key

    return own_page_key(rel_path, versions_in_folders)


def is_active(doc: dict, now: datetime) -> bool:
    """True when a document is served: stage "active" and not past ``expires_at``."""
    if doc.get("stage", "active") != "active":
        return False
    expires = parse_utc(doc.get("expires_at"))
    return expires is None or expires > now


def status_of(check):
    """``summarize(ctx) -> dict``: the status of ``check(ctx)`` (a signal's figures, for reports)."""
    def summarize(ctx: JobContext) -> dict[str, Any]:
        return check(ctx).status

    return summarize
