"""Coverage gaps: intent × topic cells that are asked often but answered badly (DESIGN.md "Quality
monitoring", Coverage; seed 004 §3).

A cell with at least ``coverage.min_questions`` questions (50, the seed's ``HAVING n > 50``) in the last
``window_days`` (30) is a gap when any of these holds (config/monitoring.yaml ``coverage``):

- refusal rate > 0.2 — the whole Wilson interval above it;
- average relevant documents retrieved < 2 — distinct documents with a passage scoring at least
  ``answer.low`` (the composer's cut-off), averaged over the cell's questions, refusals included;
- thumbs-up rate < 0.4 — the whole Wilson interval of up / (up + down) below it, so a few votes never fire.

Gaps are ranked by volume; the top ``top_gaps`` become "add or extend documents" review items. The status
is the heatmap: every cell's figures.
"""

from __future__ import annotations

from typing import Any

from jobs._common import SignalResult, monitoring_config, rows, snapshot, status_of, window
from jobs.classify import count_pending, label_before_signal, topic_labels
from jobs.findings import Finding, JobContext
from jobs.review import Candidate, filing_job
from jobs.stats import clearly_above, clearly_below, wilson_interval

SIGNAL = "coverage"
ALERT = "coverage_gap"

_CELLS_SQL = """
    WITH a AS MATERIALIZED (
        SELECT l.answer_id, l.intent, l.topic_id, answers.refused,
               (SELECT COUNT(*) FROM votes WHERE votes.answer_id = l.answer_id AND votes.value = 'up') AS up,
               (SELECT COUNT(*) FROM votes WHERE votes.answer_id = l.answer_id AND votes.value = 'down') AS down
        FROM answer_labels l JOIN answers ON answers.answer_id = l.answer_id
        WHERE l.created_at >= :since AND l.created_at < :until
    ),
    rd AS (
        -- relevant documents per answered question; a refusal has none by definition (nothing >= low)
        SELECT a.answer_id, COUNT(DISTINCT p.doc_id) AS docs
        FROM a JOIN answer_passages p ON p.answer_id = a.answer_id
        WHERE a.refused = 0 AND p.score >= :low
        GROUP BY a.answer_id
    )
    SELECT a.intent AS intent, a.topic_id AS topic_id, COUNT(*) AS n, SUM(a.refused) AS refusals,
           AVG(COALESCE(rd.docs, 0)) AS avg_retrieved, SUM(a.up) AS up, SUM(a.down) AS down
    FROM a LEFT JOIN rd ON rd.answer_id = a.answer_id
    GROUP BY a.intent, a.topic_id
    ORDER BY n DESC, a.intent, a.topic_id
"""


def check(ctx: JobContext) -> SignalResult:
    """Evaluates every intent × topic cell of the window (labelling pending answers first when possible).

    Returns:
        SignalResult: status {"window_days", "since", "until", "labelled_now", "unlabelled", "cells": [...],
        "gaps": int}; each cell {"intent", "topic_id", "topic", "n", "refusal_rate", "refusal_ci",
        "avg_retrieved", "votes", "thumbs_up_rate", "thumbs_up_ci", "evaluated", "reasons"}; findings
        "coverage_gap" (warning) by volume; review candidates for the top gaps.
    """
    cfg = monitoring_config(ctx)
    cov, level = cfg.coverage, cfg.confidence_level
    labelled = label_before_signal(ctx, cfg.classification)
    since, until = window(ctx.now, cov.window_days)
    with snapshot(ctx.store) as conn:
        cells = rows(conn, _CELLS_SQL, {"since": since, "until": until, "low": float(ctx.settings.answer.low)})
        labels = topic_labels(conn)
        unlabelled = count_pending(conn)
    findings, candidates, status_cells = [], [], []
    for cell in cells:
        n, votes = cell["n"], cell["up"] + cell["down"]
        reasons = []
        evaluated = n >= cov.min_questions
        if evaluated:
            if clearly_above(cell["refusals"], n, cov.max_refusal_rate, level):
                reasons.append(("refusal_rate", cell["refusals"] / n, cov.max_refusal_rate))
            if cell["avg_retrieved"] < cov.min_avg_retrieved:
                reasons.append(("avg_retrieved", cell["avg_retrieved"], cov.min_avg_retrieved))
            if clearly_below(cell["up"], votes, cov.min_thumbs_up_rate, level):
                reasons.append(("thumbs_up_rate", cell["up"] / votes, cov.min_thumbs_up_rate))
        row = _status_cell(cell, labels, level, evaluated, reasons)
        status_cells.append(row)
        if reasons:
            findings.append(_finding(row, reasons))
            if len(candidates) < cov.top_gaps:
                candidates.append(_candidate(row, findings[-1]))
    status = {"window_days": cov.window_days, "since": since, "until": until,
              "labelled_now": labelled.labelled if labelled else 0, "unlabelled": unlabelled,
              "min_questions": cov.min_questions, "cells": status_cells, "gaps": len(findings)}
    return SignalResult(status, findings, candidates)


