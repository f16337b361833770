"""Bad documents and wrong-answer spikes: the quality of the answers that cited each document (DESIGN.md
"Quality monitoring", Accuracy; seed 004 §5.1; decided at tens of votes: issue 11 item 1).

Over the answers of the last ``bad_docs.window_days`` (90), per cited document that is still active in the
index (archived and deleted documents are not judged, so their alerts resolve; config/monitoring.yaml):

- **bad document** — a Beta-binomial posterior instead of a fixed interval and count: P(👍 rate < 0.3 |
  votes) ≥ ``alert_probability`` once ``min_votes`` votes were cast, or P(share of its answers reported
  wrong > ``max_report_rate``) ≥ ``report_probability`` once ``min_answers`` answers cited it (a rate, so a
  busy page is not bad for being busy). The numbers and the false-alarm budget they hold are documented in
  `config.monitoring.BadDocsConfig` and measured by benchmarks/accuracy_gate_sim.py. A "bad_document"
  warning and a review item; the item proposes "review or deprecate" only when another document also
  answers the bad one's topics; a document that is the only source on one of its topics gets "improve (only
  source)" and is never marked for deprecation (seed 004 §13.5 "Bad Doc Reflex Deletion");
- **watch** — below the alert bar, early bad signals (P(👍 rate < 0.3) ≥ ``watch_probability`` after
  ``watch_min_votes`` votes) put a "watch" item in the review queue, never an alert;
- **evidence** — every finding and item names answer ids with their questions (👎 or reported, newest
  first), the 👎 reasons voters gave, the document's newer version if any, and the other active pages on its
  topics (by the labelled topics, else the pages cited beside it);
- **wrong-answer spike** — at least ``spike_min_flags`` (5) reports in the last ``spike_hours`` (24) on
  answers citing one collection, and ``spike_factor`` (3) times its daily average over the rest of the
  window: "wrong_answer_spike" critical, per collection, naming the reported answers and the documents they
  cited, and a review item per document; a person takes a page out of search from the alert's button or the
  CLI, reports alone never do (issue 26, `jobs.page_actions`).

Only what users said when the document answered counts: a vote or report judges the pages the direct answer
came from, not those cited beside them (issue 26 item 4; ``citations.answering``, `feedback.windows`), and the
finding says so when the two differ. How often a page is cited is never a reason on its own (seed 004 §13.7).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import Any

from feedback import windows
from jobs._common import (SignalResult, fold_aliases, index_documents, iso, monitoring_config, snapshot, status_of,
                          window)
from jobs.findings import Finding, JobContext
from jobs.quality import document_aggregates
from jobs.review import Candidate, filing_job
from jobs.stats import posterior_below, wilson_interval

SIGNAL = "bad_docs"

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
    docs = index_documents(ctx) or {}
    with snapshot(ctx.store) as conn:
        # feedback on a renamed page's old paths (front matter `redirect_from`) counts for the current page
        aggregates = fold_aliases(document_aggregates(conn, cfg.quality, since, until), docs)
        topic_rows = windows.topic_citations(conn, since, until)
        spike_rows = windows.collection_reports(conn, since, until, spike_since)
        table = [_row(doc_id, agg, docs.get(doc_id, {}), level, bd) for doc_id, agg in aggregates.items()
                 if _judged(doc_id, docs)]
        bad = [r for r in table if r["reasons"]]
        watch = [r for r in table if r["verdict"] == "watch"]
        bad.sort(key=lambda r: -r["citations"])
        _mark_only_sources(bad, topic_rows, bd)
        for row in bad + watch:
            row["evidence"] = _evidence(conn, row["doc_id"], docs, topic_rows, bd, since, until)
        spikes = _spikes(spike_rows, bd)
        for spike in spikes:
            spike.update(_spike_evidence(conn, spike["collection"], spike_since, until, bd))
    findings = [_bad_finding(r, bd) for r in bad] + [_spike_finding(s, bd) for s in spikes]
    candidates = ([_candidate(r, bd) for r in bad] + [_watch_candidate(r, bd) for r in watch]
                  + [c for s in spikes for c in _spike_candidates(s, docs, bd)])
    evaluated = [r for r in table if r["up"] + r["down"] >= bd.min_votes or r["citations"] >= bd.min_answers]
    status = {
        "window_days": bd.window_days, "since": since, "until": until,
        "documents_cited": len(table), "evaluated": len(evaluated), "bad": bad, "watch": watch,
        "worst": sorted(evaluated, key=lambda r: (r["thumbs_up_rate"] if r["thumbs_up_rate"] is not None else 1.0,
                                                   -r["citations"]))[:bd.top_n],
        "spikes": spikes,
    }
    return SignalResult(status, findings, candidates)


def decide(up: int, down: int, cited: int, reported: int, bd) -> dict[str, Any]:
    """The verdict on one document from its counts (pure; the benchmark simulates with it).

    Args:
        up, down: 👍 / 👎 votes on answers citing the document (>= 0).
        cited: answers citing it (>= 0); reported: of those, answers someone reported wrong (<= cited).
        bd: `config.monitoring.BadDocsConfig`.

    Returns:
        {"p_low": P(👍 rate < max_thumbs_up_rate | votes), "p_reported": P(report rate > max_report_rate |
        reports), "reasons": ["thumbs_up_rate"] and/or ["report_rate"] when bad, "verdict": "bad", "watch"
        or ""}.
    """
    votes = up + down
    p_low = posterior_below(up, votes, bd.max_thumbs_up_rate, (bd.prior_up, bd.prior_down))
    reported = min(reported, cited)
    p_reported = 1.0 - posterior_below(reported, cited, bd.max_report_rate, (bd.prior_reported, bd.prior_unreported))
    reasons = []
    if votes >= bd.min_votes and p_low >= bd.alert_probability:
        reasons.append("thumbs_up_rate")
    if cited >= bd.min_answers and p_reported >= bd.report_probability:
        reasons.append("report_rate")
    early = ((votes >= bd.watch_min_votes and p_low >= bd.watch_probability)
             or (reported and p_reported >= bd.watch_probability))
    verdict = "bad" if reasons else ("watch" if early else "")
    return {"p_low": p_low, "p_reported": p_reported, "reasons": reasons, "verdict": verdict}


#: The report's figures (see `check`), without touching the review queue.
summarize = status_of(check)
#: The scheduled job: findings for the alert layer; candidates to the review queue.
run = filing_job(SIGNAL, check)


def _judged(doc_id: str, docs: dict[str, dict]) -> bool:
    """Judge a document only while it answers questions: active in the index (all, without an index)."""
    if not docs:
        return True
    return doc_id in docs and docs[doc_id].get("stage", "active") == "active"


def _row(doc_id: str, agg: dict, doc: dict, level: float, bd) -> dict[str, Any]:
    votes = agg["up"] + agg["down"]
    reported = agg.get("reported") or 0
    answered = agg.get("answered", agg["citations"])  # the answers whose votes judge it (`windows.document_quality`)
    verdict = decide(agg["up"], agg["down"], answered, reported, bd)
    return {
        "doc_id": doc_id, "title": doc.get("title", doc_id), "url": doc.get("url", ""), "owner": doc.get("owner", ""),
        "citations": agg["citations"], "answered": answered, "up": agg["up"], "down": agg["down"],
        "thumbs_up_rate": round(agg["up"] / votes, 4) if votes else None,
        "thumbs_up_ci": [round(x, 4) for x in wilson_interval(agg["up"], votes, level)] if votes else None,
        "p_low": round(verdict["p_low"], 4), "flags": agg["flags"], "reported": reported,
        "report_rate": round(reported / answered, 4) if answered else None,
        "p_reported": round(verdict["p_reported"], 4),
        "fused": round(agg["fused"], 4) if agg["fused"] is not None else None,
        "reasons": verdict["reasons"], "verdict": verdict["verdict"], "only_source_topics": [],
    }


def _evidence(conn, doc_id: str, docs: dict[str, dict], topic_rows: list[dict], bd, since: str, until: str) -> dict:
    """What a person needs to judge a flagged document.

    Returns:
        {"answers": [{"answer_id", "question", "created_at", "down", "reports"}] (at most
        ``evidence_samples``, reported first, newest first), "down_reasons": {reason: count} (👎 reasons, when
        voters gave them), "newer_version": doc_id or "", "related": [{"doc_id", "title", "citations"}] other
        active pages on its topics (labelled topics; else the pages cited beside it)}.
    """
    answers = windows.document_evidence(conn, doc_id, since, until, bd.evidence_samples)
    reasons = windows.document_down_reasons(conn, doc_id, since, until)
    related = _related(doc_id, docs, topic_rows, bd) or [
        {"doc_id": r["doc_id"], "title": docs.get(r["doc_id"], {}).get("title", r["doc_id"]), "citations": r["n"]}
        for r in windows.cocited_documents(conn, doc_id, since, until) if _judged(r["doc_id"], docs)
    ]
    return {"answers": answers, "down_reasons": reasons, "newer_version": newer_version(doc_id, docs),
            "related": related[:5]}


def newer_version(doc_id: str, docs: dict[str, dict]) -> str:
    """The active document that replaces ``doc_id``, or "".

    A newer version is, in the index's document records: a document whose ``supersedes`` names it, or the
    active member of its version family (same collection and ``version_family``).
    """
    doc = docs.get(doc_id)
    if not doc:
        return ""
    for other_id, other in sorted(docs.items()):
        if other_id == doc_id or other.get("stage", "active") != "active":
            continue
        if other.get("supersedes") == doc_id:
            return other_id
        if doc.get("version_family") and other.get("collection") == doc.get("collection") \
                and other.get("version_family") == doc.get("version_family"):
            return other_id
    return ""


def _related(doc_id: str, docs: dict[str, dict], topic_rows: list[dict], bd) -> list[dict]:
    """Other active pages cited on this document's own topics (``main_topic_share``), most cited first."""
    own = {r["topic_id"]: r["n"] for r in topic_rows if r["doc_id"] == doc_id}
    total = sum(own.values())
    if not total:
        return []
    main = {t for t, n in own.items() if n / total >= bd.main_topic_share}
    counts: dict[str, int] = defaultdict(int)
    for r in topic_rows:
        if r["topic_id"] in main and r["doc_id"] != doc_id and _judged(r["doc_id"], docs):
            counts[r["doc_id"]] += r["n"]
    return [{"doc_id": d, "title": docs.get(d, {}).get("title", d), "citations": n}
            for d, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


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


def _evidence_text(evidence: dict) -> str:
    """One line of evidence for a summary: sample questions, 👎 reasons, newer version, related pages."""
    parts = []
    if evidence.get("answers"):
        parts.append("e.g. " + "; ".join(f"“{a['question'][:80]}” ({a['answer_id']})" for a in evidence["answers"][:2]))
    if evidence.get("down_reasons"):
        parts.append("👎 reasons: " + ", ".join(f"{k} {v}" for k, v in evidence["down_reasons"].items()))
    if evidence.get("newer_version"):
        parts.append(f"newer version: {evidence['newer_version']}")
    if evidence.get("related"):
        parts.append("other pages on its topic: " + ", ".join(r["doc_id"] for r in evidence["related"][:3]))
    return " · ".join(parts)


def _bad_finding(row: dict, bd) -> Finding:
    n_votes = row["up"] + row["down"]
    whys = []
    if "thumbs_up_rate" in row["reasons"]:
        whys.append(f"{row['up']} 👍 of {n_votes} votes: P(👍 rate < {bd.max_thumbs_up_rate:.0%}) = "
                    f"{row['p_low']:.0%} ≥ {bd.alert_probability:.0%}")
    if "report_rate" in row["reasons"]:
        whys.append(f"{row['reported']} of {row['answered']} answers reported wrong: P(report rate > "
                    f"{bd.max_report_rate:.0%}) = {row['p_reported']:.0%}")
    if "thumbs_up_rate" in row["reasons"]:
        value, threshold, n = row["thumbs_up_rate"], bd.max_thumbs_up_rate, n_votes
    else:
        value, threshold, n = row["report_rate"], bd.max_report_rate, row["answered"]
    evidence = row.get("evidence", {})
    summary = f"{row['title']}: cited {row['citations']} times; {'; '.join(whys)}"
    if row["citations"] > row["answered"]:  # the rule, said where it changed the figures
        summary += (f" (votes counted on the {row['answered']} answers it led; the {row['citations'] - row['answered']}"
                    " where it was only cited beside another page's answer do not judge it)")
    if _evidence_text(evidence):
        summary += f" — {_evidence_text(evidence)}"
    return Finding(
        alert="bad_document", severity="warning", labels={"doc_id": row["doc_id"]},
        value=float(value), threshold=float(threshold), n=int(n), link=row["url"],
        summary=summary,
        annotations={**{k: row[k] for k in ("citations", "answered", "up", "down", "thumbs_up_ci", "p_low", "flags", "reported",
                                            "report_rate", "p_reported", "fused", "reasons", "only_source_topics",
                                            "owner")},
                     "evidence": evidence},
    )


def _spike_evidence(conn, collection: str, since: str, until: str, bd) -> dict:
    """The reported answers of a spike and the documents of ``collection`` they cited.

    Returns:
        {"answers": [{"answer_id", "question", "reporters", "last_report"}] (at most ``evidence_samples``),
        "answer_ids": every reported answer id, "documents": [{"doc_id", "reported_answers"}] most reported
        first, "distinct_answers": how many different answers were reported}.
    """
    answers = windows.reported_answers(conn, since, until, collection)
    ids = [a["answer_id"] for a in answers]
    per_doc: dict[str, int] = defaultdict(int)
    for cited in windows.cited_documents(conn, ids):
        if windows.collection_of(cited["doc_id"]) == collection:
            per_doc[cited["doc_id"]] += 1
    documents = [{"doc_id": d, "reported_answers": n} for d, n in sorted(per_doc.items(), key=lambda kv: (-kv[1], kv[0]))]
    return {"answers": answers[:bd.evidence_samples], "answer_ids": ids, "documents": documents,
            "distinct_answers": len(ids)}


def _spike_finding(spike: dict, bd) -> Finding:
    docs = ", ".join(d["doc_id"] for d in spike.get("documents", [])[:3])
    return Finding(
        alert="wrong_answer_spike", severity="critical", labels={"collection": spike["collection"]},
        value=float(spike["flags"]), threshold=float(spike["threshold"]), n=int(spike["flags"]),
        summary=(f"{spike['flags']} wrong-answer reports in {bd.spike_hours} h on {spike.get('distinct_answers', '?')} "
                 f"answer(s) citing {spike['collection']} (daily average {spike['daily_average']:g})"
                 + (f"; documents cited: {docs}" if docs else "")),
        annotations={"daily_average": spike["daily_average"], "spike_hours": bd.spike_hours,
                     "documents": [d["doc_id"] for d in spike.get("documents", [])],
                     "answer_ids": spike.get("answer_ids", []),
                     "answers": spike.get("answers", [])},
    )


def _spike_candidates(spike: dict, docs: dict[str, dict], bd) -> list[Candidate]:
    """A review item per document of a spike's reported answers (issue 26): a burst of reports asks a person to
    read them, it takes nothing out of search by itself (`jobs.page_actions`)."""
    out = []
    for d in spike.get("documents", []):
        title = docs.get(d["doc_id"], {}).get("title", d["doc_id"])
        out.append(Candidate(
            problem="wrong_answer_spike", subject=d["doc_id"], action="check_reports", priority=1,
            weight=d["reported_answers"],
            reason=(f"{title}: {d['reported_answers']} answer(s) quoting it reported wrong in {bd.spike_hours} h "
                    f"({spike['flags']} reports on {spike['collection']}, daily average {spike['daily_average']:g})"),
            details={"collection": spike["collection"], "reported_answers": d["reported_answers"],
                     "answers": spike.get("answers", [])}))
    return out


_DETAIL_KEYS = ("title", "url", "owner", "citations", "answered", "up", "down", "thumbs_up_rate", "thumbs_up_ci", "p_low",
                "flags", "reported", "report_rate", "p_reported", "fused", "reasons", "only_source_topics", "evidence")


def _candidate(row: dict, bd) -> Candidate:
    only = row["only_source_topics"]
    if only:
        action, auto = "improve_only_source", False
        reason = f"{row['title']} answers badly but is the only source on topic(s) {', '.join(map(str, only))}"
    else:
        action, auto = "review_or_deprecate", bd.auto_deprecate
        reason = f"{row['title']} answers badly; other documents cover its topics"
    if _evidence_text(row.get("evidence", {})):
        reason += f" — {_evidence_text(row['evidence'])}"
    return Candidate(
        problem="bad_document", subject=row["doc_id"], action=action, priority=2, weight=row["citations"],
        reason=reason, auto_deprecate=auto, details={k: row.get(k) for k in _DETAIL_KEYS},
    )


def _watch_candidate(row: dict, bd) -> Candidate:
    """A "watch" item: early bad signals below the alert bar (never an alert, never a deprecation)."""
    votes = row["up"] + row["down"]
    reason = (f"{row['title']}: early bad signals, {row['up']} 👍 of {votes} votes (P(👍 rate < "
              f"{bd.max_thumbs_up_rate:.0%}) = {row['p_low']:.0%}), {row['reported']} of {row['citations']} answers "
              f"reported; below the alert bar ({bd.min_votes} votes, {bd.alert_probability:.0%})")
    if _evidence_text(row.get("evidence", {})):
        reason += f" — {_evidence_text(row['evidence'])}"
    return Candidate(problem="bad_document_watch", subject=row["doc_id"], action="watch", priority=3,
                     weight=row["citations"], reason=reason, details={k: row.get(k) for k in _DETAIL_KEYS})
