"""Bad documents and wrong-answer spikes: the quality of the answers that cited each document (DESIGN.md
"Quality monitoring", Accuracy; seed 004 §5.1).

Over the answers of the last ``bad_docs.window_days`` (30), per cited document (config/monitoring.yaml):

- **bad document** — cited more than ``min_citations`` (20) times and a thumbs-up rate below
  ``max_thumbs_up_rate`` (0.3) with its whole Wilson interval below it (a handful of votes never fires), or
  more than ``max_flags`` (5) wrong-answer reports: "bad_document" warning, and a review item. The item
  proposes "review or deprecate" only when another document also answers the bad one's topics; a
  document that is the only source on one of its topics gets "improve (only source)" and is never marked
  for deprecation (seed 004 §13.5 "Bad Doc Reflex Deletion");
- **wrong-answer spike** — at least ``spike_min_flags`` (5) reports in the last ``spike_hours`` (24) on
  answers citing one collection, and ``spike_factor`` (3) times its daily average over the rest of the
  window: "wrong_answer_spike" critical, per collection (the kill switch can act on it).

Only what users said when the document was cited counts; how often it is cited is never a reason on its
own (seed 004 §13.7).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import Any

from jobs._common import SignalResult, index_documents, iso, monitoring_config, rows, snapshot, status_of, window
from jobs.findings import Finding, JobContext
from jobs.quality import document_aggregates
from jobs.review import Candidate, filing_job
from jobs.stats import clearly_below, wilson_interval

SIGNAL = "bad_docs"

_TOPICS_SQL = """
    SELECT c.doc_id AS doc_id, l.topic_id AS topic_id, COUNT(*) AS n
    FROM citations c JOIN answers a ON a.answer_id = c.answer_id JOIN answer_labels l ON l.answer_id = a.answer_id
    WHERE a.created_at >= :since AND a.created_at < :until
    GROUP BY c.doc_id, l.topic_id
"""
_SPIKE_SQL = """
    WITH fc AS (
        SELECT DISTINCT f.answer_id, f.user_id, f.created_at,
               substr(c.doc_id, 1, instr(c.doc_id, ':') - 1) AS collection
        FROM flags f JOIN citations c ON c.answer_id = f.answer_id
        WHERE f.created_at >= :since AND f.created_at < :until
    )
    SELECT collection, SUM(created_at >= :spike_since) AS recent, COUNT(*) AS total
    FROM fc WHERE collection != '' GROUP BY collection
