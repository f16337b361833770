"""Freshness: stale documents, stale and heavily cited ones, unreachable sources, sources changed after
indexing (DESIGN.md "Quality monitoring", Freshness; seed 004 §4).

Over the active documents of the live index (stage "active", not expired):

- **stale** — not modified for longer than its collection's staleness (``freshness.yaml``: default 90
  days, per-collection overrides, -1 never): one "stale_document" warning per collection, with the oldest
  and most cited documents in the annotations (one alert per document would flood a large handbook);
- **stale and heavily cited** — stale and cited at least ``high_citation_min`` (50) times in the last
  ``citation_window_days`` (30): "stale_high_citation" warning per document, and an "update content"
  review item;
- **source unreachable** — the file is gone: "source_unreachable" (critical) per document, or one per
  collection when the collection's whole folder is missing; a "check source" review item;
- **source modified after indexing** — file mtime later than ``indexed_at`` (or mtime/size changed):
  "source_modified" warning per document; the re-index job (`jobs.reindex`) picks it up;
- **outdated and cited** — the page says it is outdated (front matter ``outdated: true``, issue 11 item 7)
  and answers cited it in the last ``citation_window_days``: "outdated_cited" warning per document and an
  "update or retire" review item. Citations of its old paths (``redirect_from`` aliases) count for it;
- **verification overdue** — the page has a verification interval (front matter or source ``verify_days``)
  and its owner has not confirmed it since it fell due (`jobs.verification`, issue 25 item 3): one
  "verification_overdue" warning per collection, the most overdue pages in the annotations.
"""

from __future__ import annotations

import os
from collections import defaultdict
from datetime import timedelta
from typing import Any

from feedback import parse_utc, verifications, windows
from jobs._common import (SignalResult, fold_citations, index_documents, is_active, monitoring_config,
                          snapshot, status_of, window)
from jobs.doc_state import age_days, is_stale, source_state
from jobs.findings import Finding, JobContext
from jobs.review import Candidate, filing_job
from jobs.verification import overdue_pages, source_intervals

SIGNAL = "freshness"
#: Age buckets of the status (days), for the report's freshness chart.
AGE_BUCKETS = (30, 90, 180, 365)
#: Weekly points of the stale-documents timeline.
TIMELINE_WEEKS = 8
#: Documents listed per collection in annotations and status.
TOP_ITEMS = 10

def check(ctx: JobContext) -> SignalResult:
    """Audits every active document of the live index.

    Returns:
        SignalResult: status {"status": "ok" | "no_index", "collections": {name: {...}}, "stale_high_citation",
        "unreachable", "modified": lists of documents, "age_buckets", "timeline"}; findings as in the module
        docstring; review candidates for stale-and-cited and unreachable documents.
    """
    cfg = monitoring_config(ctx)
    fresh = cfg.freshness
    docs = index_documents(ctx)
    if docs is None:
        return SignalResult({"status": "no_index", "collections": {}})
    since, until = window(ctx.now, fresh.citation_window_days)
    with snapshot(ctx.store) as conn:
        citations = windows.citations_per_document(conn, since, until)
        checks = verifications.fetch(conn)
    active = [d for d in docs.values() if is_active(d, ctx.now)]
    overdue = overdue_pages({d["doc_id"]: d for d in active}, checks, source_intervals(ctx.settings), ctx.now)
    missing_roots = _missing_roots(ctx, {d["collection"] for d in active})
    per_collection: dict[str, dict[str, Any]] = defaultdict(lambda: {"active": 0, "stale": []})
    stale_cited, unreachable, modified = [], [], []
    citations = fold_citations(citations, docs)
    outdated = [_entry(d, citations.get(d["doc_id"], 0), ctx.now) for d in active
                if d.get("outdated") and citations.get(d["doc_id"], 0) > 0]
    for doc in active:
        entry = _entry(doc, citations.get(doc["doc_id"], 0), ctx.now)
        bucket = per_collection[doc["collection"]]
        bucket["active"] += 1
        if is_stale(doc, fresh, ctx.now):
            bucket["stale"].append(entry)
            if entry["citations"] >= fresh.high_citation_min:
                stale_cited.append(entry)
        if doc["collection"] in missing_roots:
            continue
        state = source_state(doc)
        if state.missing:
            unreachable.append(entry)
        elif state.modified:
            modified.append({**entry, "source_mtime": state.mtime.isoformat(), "indexed_at": doc.get("indexed_at")})
    findings = [
        *_stale_findings(per_collection, fresh),
        *(_stale_cited_finding(e, fresh) for e in stale_cited),
        *_unreachable_findings(unreachable, missing_roots, active),
        *(_modified_finding(e) for e in modified),
        *(_outdated_finding(e, fresh) for e in outdated),
        *_overdue_findings(overdue),
    ]
    candidates = [
        *(Candidate("stale_high_citation", e["doc_id"], "update_content", 2, e["citations"],
                    f"{e['title']} is {e['age_days']} days old and was cited {e['citations']} times in "
                    f"{fresh.citation_window_days} days", {k: e[k] for k in ("collection", "url", "owner", "age_days")})
          for e in stale_cited),
        *(Candidate("source_unreachable", e["doc_id"], "check_source", 1, e["citations"],
                    f"the source file of {e['title']} is missing", {"path": e["path"], "url": e["url"]})
          for e in unreachable),
        *(Candidate("outdated_cited", e["doc_id"], "update_content", 2, e["citations"],
                    f"{e['title']} marks itself outdated and was cited {e['citations']} times in "
                    f"{fresh.citation_window_days} days", {k: e[k] for k in ("collection", "url", "owner", "age_days")})
          for e in outdated),
        *(Candidate("source_unreachable", f"collection:{c}", "check_source", 1, 0,
                    f"the folder of collection {c} is missing", {"collection": c}) for c in sorted(missing_roots)),
    ]
    status = {
        "status": "ok",
        "collections": {
            name: {"active": b["active"], "stale": len(b["stale"]), "staleness_days": fresh.staleness_days(name),
                   "oldest": sorted(b["stale"], key=lambda e: -e["age_days"])[:TOP_ITEMS]}
            for name, b in sorted(per_collection.items())
        },
        "stale_high_citation": sorted(stale_cited, key=lambda e: -e["citations"]),
        "unreachable": unreachable,
        "missing_collections": sorted(missing_roots),
        "modified": modified,
        "outdated_cited": sorted(outdated, key=lambda e: -e["citations"]),
        "verification_overdue": overdue[:TOP_ITEMS * 5],
        "verification_overdue_count": len(overdue),
        "age_buckets": _age_buckets(active, ctx.now),
        "timeline": _timeline(active, fresh, ctx.now),
    }
    return SignalResult(status, findings, candidates)


