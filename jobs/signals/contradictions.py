"""Contradictions as a scheduled job: two current pages stating different values or identifiers for one thing.

Seed 000 "Cross-validation" and seed 004 §13.6 (flag both sources, someone decides which is current);
issue 11 item 6 (the finder runs on a schedule; its findings become alerts and review items naming both
pages, both values and their dates). The finding itself is `knowledge.contradictions.find_contradictions`
(numbers with units and identifiers: Tock codes, namespaces, channels, config values), which compares only
active documents and never a version with its successor.

One finding per pair of documents (not per statement: one page that is a year behind another disagrees on
many numbers at once, and one alert per number would bury it): alert ``contradiction``, severity "warning"
(daily digest), labels ``{"doc_id": first page, "other_doc": second page}`` so the alert resolves at once when
either page is archived (`jobs.alerts.resolve_gone_documents` reads ``doc_id``). Its annotations carry every
conflicting statement (both values as written and with their units' "per …", both sentences, the kind) and
both pages' dates (``last_modified`` of the index records); its summary leads with the two values and their
units ("€60 per user vs €45 per user per month (money): …"). Review item: ``("contradiction", "<doc_a> ≠ <doc_b>")``, action "resolve_contradiction".
"""

from __future__ import annotations

from typing import Any

import structlog

from jobs._common import SignalResult, index_documents, status_of
from jobs.findings import Finding, JobContext
from jobs.review import Candidate, filing_job
from knowledge.messages import stated_date

log = structlog.get_logger(__name__)

SIGNAL = "contradictions"
ALERT = "contradiction"
#: Conflicting statements kept per pair in the annotations and the review item.
MAX_STATEMENTS = 10


def check(ctx: JobContext) -> SignalResult:
    """Runs the finder over the live index.

    Returns:
        SignalResult: status {"status": "ok" | "no_index", "pairs": int, "statements": int, "by_kind":
        {kind: count}}; one "contradiction" finding (warning) and one review candidate per pair of documents.

    Raises:
        KnowledgeError: the index exists but cannot be loaded.
    """
    docs = index_documents(ctx)
    if docs is None:
        return SignalResult({"status": "no_index", "pairs": 0, "statements": 0, "by_kind": {}})
    from knowledge.contradictions import find_contradictions

    found = find_contradictions(ctx.kb.index(), ctx.kb.embedder, now=ctx.now)
    by_pair: dict[tuple[str, str], list] = {}
    for c in found:
        by_pair.setdefault((c.doc_a, c.doc_b), []).append(c)
    by_kind: dict[str, int] = {}
    for c in found:
        by_kind[c.kind] = by_kind.get(c.kind, 0) + 1
    findings, candidates = [], []
    for (doc_a, doc_b), items in sorted(by_pair.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        evidence = _evidence(docs, doc_a, doc_b, items)
        finding = Finding(
            alert=ALERT, severity="warning", labels={"doc_id": doc_a, "other_doc": doc_b}, value=len(items),
            threshold=1, n=len(items), summary=_summary(evidence), link=docs.get(doc_a, {}).get("url", ""),
            annotations=evidence,
        )
        findings.append(finding)
        candidates.append(Candidate(ALERT, f"{doc_a} ≠ {doc_b}", "resolve_contradiction", 2, len(items),
                                    finding.summary, evidence))
    log.info("contradictions.checked", pairs=len(by_pair), statements=len(found), by_kind=by_kind)
    return SignalResult({"status": "ok", "pairs": len(by_pair), "statements": len(found), "by_kind": by_kind},
                        findings, candidates)


#: The report's figures (see `check`), without touching the review queue.
summarize = status_of(check)
#: The scheduled job: findings for the alert layer; candidates to the review queue.
run = filing_job(SIGNAL, check)


def _evidence(docs: dict[str, dict], doc_a: str, doc_b: str, items: list) -> dict[str, Any]:
    """Both pages (id, title, url, date) and each conflicting statement (kind, both values and sentences)."""

    def page(doc_id: str) -> dict[str, str]:
        doc = docs.get(doc_id, {})
        return {"doc_id": doc_id, "title": doc.get("title", ""), "url": doc.get("url", ""),
                "date": stated_date(str(doc.get("last_modified") or "")[:10], doc.get("date_source", ""))}

    return {
        "doc_a": page(doc_a), "doc_b": page(doc_b),
        "statements": [{"kind": c.kind, "value_a": c.value_a, "value_b": c.value_b,
                        "stated_a": c.stated_a or c.value_a, "stated_b": c.stated_b or c.value_b,
                        "sentence_a": c.sentence_a[:300], "sentence_b": c.sentence_b[:300]}
                       for c in items[:MAX_STATEMENTS]],
        "more": max(0, len(items) - MAX_STATEMENTS),
    }


#: Characters of each page's sentence quoted in the summary (a digest line, not the evidence).
SUMMARY_SENTENCE_CHARS = 120


def _summary(evidence: dict[str, Any]) -> str:
    """Both values as the pages write them, with their units, then each page with its date and sentence.

    E.g. ``€60 per user vs €45 per user per month (money): pages:pricing.md (2026-11-02) “Pro, Price per
    user: €60”; pages:faq.md (2026-12-01) “The Pro plan costs €45 per user per month.”`` or ``969 vs 1347
    (code): handbook:olu.md (2025-01-03) “…”; handbook:ops/tock.md (2024-11-02) “…”``, then "; N more
    conflicting statement(s)" when the pair disagrees on more. Sentences are cut at
    `SUMMARY_SENTENCE_CHARS`.
    """
    a, b, first = evidence["doc_a"], evidence["doc_b"], evidence["statements"][0]
    more = len(evidence["statements"]) - 1 + evidence["more"]
    tail = f"; {more} more conflicting statement(s)" if more else ""

    def page(doc: dict[str, str], sentence: str) -> str:
        return f"{doc['doc_id']} ({doc['date'] or 'undated'}) “{_cut(sentence)}”"

    value_a, value_b = first.get("stated_a") or first["value_a"], first.get("stated_b") or first["value_b"]
    return (f"{value_a} vs {value_b} ({first['kind']}): {page(a, first['sentence_a'])}; "
            f"{page(b, first['sentence_b'])}{tail}")


def _cut(sentence: str) -> str:
    return sentence if len(sentence) <= SUMMARY_SENTENCE_CHARS else sentence[:SUMMARY_SENTENCE_CHARS - 1] + "…"