"""


def check(ctx: JobContext) -> SignalResult:
    """Judges every document cited in the window, and looks for wrong-answer spikes.

    Returns:
        SignalResult: status {"window_days", "documents_cited", "evaluated", "bad": [...], "worst": top-N rows
        by thumbs-up rate, "spikes": [...]}; a row is {"doc_id", "title", "url", "citations", "up", "down",
        "thumbs_up_rate", "thumbs_up_ci", "flags", "fused", "reasons", "only_source_topics"}; findings
        "bad_document" (warning) and "wrong_answer_spike" (critical); one review candidate per bad document.
    """
    cfg = monitoring_config(ctx)
    bd, level = cfg.bad_docs, cfg.confidence_level
    since, until = window(ctx.now, bd.window_days)
    spike_since = iso(ctx.now - timedelta(hours=bd.spike_hours))
    with snapshot(ctx.store) as conn:
        aggregates = document_aggregates(conn, cfg.quality, since, until)
        topic_rows = rows(conn, _TOPICS_SQL, {"since": since, "until": until})
        spike_rows = rows(conn, _SPIKE_SQL, {"since": since, "until": until, "spike_since": spike_since})
    docs = index_documents(ctx) or {}
    table = [_row(doc_id, agg, docs.get(doc_id, {}), level) for doc_id, agg in aggregates.items()]
    bad = []
    for row in table:
        if row["citations"] > bd.min_citations and clearly_below(row["up"], row["up"] + row["down"],
                                                                 bd.max_thumbs_up_rate, level):
            row["reasons"].append("thumbs_up_rate")
        if row["flags"] > bd.max_flags:
            row["reasons"].append("flags")
        if row["reasons"]:
            bad.append(row)
    bad.sort(key=lambda r: -r["citations"])
    _mark_only_sources(bad, topic_rows, bd)
    spikes = _spikes(spike_rows, bd)
    findings = [_bad_finding(r, bd) for r in bad] + [_spike_finding(s, bd) for s in spikes]
    candidates = [_candidate(r, bd) for r in bad]
    evaluated = [r for r in table if r["citations"] > bd.min_citations]
    status = {
        "window_days": bd.window_days, "since": since, "until": until,
        "documents_cited": len(table), "evaluated": len(evaluated), "bad": bad,
        "worst": sorted(evaluated, key=lambda r: (r["thumbs_up_rate"] if r["thumbs_up_rate"] is not None else 1.0,
                                                   -r["citations"]))[:bd.top_n],
        "spikes": spikes,
    }
    return SignalResult(status, findings, candidates)


#: The report's figures (see `check`), without touching the review queue.
summarize = status_of(check)
#: The scheduled job: findings for the alert layer; candidates to the review queue.
run = filing_job(SIGNAL, check)


def _row(doc_id: str, agg: dict, doc: dict, level: float) -> dict[str, Any]:
    votes = agg["up"] + agg["down"]
    return {
        "doc_id": doc_id, "title": doc.get("title", doc_id), "url": doc.get("url", ""), "owner": doc.get("owner", ""),
        "citations": agg["citations"], "up": agg["up"], "down": agg["down"],
        "thumbs_up_rate": round(agg["up"] / votes, 4) if votes else None,
        "thumbs_up_ci": [round(x, 4) for x in wilson_interval(agg["up"], votes, level)] if votes else None,
        "flags": agg["flags"], "fused": round(agg["fused"], 4) if agg["fused"] is not None else None,
        "reasons": [], "only_source_topics": [],
    }


def _mark_only_sources(bad: list[dict], topic_rows: list[dict], bd) -> None:
    """Sets ``only_source_topics`` on each bad row: its own topics that no other good document answers.

    A topic is one of the document's own when at least ``main_topic_share`` of its labelled citations come
    from it; another document answers it when cited there at least ``alternative_min_citations`` times and
    is not bad itself. A document with no labelled citations gets ``["unknown"]``: without evidence of an
    alternative it is treated as the only source.
    """
    by_doc: dict[str, dict[int, int]] = defaultdict(dict)
    by_topic: dict[int, dict[str, int]] = defaultdict(dict)
    for r in topic_rows:
        by_doc[r["doc_id"]][r["topic_id"]] = r["n"]
        by_topic[r["topic_id"]][r["doc_id"]] = r["n"]
    bad_ids = {r["doc_id"] for r in bad}
    for row in bad:
        own = by_doc.get(row["doc_id"], {})
        total = sum(own.values())
        if not total:
            row["only_source_topics"] = ["unknown"]
            continue
        main = [t for t, n in own.items() if n / total >= bd.main_topic_share]
        row["only_source_topics"] = sorted(
            t for t in main
            if not any(d not in bad_ids and n >= bd.alternative_min_citations for d, n in by_topic[t].items())
        )


def _spikes(spike_rows: list[dict], bd) -> list[dict[str, Any]]:
    baseline_days = max(bd.window_days - bd.spike_hours / 24, 1e-9)
    found = []
    for r in spike_rows:
        daily = (r["total"] - r["recent"]) / baseline_days
        needed = max(bd.spike_min_flags, bd.spike_factor * daily)
        if r["recent"] >= needed:
            found.append({"collection": r["collection"], "flags": r["recent"], "threshold": round(needed, 2),
                          "daily_average": round(daily, 3)})
    return found


def _bad_finding(row: dict, bd) -> Finding:
    if "thumbs_up_rate" in row["reasons"]:
        value, threshold, n = row["thumbs_up_rate"], bd.max_thumbs_up_rate, row["up"] + row["down"]
        why = (f"thumbs-up rate {row['thumbs_up_rate']:.0%} (95% CI {row['thumbs_up_ci'][0]:.0%}–"
               f"{row['thumbs_up_ci'][1]:.0%}) < {bd.max_thumbs_up_rate:.0%} over {n} votes")
    else:
        value, threshold, n = float(row["flags"]), float(bd.max_flags), row["citations"]
        why = f"{row['flags']} wrong-answer reports > {bd.max_flags}"
    return Finding(
        alert="bad_document", severity="warning", labels={"doc_id": row["doc_id"]},
        value=float(value), threshold=float(threshold), n=int(n), link=row["url"],
        summary=f"{row['title']}: cited {row['citations']} times; {why}",
        annotations={k: row[k] for k in ("citations", "up", "down", "thumbs_up_ci", "flags", "fused", "reasons",
                                         "only_source_topics", "owner")},
    )


def _spike_finding(spike: dict, bd) -> Finding:
    return Finding(
        alert="wrong_answer_spike", severity="critical", labels={"collection": spike["collection"]},
        value=float(spike["flags"]), threshold=float(spike["threshold"]), n=int(spike["flags"]),
        summary=(f"{spike['flags']} wrong-answer reports in {bd.spike_hours} h on answers citing "
                 f"{spike['collection']} (daily average {spike['daily_average']:g})"),
        annotations={"daily_average": spike["daily_average"], "spike_hours": bd.spike_hours},
    )


def _candidate(row: dict, bd) -> Candidate:
    only = row["only_source_topics"]
    if only:
        action, auto = "improve_only_source", False
        reason = f"{row['title']} answers badly but is the only source on topic(s) {', '.join(map(str, only))}"
    else:
        action, auto = "review_or_deprecate", bd.auto_deprecate
        reason = f"{row['title']} answers badly; other documents cover its topics"
    return Candidate(
        problem="bad_document", subject=row["doc_id"], action=action, priority=2, weight=row["citations"],
        reason=reason, auto_deprecate=auto,
        details={k: row[k] for k in ("title", "url", "owner", "citations", "thumbs_up_rate", "thumbs_up_ci",
                                     "flags", "fused", "reasons", "only_source_topics")},
    )