#: The report's figures (see `check`), without touching the review queue.
summarize = status_of(check)
#: The scheduled job: findings for the alert layer; candidates to the review queue.
run = filing_job(SIGNAL, check)


def _entry(doc: dict, citations: int, now) -> dict[str, Any]:
    return {"doc_id": doc["doc_id"], "collection": doc["collection"], "title": doc.get("title", doc["doc_id"]),
            "url": doc.get("url", ""), "owner": doc.get("owner", ""), "path": doc.get("path", ""),
            "last_modified": doc.get("last_modified"), "age_days": int(age_days(doc, now) or 0),
            "citations": int(citations)}


def _missing_roots(ctx: JobContext, collections: set[str]) -> set[str]:
    """Configured collections whose source folder is gone (documents of others are checked one by one)."""
    configured = {s.name: s.path for s in ctx.settings.sources}
    return {c for c in collections if c in configured and not os.path.isdir(configured[c])}


def _most_cited(top: list[dict]) -> str:
    """"; most cited: A (12), B (5)" for the stale line of a collection (issue 11 item 4), or "" when none of its
    stale pages was cited in the window."""
    cited = [e for e in top if e["citations"]][:3]
    return ("; most cited: " + ", ".join(f"{e['title']} ({e['citations']})" for e in cited)) if cited else ""


def _stale_findings(per_collection: dict, fresh) -> list[Finding]:
    found = []
    for name, bucket in sorted(per_collection.items()):
        stale = bucket["stale"]
        if not stale:
            continue
        days = fresh.staleness_days(name)
        top = sorted(stale, key=lambda e: (-e["citations"], -e["age_days"]))[:TOP_ITEMS]
        found.append(Finding(
            alert="stale_document", severity="warning", labels={"collection": name},
            value=float(len(stale)), threshold=0.0, n=bucket["active"],
            summary=f"{len(stale)} of {bucket['active']} active documents in {name} are older than {days} days"
                    + _most_cited(top),
            annotations={"staleness_days": days,
                         "top": [{k: e[k] for k in ("doc_id", "title", "age_days", "citations", "url")} for e in top]},
        ))
    return found


