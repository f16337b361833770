"""Coverage gaps: many refusals in one topic → a gap for that intent × topic cell, ranked by volume."""

from __future__ import annotations

from jobs.review import items
from jobs.signals import coverage
from tests.jobs.monitoring_helpers import add_answer, by_alert, ctx, store  # noqa: F401

LEAVE = ["what's the parental leave policy?", "what is our parental leave policy for new fathers?",
         "parental leave policy for adoptive parents?", "is parental leave paid under our policy?",
         "what does the policy say about parental leave length?"]
GPU = ["how do I get a GPU instance for ML training?", "how can I request a GPU machine for ML workloads?",
       "how do I set up a GPU instance for machine learning?"]
RATE = ["what's the API rate limit for Pro customers?", "what is the rate limit on the Pro plan API?",
        "what's the request rate limit for Pro?"]


def _answered(store, question: str) -> None:
    # two relevant documents retrieved, one cited, and a thumbs-up
    retrieved = [{"chunk_id": "api:rate-limits.md#1", "doc_id": "api:rate-limits.md", "score": 0.85},
                 {"chunk_id": "plans:plans-overview.md#2", "doc_id": "plans:plans-overview.md", "score": 0.62},
                 {"chunk_id": "api:errors.md#0", "doc_id": "api:errors.md", "score": 0.12}]
    add_answer(store, question=question, cited=("api:rate-limits.md",), retrieved=retrieved, votes=("up",))


def test_many_refusals_in_one_topic_make_a_coverage_gap(ctx) -> None:  # noqa: F811
    for i in range(70):
        add_answer(ctx.store, question=LEAVE[i % len(LEAVE)])                 # refused
    for i in range(55):
        add_answer(ctx.store, question=GPU[i % len(GPU)])                     # refused
    for i in range(60):
        _answered(ctx.store, RATE[i % len(RATE)])
    findings = coverage.run(ctx)
    status = coverage.summarize(ctx)
    assert status["unlabelled"] == 0 and status["labelled_now"] == 0     # run() labelled them all first
    gaps = by_alert(findings, "coverage_gap")
    assert [f.n for f in gaps] == [70, 55]                                 # ranked by volume
    leave, gpu = gaps
    assert leave.labels["intent"] == "policy" and gpu.labels["intent"] == "how-to"
    assert leave.annotations["rule"] == "refusal_rate" and leave.value == 1.0 and leave.threshold == 0.2
    assert set(leave.annotations["reasons"]) == {"refusal_rate", "avg_retrieved"}
    assert "parental leave" in leave.annotations["topic"]
    healthy = [c for c in status["cells"] if c["evaluated"] and not c["reasons"]]
    assert [(c["n"], c["refusal_rate"], c["avg_retrieved"], c["thumbs_up_rate"]) for c in healthy] == [(60, 0.0, 2.0, 1.0)]
    queue = items(ctx.store)
    assert [(i["action"], i["weight"]) for i in queue] == [("add_or_extend_documents", 70), ("add_or_extend_documents", 55)]
    assert queue[0]["subject"] == f"policy/{leave.labels['topic_id']}"


def test_cells_below_the_minimum_are_reported_but_never_gaps(ctx) -> None:  # noqa: F811
    for i in range(30):
        add_answer(ctx.store, question=LEAVE[i % len(LEAVE)])
    result = coverage.check(ctx)
    assert result.findings == []
    (cell,) = result.status["cells"]
    assert (cell["n"], cell["refusal_rate"], cell["evaluated"]) == (30, 1.0, False)
