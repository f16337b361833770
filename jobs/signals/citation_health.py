"""Citation health: how answers cite — how many documents, how concentrated, how deep, how reused
(DESIGN.md "Quality monitoring", Citation health; seed 004 §6, thresholds §6.1).

Over the answered (not refused) questions of the last ``citation_health.window_days`` (30); below
``min_answers`` (100) answered questions the status is "insufficient_data" and nothing alerts:

- **average citations per answer** (cited documents) — warning "citation_avg_low" below 1.5;
- **Gini concentration** of citation counts over the active documents of the live index, never-cited ones
  included (notes/monitoring.md: the population matters) — warning "citation_gini_high" above 0.85; the
  top-5 share is reported beside it;
- **no-citation rate** (answered without any citation) — critical "no_citation_rate" when its whole
  Wilson interval is above 10 %;
- **chunk-level ratio** — citations backed by an identified passage (a retrieved chunk of the cited
  document scoring at least ``answer.low``) over all citations — info "chunk_ratio_low" below 0.5. The
  extractive composer always quotes a passage, so this stays near 1 unless answers come from elsewhere;
- **reuse** — citing passages per distinct passage (how often the same chunk answers different questions).

The status also holds a weekly trend (``trend_weeks``, 4) for the report.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import Any

from feedback import windows
from jobs._common import SignalResult, index_documents, is_active, iso, monitoring_config, snapshot, status_of, window
from jobs.findings import Finding, JobContext
from jobs.review import Candidate, PRIORITY_OF_SEVERITY, filing_job
from jobs.stats import clearly_above, gini, top_share, wilson_interval

SIGNAL = "citation_health"

def check(ctx: JobContext) -> SignalResult:
    """Computes the citation-health figures of the window and the weekly trend.

    Returns:
        SignalResult: status {"status": "ok" | "insufficient_data", "answers", "answered", "avg_citations",
        "gini", "population", "top_share", "no_citation_rate", "no_citation_ci", "chunk_level_ratio",
        "reuse", "trend": [{"week_start", "answered", "avg_citations", "no_citation_rate", "gini"}]};
        findings as in the module docstring; one review candidate per finding.
    """
    cfg = monitoring_config(ctx)
    ch, level = cfg.citation_health, cfg.confidence_level
    since, until = window(ctx.now, ch.window_days)
    trend_since = iso(ctx.now - timedelta(weeks=ch.trend_weeks))
    with snapshot(ctx.store) as conn:
        totals = windows.citation_totals(conn, since, until)
        per_doc = windows.citations_per_document(conn, since, until, answered_only=True)
        chunks = windows.chunk_citations(conn, since, until, float(ctx.settings.answer.low))
        trend_docs = windows.weekly_document_citations(conn, trend_since, until)
        trend_answers = windows.weekly_answered(conn, trend_since, until)
    docs = index_documents(ctx)
    population = ([d["doc_id"] for d in docs.values() if is_active(d, ctx.now)] if docs is not None else None)
    answered, cites = totals["answered"], totals["citations"]
    counts = _population_counts(per_doc, population)
    status: dict[str, Any] = {
        "window_days": ch.window_days, "since": since, "until": until,
        "answers": totals["answers"], "answered": answered,
        "avg_citations": round(cites / answered, 4) if answered else None,
        "gini": _round(gini(counts)),
        "population": "active indexed documents" if population is not None else "cited documents (no index)",
        "documents": len(counts), "documents_cited": sum(1 for c in counts if c),
        f"top{ch.top_n}_share": _round(top_share(counts, ch.top_n)),
        "no_citation_rate": round(totals["no_citation"] / answered, 4) if answered else None,
        "no_citation_ci": _ci(totals["no_citation"], answered, level),
        "chunk_level_ratio": round(chunks["chunk_level"] / cites, 4) if cites else None,
        "reuse": round(chunks["chunk_citations"] / chunks["distinct_chunks"], 3) if chunks["distinct_chunks"] else None,
        "trend": _trend(trend_docs, trend_answers, population, ctx.now, ch.trend_weeks),
    }
    if answered < ch.min_answers:
        status["status"] = "insufficient_data"
        return SignalResult(status)
    status["status"] = "ok"
    findings = _findings(status, totals["no_citation"], cites, len(counts), ch, level)
    candidates = [Candidate(f.alert, f.labels["metric"], "review_citations", PRIORITY_OF_SEVERITY[f.severity],
                            f.n, f.summary, {"value": f.value, "threshold": f.threshold}) for f in findings]
    return SignalResult(status, findings, candidates)


#: The report's figures (see `check`), without touching the review queue.
summarize = status_of(check)
#: The scheduled job: findings for the alert layer; candidates to the review queue.
run = filing_job(SIGNAL, check)


def _population_counts(per_doc: dict[str, int], population: list[str] | None) -> list[int]:
    """Citation count per document of the population (zeros included); cited documents when no index."""
    if population is None:
        return list(per_doc.values())
    return [per_doc.get(doc_id, 0) for doc_id in population]


def _trend(doc_rows, answer_rows, population, now, weeks: int) -> list[dict[str, Any]]:
    per_week: dict[int, dict[str, int]] = defaultdict(dict)
    for r in doc_rows:
        per_week[r["week"]][r["doc_id"]] = r["n"]
    answers = {r["week"]: r for r in answer_rows}
    points = []
    for week in range(weeks - 1, -1, -1):
        counts = _population_counts(per_week.get(week, {}), population)
        a = answers.get(week, {"answered": 0, "no_citation": 0})
        cites = sum(per_week.get(week, {}).values())
        points.append({
            "week_start": (now - timedelta(weeks=week + 1)).date().isoformat(),
            "answered": a["answered"],
            "avg_citations": round(cites / a["answered"], 4) if a["answered"] else None,
            "no_citation_rate": round(a["no_citation"] / a["answered"], 4) if a["answered"] else None,
            "gini": _round(gini(counts)),
        })
    return points


def _findings(s: dict, no_citation: int, cites: int, documents: int, ch, level: float) -> list[Finding]:
    """The threshold checks of seed 004 §6.1 on the computed status ``s``."""
    found = []
    answered, top = s["answered"], s[f"top{ch.top_n}_share"]
    if s["avg_citations"] < ch.min_avg_citations:
        found.append(_finding("citation_avg_low", "warning", "avg_citations", s["avg_citations"],
                              ch.min_avg_citations, answered,
                              f"answers cite {s['avg_citations']:.2f} documents on average (< {ch.min_avg_citations:g})"))
    if s["gini"] is not None and s["gini"] > ch.max_gini:
        found.append(_finding("citation_gini_high", "warning", "gini", s["gini"], ch.max_gini, cites,
                              f"citations are concentrated: Gini {s['gini']:.2f} > {ch.max_gini:g}; "
                              f"the top {ch.top_n} of {documents} documents get {top:.0%}",
                              {"top_share": top, "documents": documents}))
    if clearly_above(no_citation, answered, ch.max_no_citation_rate, level):
        found.append(_finding("no_citation_rate", "critical", "no_citation_rate", s["no_citation_rate"],
                              ch.max_no_citation_rate, answered,
                              f"{s['no_citation_rate']:.0%} of answers cite nothing "
                              f"(> {ch.max_no_citation_rate:.0%})", {"ci": s["no_citation_ci"]}))
    if s["chunk_level_ratio"] is not None and s["chunk_level_ratio"] < ch.min_chunk_ratio:
        found.append(_finding("chunk_ratio_low", "info", "chunk_level_ratio", s["chunk_level_ratio"],
                              ch.min_chunk_ratio, cites,
                              f"only {s['chunk_level_ratio']:.0%} of citations point at a passage "
                              f"(< {ch.min_chunk_ratio:.0%})"))
    return found


def _ci(k: int, n: int, level: float) -> list[float] | None:
    return [round(x, 4) for x in wilson_interval(k, n, level)] if n else None


def _finding(alert, severity, metric, value, threshold, n, summary, annotations=None) -> Finding:
    return Finding(alert=alert, severity=severity, labels={"metric": metric}, value=float(value),
                   threshold=float(threshold), n=int(n), summary=summary, annotations=annotations or {})


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(x, digits)
