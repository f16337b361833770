"""The convergence loop's check (seed 001): run the gap queries, store every score, compare, report.

`run_gaps` scores each core query on the live generation, stores the scores (``gap_scores`` table, one
run per call) and compares them with each query's previous score:

- score < expected → ``gap_query_below_threshold`` (warning: a coverage gap, DESIGN.md "Alerts");
- previous − score > drop (0.2 by default; seed 000's example is 0.85 → 0.45) → ``gap_query_drop``
  (critical: a page that answered a core question changed or vanished).

The report says whether every query has converged (score >= expected) or which remain. Run it after every
sync (the loop's step 5, "verify") and as a scheduled job (`run`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone

from jobs.findings import Finding, JobContext
from knowledge.gaps import (
    GapQuerySet,
    GapScore,
    gap_query_set_for,
    judged_collections,
    live_index,
    run_gap_queries,
    scope_queries,
)

GAP_ALERT = "gap_query_below_threshold"
DROP_ALERT = "gap_query_drop"
#: Key of `JobContext.extra` that may hold a loaded `GapQuerySet` (else the file beside the config is read).
QUERIES_KEY = "gap_queries"


@dataclass
class GapReport:
    """One run of the gap queries.

    Attributes:
        run_id: the run's id in ``gap_scores``.
        measured_at: when it ran (UTC).
        scores: one per query, in file order.
        previous: query → the score of the run before (queries never run before are absent).
        findings: gap and drop findings, gaps first.
    """

    run_id: str
    measured_at: datetime
    scores: list[GapScore]
    previous: dict[str, float] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    @property
    def remaining(self) -> list[str]:
        """Queries still below their expected score."""
        return [s.query for s in self.scores if not s.converged]

    @property
    def converged(self) -> bool:
        """True when every query reaches its expected score (the loop may stop)."""
        return not self.remaining

    def to_json(self) -> dict:
        """A JSON-ready dict: scores with their previous value, findings, convergence."""
        return {
            "run_id": self.run_id,
            "measured_at": self.measured_at.isoformat(),
            "converged": self.converged,
            "remaining": self.remaining,
            "scores": [{**s.to_json(), "previous": self.previous.get(s.query)} for s in self.scores],
            "findings": [{"alert": f.alert, "severity": f.severity, "query": f.labels["query"],
                          "value": round(f.value, 4), "threshold": f.threshold, "summary": f.summary}
                         for f in self.findings],
        }


def compare(scores: list[GapScore], previous: dict[str, float], drop: float) -> list[Finding]:
    """Findings for one run: each query below its expected score, and each that fell by more than ``drop``.

    Args:
        scores: this run's scores.
        previous: query → its previous score (absent for a new query: no drop check).
        drop: the largest fall in [0, 1] that is not an alert.

    Returns:
        Gap findings (warning) in query order, then drop findings (critical).
    """
    gaps = [
        Finding(alert=GAP_ALERT, severity="warning", labels={"query": s.query}, value=s.score,
                threshold=s.expected, n=1,
                summary=f"Gap query {s.query!r} scores {s.score:.2f}, below its expected {s.expected:.2f}",
                link=s.top_doc_id, annotations={"top_doc_id": s.top_doc_id, "generation": s.generation})
        for s in scores if not s.converged
    ]
    drops = [
        Finding(alert=DROP_ALERT, severity="critical", labels={"query": s.query}, value=s.score,
                threshold=drop, n=2,
                summary=(f"Gap query {s.query!r} fell from {previous[s.query]:.2f} to {s.score:.2f} "
                         f"(more than {drop:.2f}): the page that answered it changed or was removed"),
                link=s.top_doc_id,
                annotations={"previous": previous[s.query], "fall": round(previous[s.query] - s.score, 4),
                             "top_doc_id": s.top_doc_id, "generation": s.generation})
        for s in scores if s.query in previous and previous[s.query] - s.score > drop
    ]
    return gaps + drops


def run_gaps(kb, store, query_set: GapQuerySet, *, now: datetime | None = None) -> GapReport:
    """Score the gap queries on ``kb``'s live generation, store the scores, compare with the previous run.

    Args:
        kb: a `knowledge.KnowledgeBase` with an index.
        store: the `feedback.FeedbackStore` holding ``gap_scores``.
        query_set: the queries and thresholds (`knowledge.gaps.load_gap_queries`).
        now: the run's time (aware); None = now. Previous scores are those measured before it.
            Only queries about collections that are configured and indexed run (`knowledge.gaps.scope_queries`).

    Returns:
        The GapReport (its ``findings`` go to the alert layer).

    Raises:
        IndexNotBuilt: nothing ingested yet.
        StoreUnavailable: the scores could not be read or stored.
    """
    now = now or datetime.now(timezone.utc)
    query_set = scope_queries(query_set, judged_collections(live_index(kb), kb.settings))
    scores = run_gap_queries(kb, query_set.queries)
    previous = {q: row["score"] for q, row in store.last_gap_scores(before=now).items()}
    run_id = uuid.uuid4().hex
    store.record_gap_scores(
        run_id, [{"query": s.query, "score": min(max(s.score, 0.0), 1.0), "expected": s.expected,
                  "top_doc_id": s.top_doc_id} for s in scores],
        generation=scores[0].generation if scores else "", measured_at=now,
    )
    return GapReport(run_id, now, scores, previous, compare(scores, previous, query_set.drop))


def run(ctx: JobContext) -> list[Finding]:
    """The scheduled job: `run_gaps` with the gap queries beside the config (or ``ctx.extra["gap_queries"]``)."""
    query_set = ctx.extra.get(QUERIES_KEY) or gap_query_set_for(ctx.settings)
    return run_gaps(ctx.kb, ctx.store, query_set, now=ctx.now).findings
