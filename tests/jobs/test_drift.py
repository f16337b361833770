"""Drift: a clear shift alerts; the same shift on 30 questions is "insufficient data"; new categories."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jobs.review import items
from jobs.signals import drift
from tests.jobs.monitoring_helpers import add_answer, by_alert, label, store, any_store, make_ctx  # noqa: F401


@pytest.fixture
def ctx(any_store, tmp_path, sample_settings, sample_kb):  # noqa: F811
    """This module's signal on each backend: a SQLite file, then PostgreSQL (`monitoring_helpers.any_store`)."""
    return make_ctx(any_store, tmp_path, sample_settings, sample_kb)


NOW = datetime.now(timezone.utc)


def _ask(store, intent: str, *, days_ago: float, topic: int = 1, language: str = "en") -> None:
    label(store, add_answer(store, created_at=NOW - timedelta(days=days_ago), language=language), intent, topic)


def _shift(store, scale: float) -> None:
    """Baseline: how-to 60 %, lookup 30 %, troubleshooting 10 %; recent week: 20 / 30 / 50 %."""
    for intent, share in (("how-to", 0.6), ("lookup", 0.3), ("troubleshooting", 0.1)):
        for i in range(round(400 * scale * share)):
            _ask(store, intent, days_ago=10 + i % 70)
    for intent, share in (("how-to", 0.2), ("lookup", 0.3), ("troubleshooting", 0.5)):
        for i in range(round(200 * scale * share)):
            _ask(store, intent, days_ago=0.5 + i % 6)


def test_a_clearly_shifted_intent_distribution_is_drift(ctx) -> None:  # noqa: F811
    _shift(ctx.store, 1.0)
    result = drift.check(ctx)
    intent = result.status["metrics"]["intent"]
    assert intent["status"] == "drift"
    assert (intent["n_baseline"], intent["n_recent"]) == (400, 200)
    assert intent["p_value"] < 0.001 and intent["js_distance"] >= 0.1 and intent["kl_smoothed"] > 0
    assert intent["changes"][0]["category"] == "troubleshooting"
    assert result.status["metrics"]["language"]["status"] == "stable"       # everything else stayed put
    assert result.status["metrics"]["cited_doc"]["status"] == "insufficient_data"  # refusals cite nothing
    findings = drift.run(ctx)
    (finding,) = by_alert(findings, "drift")
    assert (finding.severity, finding.labels, finding.threshold) == ("info", {"metric": "intent"}, 0.1)
    assert [(i["problem"], i["action"], i["priority"]) for i in items(ctx.store)] == [("drift", "review_drift", 3)]


def test_the_same_shift_on_30_questions_is_insufficient_data(ctx) -> None:  # noqa: F811
    _shift(ctx.store, 0.05)  # 20 baseline + 10 recent questions, same shares
    result = drift.check(ctx)
    intent = result.status["metrics"]["intent"]
    assert (intent["n_baseline"], intent["n_recent"]) == (20, 10)
    assert intent["status"] == "insufficient_data"
    assert result.findings == [] and result.candidates == []


def test_an_unchanged_distribution_is_stable(ctx) -> None:  # noqa: F811
    for i in range(300):
        _ask(ctx.store, ("how-to", "lookup", "policy")[i % 3], days_ago=10 + i % 60)
    for i in range(150):
        _ask(ctx.store, ("how-to", "lookup", "policy")[i % 3], days_ago=i % 6)
    result = drift.check(ctx)
    assert result.status["metrics"]["intent"]["status"] == "stable" and result.findings == []


def test_a_new_category_is_its_own_event(ctx) -> None:  # noqa: F811
    for i in range(300):
        _ask(ctx.store, "lookup", days_ago=10 + i % 60, topic=1 + i % 2)
    for i in range(130):
        _ask(ctx.store, "lookup", days_ago=i % 6, topic=1 + i % 2)
    for i in range(20):
        _ask(ctx.store, "lookup", days_ago=i % 6, topic=3, language="ja")
    findings = drift.run(ctx)
    new = {(f.labels["metric"], f.labels["category"]): f for f in by_alert(findings, "drift_new_category")}
    assert set(new) == {("topic", "3"), ("language", "ja")}
    assert new[("topic", "3")].n == 20 and new[("topic", "3")].severity == "info"
    assert "never before" in new[("topic", "3")].summary
