"""Citation health: citations per answer, Gini over the indexed documents, no-citation and chunk-level rates."""

from __future__ import annotations

import pytest

from jobs._common import is_active
from jobs.signals import citation_health
from tests.jobs.monitoring_helpers import add_answer, by_alert, store, any_store, make_ctx  # noqa: F401


@pytest.fixture
def ctx(any_store, tmp_path, sample_settings, sample_kb):  # noqa: F811
    """This module's signal on each backend: a SQLite file, then PostgreSQL (`monitoring_helpers.any_store`)."""
    return make_ctx(any_store, tmp_path, sample_settings, sample_kb)


def test_too_few_answers_is_insufficient_data(ctx) -> None:  # noqa: F811
    for _ in range(40):
        add_answer(ctx.store, cited=("api:errors.md",))
    result = citation_health.check(ctx)
    assert result.status["status"] == "insufficient_data" and result.findings == []
    assert result.status["avg_citations"] == 1.0


def _active(ctx) -> list[str]:
    """The population of the Gini: active documents (the sample has expired and superseded pages too)."""
    return sorted(d for d, doc in ctx.kb.index().documents.items() if is_active(doc, ctx.now))


def test_spread_citations_are_healthy(ctx) -> None:  # noqa: F811
    docs = _active(ctx)
    for i in range(120):
        add_answer(ctx.store, cited=(docs[i % len(docs)], docs[(i + 1) % len(docs)]))
    result = citation_health.check(ctx)
    s = result.status
    assert result.findings == []
    assert (s["status"], s["answered"], s["avg_citations"], s["no_citation_rate"], s["chunk_level_ratio"]) == (
        "ok", 120, 2.0, 0.0, 1.0)
    assert s["gini"] < 0.1 and s["documents"] == len(docs) and s["documents_cited"] == len(docs)
    assert s["population"] == "active indexed documents"
    assert s["trend"][-1]["answered"] == 120


def test_concentrated_thin_and_unsupported_citations_alert(ctx) -> None:  # noqa: F811
    for _ in range(90):  # one document cited, its passage not among those retrieved
        add_answer(ctx.store, cited=("api:errors.md",), retrieved=[{"chunk_id": "plans:sla.md#0", "doc_id": "plans:sla.md",
                                                                     "score": 0.7}])
    for _ in range(30):  # answered, but nothing cited
        add_answer(ctx.store, cited=(), refused=False, top_score=0.7)
    findings = {f.alert: f for f in citation_health.run(ctx)}
    n_docs = len(_active(ctx))
    assert set(findings) == {"citation_avg_low", "citation_gini_high", "no_citation_rate", "chunk_ratio_low"}
    assert findings["citation_avg_low"].value == pytest.approx(90 / 120)
    assert findings["citation_gini_high"].value == pytest.approx((n_docs - 1) / n_docs, abs=1e-4)  # one of n cited
    assert (findings["no_citation_rate"].severity, findings["no_citation_rate"].value) == ("critical", 0.25)
    assert findings["no_citation_rate"].annotations["ci"][0] > 0.10
    assert (findings["chunk_ratio_low"].severity, findings["chunk_ratio_low"].value) == ("info", 0.0)
    assert {f.labels["metric"] for f in findings.values()} == {"avg_citations", "gini", "no_citation_rate",
                                                               "chunk_level_ratio"}