#: The report's figures (see `check`), without touching the review queue.
summarize = status_of(check)
#: The scheduled job: findings for the alert layer; candidates to the review queue.
run = filing_job(SIGNAL, check)


def _status_cell(cell: dict, labels: dict[int, str], level: float, evaluated: bool, reasons: list) -> dict:
    n, votes = cell["n"], cell["up"] + cell["down"]
    return {
        "intent": cell["intent"],
        "topic_id": cell["topic_id"],
        "topic": labels.get(cell["topic_id"], ""),
        "n": n,
        "refusal_rate": round(cell["refusals"] / n, 4),
        "refusal_ci": [round(x, 4) for x in wilson_interval(cell["refusals"], n, level)],
        "avg_retrieved": round(cell["avg_retrieved"], 3),
        "votes": votes,
        "thumbs_up_rate": round(cell["up"] / votes, 4) if votes else None,
        "thumbs_up_ci": [round(x, 4) for x in wilson_interval(cell["up"], votes, level)] if votes else None,
        "evaluated": evaluated,
        "reasons": [name for name, _, _ in reasons],
    }


def _finding(row: dict, reasons: list) -> Finding:
    name, value, threshold = reasons[0]
    return Finding(
        alert=ALERT,
        severity="warning",
        labels={"intent": row["intent"], "topic_id": str(row["topic_id"])},
        value=round(float(value), 4),
        threshold=float(threshold),
        n=row["n"],
        summary=f"{row['n']} {row['intent']} questions on “{row['topic']}”: " + "; ".join(map(_describe, reasons)),
        annotations={"rule": name, "reasons": row["reasons"], "topic": row["topic"],
                     "refusal_rate": row["refusal_rate"], "refusal_ci": row["refusal_ci"],
                     "avg_retrieved": row["avg_retrieved"], "thumbs_up_rate": row["thumbs_up_rate"],
                     "thumbs_up_ci": row["thumbs_up_ci"], "votes": row["votes"]},
    )


def _describe(reason: tuple) -> str:
    """One violated rule in words, e.g. "refusal rate 45% > 20%"."""
    name, value, threshold = reason
    if name == "avg_retrieved":
        return f"{value:.1f} relevant documents per question < {threshold:g}"
    if name == "refusal_rate":
        return f"refusal rate {value:.0%} > {threshold:.0%}"
    return f"thumbs-up rate {value:.0%} < {threshold:.0%}"


def _candidate(row: dict, finding: Finding) -> Candidate:
    return Candidate(
        problem=ALERT,
        subject=f"{row['intent']}/{row['topic_id']}",
        action="add_or_extend_documents",
        priority=2,
        weight=row["n"],
        reason=finding.summary,
        details={"intent": row["intent"], "topic_id": row["topic_id"], "topic": row["topic"], "n": row["n"],
                 "reasons": row["reasons"]},
    )
