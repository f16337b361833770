"""Gap queries, their stored scores and alerts (knowledge.gaps, jobs.gaps), and the index A/B gate."""

from __future__ import annotations

import dataclasses
import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from config import ConfigError, SourceConfig
from feedback import FeedbackStore
from jobs.gaps import DROP_ALERT, GAP_ALERT, compare, run_gaps
from knowledge import KnowledgeBase
from knowledge.errors import GateRejected
from knowledge.gaps import (
    GapQuery,
    GapQuerySet,
    GapScore,
    ab_gate,
    load_gap_queries,
    make_gate,
    run_gap_queries,
)
from knowledge.index import current_generation
from tests.conftest import SAMPLE_KB

TIMEOUT = GapQuery("How long before a webhook delivery times out?")
RATE_LIMIT = GapQuery("What is the API rate limit for Pro customers?")


@pytest.fixture
def store(tmp_path):
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as store:
        yield store


# --- the query file --------------------------------------------------------------------------------------


def test_bundled_gap_queries_converge_on_the_sample_kb(sample_kb):
    query_set = load_gap_queries()
    assert len(query_set.queries) >= 10 and query_set.drop == 0.2
    scores = run_gap_queries(sample_kb, query_set.queries)
    assert [s.query for s in scores if not s.converged] == []
    assert all(s.generation == sample_kb.index().name and s.top_doc_id for s in scores)


def test_real_corpora_gap_queries_load():
    query_set = load_gap_queries(SAMPLE_KB.parent.parent / "config" / "gap_queries-real.yaml")
    assert {c for q in query_set.queries for c in q.collections} == {"handbook", "pydantic", "runbooks"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("queries:\n  - query: a\n    expectd: 0.7\n", "unknown key(s) ['expectd']"),
        ("expected: 1.5\nqueries: [a]\n", "expected must be a number in [0, 1]"),
        ("queries:\n  - expected: 0.5\n", "needs a non-empty `query`"),
        ("queries: nope\n", "`queries:` list"),
    ],
)
def test_bad_gap_query_files_are_rejected_with_the_reason(tmp_path, text, message):
    path = tmp_path / "gaps.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        load_gap_queries(path)


# --- gaps, drops, convergence ----------------------------------------------------------------------------


def test_compare_reports_gaps_and_drops():
    scores = [GapScore("a", 0.45, 0.75), GapScore("b", 0.9, 0.75), GapScore("c", 0.8, 0.75)]
    findings = compare(scores, {"a": 0.85, "b": 0.95, "c": 0.99}, drop=0.2)
    assert [(f.alert, f.labels["query"]) for f in findings] == [(GAP_ALERT, "a"), (DROP_ALERT, "a")]
    assert findings[0].severity == "warning" and findings[1].severity == "critical"
    assert findings[1].annotations["previous"] == 0.85 and findings[1].annotations["fall"] == 0.4
    assert compare(scores, {}, drop=0.2)[0].alert == GAP_ALERT  # a first run has nothing to fall from


def test_a_gap_query_below_threshold_is_reported_and_every_score_stored(sample_kb, store):
    queries = GapQuerySet((TIMEOUT, GapQuery("What's the wifi password at the Tokyo office?")))
    report = run_gaps(sample_kb, store, queries)
    assert not report.converged and report.remaining == ["What's the wifi password at the Tokyo office?"]
    assert [(f.alert, f.labels["query"]) for f in report.findings] == [(GAP_ALERT, report.remaining[0])]
    later = run_gaps(sample_kb, store, queries, now=report.measured_at + timedelta(hours=1))
    assert later.previous == {s.query: pytest.approx(s.score) for s in report.scores}
    history = store.gap_score_history(TIMEOUT.query)
    assert [h["run_id"] for h in history] == [later.run_id, report.run_id]
    assert history[0]["measured_at"] > history[1]["measured_at"] and history[0]["generation"]
    assert json.loads(json.dumps(later.to_json()))["remaining"] == report.remaining


# --- a regressing generation: the gate keeps the old one, the loop raises a drop -----------------------------


