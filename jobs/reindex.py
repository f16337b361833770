"""Auto-reindex scoring and execution (DESIGN.md "Auto-reindex score"; seed 004 §9).

Every active document of the live index gets points from ``config/reindex_triggers.yaml``:

    stale (older than its collection's staleness, freshness.yaml)              +3
    fused quality of the answers citing it < 0.5 (at least ``min_answers``)    +2
    chunking drift (its ``chunker`` signature differs from the current one)    +1
    source modified after indexing (file mtime > ``indexed_at``)                +5

Score >= 5 → re-index (high), >= 3 → re-index (normal), >= 1 → human review (a review item) — but only a
document a sync would change (source modified or moved, chunking drift) is queued for re-indexing (issue 11
item 4: hundreds of stale pages were queued "normal" while "0 will change on sync"); one it would not change
becomes a human-review item when its answers are poor, and is otherwise left to the freshness signal's
aggregated stale line. Executing
the queue means running the incremental `KnowledgeBase.sync` for the affected collections, each marked
as being re-indexed (`jobs.inhibition.reindex_running`) so its freshness and citation alerts are muted
meanwhile. The sync re-reads changed files and re-chunks on chunker drift; a document that is merely
stale or answers badly is not changed by it — that needs its owner (the freshness and bad-document
review items). Citation counts are not a trigger: they must never feed ranking (seed 004 §13.7).
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, field
from typing import Any

from jobs._common import SignalResult, index_documents, is_active, monitoring_config, snapshot, window
from jobs.doc_state import is_stale, source_state
from jobs.findings import Finding, JobContext
from jobs.inhibition import reindex_running
from jobs.quality import document_aggregates
from jobs.review import Candidate, submit

SIGNAL = "reindex"
PRIORITIES = ("high", "normal", "review")
#: Documents listed per collection in a finding.
TOP_ITEMS = 10


@dataclass
class ReindexItem:
    """One document with a non-zero score.

    Attributes:
        doc_id, collection, title, url: from the index.
        score: sum of the triggered weights.
        priority: "high", "normal" (re-index) or "review" (a person decides).
        reasons: triggered rules: "stale", "low_quality", "chunking_drift", "source_modified".
        fused: mean fused quality of the answers citing it (None when fewer than ``min_answers``).
        sync_changes_it: True when a sync would re-read or re-chunk it (source modified or chunking drift).
    """

    doc_id: str
    collection: str
    title: str
    url: str
    score: int
    priority: str
    reasons: list[str] = field(default_factory=list)
    fused: float | None = None
    sync_changes_it: bool = False


def score_documents(ctx: JobContext) -> list[ReindexItem] | None:
    """Scores every active document; returns those at or above the review cut-off, highest first.

    Returns:
        The scored documents, or None when there is no index.
    """
    cfg = monitoring_config(ctx)
    rx = cfg.reindex
    docs = index_documents(ctx)
    if docs is None:
        return None
    since, until = window(ctx.now, rx.window_days)
    with snapshot(ctx.store) as conn:
        quality = document_aggregates(conn, cfg.quality, since, until)
    current_chunker = _current_chunker(ctx)
    items = []
    for doc in docs.values():
        if not is_active(doc, ctx.now):
            continue
        reasons = []
        if is_stale(doc, cfg.freshness, ctx.now):
            reasons.append("stale")
        agg = quality.get(doc["doc_id"])
        fused = agg["fused"] if agg and agg["citations"] >= rx.min_answers else None
        if fused is not None and fused < rx.low_quality_below:
            reasons.append("low_quality")
        if current_chunker and doc.get("chunker") != current_chunker:
            reasons.append("chunking_drift")
        state = source_state(doc)
        if state.modified:
            reasons.append("source_modified")
        score = sum(getattr(rx.weights, r) for r in reasons)
        priority = _priority(score, rx.priorities)
        changes = bool({"source_modified", "chunking_drift"} & set(reasons)) or state.missing
        if priority in ("high", "normal") and not changes:
            priority = "review" if "low_quality" in reasons else None  # a sync would not change it
        if priority:
            items.append(ReindexItem(doc["doc_id"], doc["collection"], doc.get("title", doc["doc_id"]),
                                     doc.get("url", ""), score, priority, reasons,
                                     None if fused is None else round(fused, 4), changes))
    items.sort(key=lambda i: (-i.score, i.doc_id))
    return items


def check(ctx: JobContext) -> SignalResult:
    """The re-index queue as findings (one "reindex_needed" per collection) and review candidates.

    Returns:
        SignalResult: status {"status": "ok" | "no_index", "counts": {priority: n}, "collections": {name:
        [doc_ids to re-index]}, "queue": [ReindexItem as dict]}; findings "reindex_needed" (warning when the
        collection has a high-priority document, else info); "human_review" candidates for review-priority
        documents.
    """
    items = score_documents(ctx)
    if items is None:
        return SignalResult({"status": "no_index", "counts": {}, "collections": {}, "queue": []})
    queued = [i for i in items if i.priority in ("high", "normal")]
    by_collection: dict[str, list[ReindexItem]] = {}
    for item in queued:
        by_collection.setdefault(item.collection, []).append(item)
    cutoffs = monitoring_config(ctx).reindex.priorities
    findings = [
        Finding(
            alert="reindex_needed",
            severity="warning" if any(i.priority == "high" for i in group) else "info",
            labels={"collection": name}, value=float(len(group)), threshold=float(cutoffs.normal), n=len(group),
            summary=(f"{len(group)} documents of {name} scored for re-indexing "
                     f"({sum(i.priority == 'high' for i in group)} high); {sum(i.sync_changes_it for i in group)} "
                     "will change on sync"),
            annotations={"top": [asdict(i) for i in group[:TOP_ITEMS]]},
        )
        for name, group in sorted(by_collection.items())
    ]
    candidates = [
        Candidate("reindex_review", i.doc_id, "human_review", 3, i.score,
                  f"{i.title}: re-index score {i.score} ({', '.join(i.reasons)})",
                  {"reasons": i.reasons, "fused": i.fused, "url": i.url})
        for i in items if i.priority == "review"
    ]
    status = {
        "status": "ok",
        "counts": {p: sum(i.priority == p for i in items) for p in PRIORITIES},
        "collections": {name: [i.doc_id for i in group] for name, group in sorted(by_collection.items())},
        "queue": [asdict(i) for i in items],
    }
    return SignalResult(status, findings, candidates)


def summarize(ctx: JobContext) -> dict[str, Any]:
    """The scored queue (see `check`), without touching the review queue or the index."""
    return check(ctx).status


def execute(ctx: JobContext, items: list[ReindexItem], priorities: tuple[str, ...] = ("high", "normal")) -> dict[str, Any]:
    """Re-indexes the collections of the items with one of ``priorities``: one incremental sync.

    Each collection is marked as being re-indexed for the duration (alert inhibition). Only configured
    sources can be synced; collections ingested from ad-hoc paths (``minerva ingest PATH``) are skipped.

    Returns:
        {"collections": synced, "skipped": queued but not configured, "sync": SyncReport.to_json() or None
        when nothing was synced}.

    Raises:
        KnowledgeError: the sync failed (the marks are recorded as failed).
    """
    names = sorted({i.collection for i in items if i.priority in priorities})
    configured = {s.name: s for s in ctx.settings.sources}
    sources = [configured[n] for n in names if n in configured]
    skipped = [n for n in names if n not in configured]
    if not sources:
        return {"collections": [], "skipped": skipped, "sync": None}
    with contextlib.ExitStack() as marks:
        for source in sources:
            marks.enter_context(reindex_running(ctx.store, source.name))
        report = ctx.kb.sync(sources=sources)
    return {"collections": [s.name for s in sources], "skipped": skipped, "sync": report.to_json()}


def execute_queue(ctx: JobContext, priorities: tuple[str, ...] = ("high", "normal")) -> tuple[dict[str, Any], SignalResult]:
    """Scores, re-indexes the collections holding queued documents, then scores again (``minerva reindex --execute``).

    Returns:
        (what `execute` did, the `check` result after it); review candidates are filed.

    Raises:
        KnowledgeError: the sync failed.
    """
    items = score_documents(ctx)
    executed = execute(ctx, items, priorities) if items else {"collections": [], "skipped": [], "sync": None}
    result = check(ctx)
    submit(ctx.store, SIGNAL, result.candidates, now=ctx.now)
    return executed, result


def run(ctx: JobContext) -> list[Finding]:
    """The scheduled job: scores, executes what ``auto_execute`` allows, and reports what is still queued."""
    rx = monitoring_config(ctx).reindex
    result = check(ctx)
    allowed = {"off": (), "high": ("high",), "normal": ("high", "normal")}[rx.auto_execute]
    items = [ReindexItem(**q) for q in result.status.get("queue", [])]
    if allowed and any(i.priority in allowed for i in items):
        execute(ctx, items, allowed)
        result = check(ctx)
    submit(ctx.store, SIGNAL, result.candidates, now=ctx.now)
    return result.findings


def _priority(score: int, cutoffs) -> str | None:
    if score >= cutoffs.high:
        return "high"
    if score >= cutoffs.normal:
        return "normal"
    if score >= cutoffs.review:
        return "review"
    return None


def _current_chunker(ctx: JobContext) -> str | None:
    """The chunker signature the next sync would record (None when the settings have no chunking)."""
    # knowledge exports no public name for it yet; this is the function sync itself records documents with.
    from knowledge.sync import chunker_signature

    chunking = getattr(ctx.settings, "chunking", None)
    return chunker_signature(chunking) if chunking is not None else None
