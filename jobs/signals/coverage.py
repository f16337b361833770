"""Coverage gaps (DESIGN.md "Quality monitoring", Coverage; seed 004 §3; issue 11 item 2).

A gap is a group of refused or low-confidence questions about one thing, grouped by meaning across languages:
`jobs.question_gaps.find_gaps` (default: 5 questions from >= 3 users within 14 days, config/monitoring.yaml
``coverage.questions``). That one function decides what a gap is for the scheduled job (findings → alerts,
review items), ``minerva coverage`` and the HTML report (red heatmap cells and the gap list).

The intent × topic cells stay as the heatmap's figures: per cell of the last ``window_days`` (30) its
refusal rate (with Wilson interval), average relevant documents retrieved (passages at or above
``answer.low``), thumbs-up rate, and ``gaps``: the keys of the gaps whose questions fall in the cell. A cell's
``reasons`` (refusal rate > 0.2, fewer than 2 relevant documents, thumbs-up < 0.4 once it holds
``min_questions``) describe the cell; they no longer raise findings (a topic split over 14 cells of 9
never reached the 50-question minimum, while the heatmap showed them red: issue 11).

Gaps are ranked by questions; the top ``top_gaps`` become review items with the gap's suggested action.
"""

from __future__ import annotations


from feedback import labels as stored_labels
from feedback import windows
from jobs._common import SignalResult, monitoring_config, snapshot, status_of, window
from jobs.classify import count_pending, label_before_signal, topic_labels
from jobs.findings import Finding, JobContext
from jobs.question_gaps import QuestionGap, find_gaps
from jobs.review import Candidate, filing_job
from jobs.stats import clearly_above, clearly_below, wilson_interval

SIGNAL = "coverage"
ALERT = "coverage_gap"

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
    scan = find_gaps(ctx.store, ctx.kb, cov.questions, now=ctx.now)
    with snapshot(ctx.store) as conn:
        cells = windows.coverage_cells(conn, since, until, float(ctx.settings.answer.low))
        labels = topic_labels(conn)
        unlabelled = count_pending(conn)
        in_cells = _gap_cells(conn, scan.gaps)
    status_cells = []
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
        row["gaps"] = sorted(in_cells.get((cell["intent"], cell["topic_id"]), ()))
        status_cells.append(row)
    findings = [_gap_finding(g, cov.questions) for g in scan.gaps]
    candidates = [_gap_candidate(g, f) for g, f in zip(scan.gaps[: cov.top_gaps], findings)]
    status = {"window_days": cov.window_days, "since": since, "until": until,
              "labelled_now": labelled.labelled if labelled else 0, "unlabelled": unlabelled,
              "min_questions": cov.min_questions, "cells": status_cells, "gaps": len(scan.gaps),
              "question_gaps": [g.to_json() for g in scan.gaps],
              "gap_rule": {"window_days": cov.questions.window_days, "min_questions": cov.questions.min_questions,
                           "min_users": cov.questions.min_users},
              "scan": {k: v for k, v in scan.to_json().items() if k != "gaps"}}
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


def _gap_cells(conn, gaps: list[QuestionGap]) -> dict[tuple[str, int], set[str]]:
    """(intent, topic_id) → keys of the gaps with a question labelled in that cell (``answer_labels``)."""
    found: dict[tuple[str, int], set[str]] = {}
    for gap in gaps:
        for label in stored_labels.labels_of_answers(conn, gap.answer_ids):
            found.setdefault((label["intent"], label["topic_id"]), set()).add(gap.key)
    return found


def _gap_finding(gap: QuestionGap, rule) -> Finding:
    languages = ", ".join(f"{n} {lang}" for lang, n in gap.by_language.items())
    return Finding(
        alert=ALERT,
        severity="warning",
        labels={"gap": gap.key},
        value=float(gap.n),
        threshold=float(rule.min_questions),
        n=gap.n,
        summary=(f"{gap.n} questions from {gap.users} users ({languages}) on “{gap.label}” were refused or "
                 f"answered with low confidence, e.g. “{gap.question}”; {gap.action_text}"),
        link=gap.nearest[0]["doc_id"] if gap.nearest else "",
        annotations={"rule": "question_group", "label": gap.label, "question": gap.question, "users": gap.users,
                     "by_language": gap.by_language, "by_user": gap.by_user, "samples": gap.samples,
                     "answer_ids": gap.answer_ids[:20], "nearest": gap.nearest, "best_score": gap.best_score,
                     "action": gap.action, "action_text": gap.action_text, "refused": gap.refused,
                     "first_seen": gap.first_seen, "last_seen": gap.last_seen},
    )


def _gap_candidate(gap: QuestionGap, finding: Finding) -> Candidate:
    return Candidate(
        problem=ALERT,
        subject=f"gap/{gap.key}",
        action=gap.action,
        priority=2,
        weight=gap.n,
        reason=finding.summary,
        details={"label": gap.label, "n": gap.n, "users": gap.users, "by_language": gap.by_language,
                 "samples": gap.samples, "nearest": gap.nearest, "action_text": gap.action_text},
    )