@pytest.fixture
def api_kb(tmp_path, sample_settings, embedder) -> KnowledgeBase:
    folder = tmp_path / "api"
    folder.mkdir()
    for name in ("webhooks.md", "rate-limits.md"):
        shutil.copyfile(SAMPLE_KB / "api" / name, folder / name)
    settings = dataclasses.replace(sample_settings, sources=[SourceConfig(name="api", path=str(folder))])
    kb = KnowledgeBase(settings, tmp_path / "home", embedder=embedder)
    kb.sync()
    return kb


def test_regressing_generation_fails_the_gate_and_a_drop_is_alerted(api_kb, store):
    queries = GapQuerySet((TIMEOUT, RATE_LIMIT))
    before = run_gaps(api_kb, store, queries)
    assert before.converged
    live = current_generation(api_kb.home)
    (Path(api_kb.settings.sources[0].path) / "webhooks.md").unlink()  # the page answering the timeout question
    gate = make_gate(api_kb, queries.queries, tolerance=0.05)
    with pytest.raises(GateRejected, match="How long before a webhook delivery times out") as rejected:
        api_kb.sync(before_switch=gate)
    assert current_generation(api_kb.home) == live  # the old generation stays live
    assert rejected.value.result is gate.result and not gate.result.passed
    assert gate.result.new_scores[0].score < gate.result.old_scores[0].score - 0.2
    # without the gate the regression goes live, and the next run of the loop raises the drop alert
    api_kb.sync()
    after = run_gaps(api_kb, store, queries, now=before.measured_at + timedelta(days=1))
    alerts = {(f.alert, f.labels["query"]) for f in after.findings}
    assert (DROP_ALERT, TIMEOUT.query) in alerts and (GAP_ALERT, TIMEOUT.query) in alerts
    assert after.remaining == [TIMEOUT.query]


def test_unchanged_answers_pass_the_gate(api_kb):
    page = Path(api_kb.settings.sources[0].path) / "rate-limits.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nContact support for higher limits.\n", encoding="utf-8")
    gate = make_gate(api_kb, (TIMEOUT, RATE_LIMIT), tolerance=0.05)
    report = api_kb.sync(before_switch=gate)
    assert gate.result.passed and "within tolerance" in gate.result.reason
    assert current_generation(api_kb.home) == report.generation
    assert ab_gate(None, api_kb.home, api_kb, [TIMEOUT]).passed  # first build: nothing to compare with


def test_cli_gaps_reports_gaps_and_stores_scores(sample_home, embedder, monkeypatch, tmp_path):
    import knowledge.service
    from bot.cli.main import cli

    home = tmp_path / "home"
    home.mkdir()
    (home / "index").symlink_to(sample_home / "index")  # the session index, with a store of our own
    monkeypatch.setattr(knowledge.service, "load_embedder", lambda cfg: embedder)
    queries = tmp_path / "gaps.yaml"
    queries.write_text(f"queries:\n  - {TIMEOUT.query}\n  - query: Is there a GPU plan?\n    expected: 0.9\n")
    result = CliRunner().invoke(cli, ["--home", str(home), "gaps", "--queries", str(queries)])
    assert result.exit_code == 0, result.output
    assert "[warning] Gap query 'Is there a GPU plan?' scores" in result.stdout
    assert "not converged: 1 of 2 queries remain below their expected score" in result.stdout
    result = CliRunner().invoke(cli, ["--home", str(home), "gaps", "--queries", str(queries), "--json"])
    data = json.loads(result.stdout)
    assert data["remaining"] == ["Is there a GPU plan?"] and all(s["previous"] is not None for s in data["scores"])
    with FeedbackStore.open(home / "minerva.sqlite") as store:
        assert len(store.gap_score_history(TIMEOUT.query)) == 2


def test_gap_scores_are_validated(store):
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        store.record_gap_scores("r1", [{"query": "q", "score": 1.5, "expected": 0.75}], generation="g")
    with pytest.raises(ValueError, match="timezone-aware"):
        store.record_gap_scores("r1", [{"query": "q", "score": 0.5, "expected": 0.75}], generation="g",
                                measured_at=datetime(2026, 1, 1))
    store.record_gap_scores("r1", [{"query": "q", "score": 0.5, "expected": 0.75}], generation="g",
                            measured_at=datetime(2026, 1, 1, tzinfo=timezone.utc))
    assert store.last_gap_scores()["q"]["score"] == 0.5
    assert store.last_gap_scores(before=datetime(2026, 1, 1, tzinfo=timezone.utc)) == {}
