"""The five knowledge-quality signals and the re-index score as scheduler jobs (DESIGN.md "Quality monitoring").

Each module has ``check(ctx) -> SignalResult`` (status, findings, review candidates), ``summarize(ctx) ->
dict`` (the status, for reports) and ``run(ctx) -> list[Finding]`` (the job: it also files its review
candidates). `SIGNAL_JOBS` is what the scheduler registers::

    from jobs.signals import SIGNAL_JOBS
    findings = SIGNAL_JOBS["coverage"](ctx)
"""

from __future__ import annotations

from jobs import reindex
from jobs._common import SignalResult
from jobs.findings import JobContext
from jobs.review import submit
from jobs.signals import bad_docs, citation_health, contradictions, coverage, drift, freshness

#: Job name → ``run(ctx) -> list[Finding]``.
SIGNAL_JOBS = {
    "coverage": coverage.run,
    "freshness": freshness.run,
    "bad_docs": bad_docs.run,
    "citation_health": citation_health.run,
    "drift": drift.run,
    "reindex": reindex.run,
    "contradictions": contradictions.run,
}
#: Job name → ``check(ctx) -> SignalResult`` (the same evaluation; writes no review items, though coverage
#: and drift label pending answers first).
SIGNAL_CHECKS = {
    "coverage": coverage.check,
    "freshness": freshness.check,
    "bad_docs": bad_docs.check,
    "citation_health": citation_health.check,
    "drift": drift.check,
    "reindex": reindex.check,
    "contradictions": contradictions.check,
}
#: Job name → ``summarize(ctx) -> dict`` (the status a report charts; contradictions has its own job only).
SIGNAL_SUMMARIES = {
    "coverage": coverage.summarize,
    "freshness": freshness.summarize,
    "bad_docs": bad_docs.summarize,
    "citation_health": citation_health.summarize,
    "drift": drift.summarize,
    "reindex": reindex.summarize,
}



def run_signal(name: str, ctx: JobContext) -> SignalResult:
    """Runs one signal like its job does (review candidates filed) but returns the whole result.

    Raises:
        KeyError: unknown signal name (see `SIGNAL_CHECKS`).
    """
    result = SIGNAL_CHECKS[name](ctx)
    submit(ctx.store, name, result.candidates, now=ctx.now)
    return result


__all__ = ["SIGNAL_CHECKS", "SIGNAL_JOBS", "SIGNAL_SUMMARIES", "SignalResult", "run_signal"]