def _stale_cited_finding(entry: dict, fresh) -> Finding:
    days = fresh.staleness_days(entry["collection"])
    return Finding(
        alert="stale_high_citation", severity="warning", labels={"doc_id": entry["doc_id"]},
        value=float(entry["citations"]), threshold=float(fresh.high_citation_min), n=entry["citations"],
        summary=(f"{entry['title']} is {entry['age_days']} days old (stale after {days}) and was cited "
                 f"{entry['citations']} times in {fresh.citation_window_days} days"),
        link=entry["url"],
        annotations={"age_days": entry["age_days"], "staleness_days": days, "owner": entry["owner"],
                     "last_modified": entry["last_modified"]},
    )


def _unreachable_findings(unreachable: list[dict], missing_roots: set[str], active: list[dict]) -> list[Finding]:
    found = [
        Finding(alert="source_unreachable", severity="critical", labels={"collection": c},
                value=float(sum(d["collection"] == c for d in active)), threshold=0.0,
                n=sum(d["collection"] == c for d in active),
                summary=f"the source folder of collection {c} is missing; its documents cannot be re-synced",
                annotations={})
        for c in sorted(missing_roots)
    ]
    found += [
        Finding(alert="source_unreachable", severity="critical", labels={"doc_id": e["doc_id"]},
                value=1.0, threshold=0.0, n=1, link=e["url"],
                summary=f"the source of {e['title']} ({e['path']}) is missing; the index still serves it",
                annotations={"path": e["path"], "citations": e["citations"]})
        for e in unreachable
    ]
    return found


def _outdated_finding(entry: dict, fresh) -> Finding:
    """A page that says it is outdated (front matter ``outdated: true``) was quoted in answers."""
    return Finding(
        alert="outdated_cited", severity="warning", labels={"doc_id": entry["doc_id"]},
        value=float(entry["citations"]), threshold=0.0, n=entry["citations"], link=entry["url"],
        summary=(f"{entry['title']} is marked outdated (front matter `outdated: true`) and was cited "
                 f"{entry['citations']} times in {fresh.citation_window_days} days: update it or retire it"),
        annotations={"owner": entry["owner"], "last_modified": entry["last_modified"], "age_days": entry["age_days"]},
    )


def _overdue_findings(overdue: list[dict]) -> list[Finding]:
    """One "verification_overdue" warning per collection with pages whose owner has not confirmed them since
    they fell due (one per page would flood a digest as stale pages would)."""
    by_collection: dict[str, list[dict]] = defaultdict(list)
    for entry in overdue:
        by_collection[entry["collection"]].append(entry)
    return [Finding(
        alert="verification_overdue", severity="warning", labels={"collection": name},
        value=float(len(pages)), threshold=0.0, n=len(pages),
        summary=(f"{len(pages)} page(s) in {name} are overdue for their owner's verification; most overdue: "
                 + ", ".join(f"{e['title']} ({e['days_overdue']} days)" for e in pages[:3])),
        annotations={"top": [{k: e[k] for k in ("doc_id", "title", "days_overdue", "state", "url")}
                             for e in pages[:TOP_ITEMS]]},
    ) for name, pages in sorted(by_collection.items())]


def _modified_finding(entry: dict) -> Finding:
    indexed, changed = parse_utc(entry["indexed_at"]), parse_utc(entry["source_mtime"])
    hours = max(0.0, (changed - indexed).total_seconds() / 3600) if indexed and changed else 0.0
    return Finding(
        alert="source_modified", severity="warning", labels={"doc_id": entry["doc_id"]},
        value=round(hours, 2), threshold=0.0, n=1, link=entry["url"],
        summary=f"{entry['title']} changed after it was indexed; re-index {entry['collection']}",
        annotations={"source_mtime": entry["source_mtime"], "indexed_at": entry["indexed_at"]},
    )


def _age_buckets(active: list[dict], now) -> dict[str, int]:
    counts = {f"<{b}": 0 for b in AGE_BUCKETS} | {f">={AGE_BUCKETS[-1]}": 0}
    for doc in active:
        age = age_days(doc, now) or 0
        key = next((f"<{b}" for b in AGE_BUCKETS if age < b), f">={AGE_BUCKETS[-1]}")
        counts[key] += 1
    return counts


def _timeline(active: list[dict], fresh, now) -> list[dict[str, Any]]:
    """Stale active documents at the end of each of the last weeks (today's documents, their dates)."""
    points = []
    for weeks_ago in range(TIMELINE_WEEKS - 1, -1, -1):
        moment = now - timedelta(weeks=weeks_ago)
        stale = sum(1 for d in active if parse_utc(d.get("last_modified")) and parse_utc(d["last_modified"]) <= moment
                    and is_stale(d, fresh, moment))
        points.append({"date": moment.date().isoformat(), "stale": stale})
    return points
