"""The auto-reindex score (stale +3, low quality +2, chunking drift +1, source modified +5) and its execution."""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from feedback import job_runs
from jobs import reindex
from jobs.review import items
from knowledge.sync import chunker_signature
from tests.jobs.monitoring_helpers import add_answer, by_alert, make_ctx, private_kb, store  # noqa: F401

NOW = datetime.now(timezone.utc)


class IndexOf:
    """A stand-in knowledge base whose live index holds exactly these document records."""

    def __init__(self, documents: dict[str, dict]):
        self.documents = documents

    def index(self):
        return SimpleNamespace(documents=self.documents)


def _doc(tmp_path, doc_id: str, *, age_days: float = 10, chunker: str | None = None, touched: bool = False,
         settings=None) -> dict:
    path = tmp_path / doc_id.replace(":", "_")
    path.write_text("# page\n")
    indexed = NOW - timedelta(hours=1)
    mtime = (NOW - timedelta(hours=2)).timestamp()
    os.utime(path, (mtime, mtime))
    record_mtime = datetime.fromtimestamp(mtime, tz=timezone.utc)
    if touched:  # edited after indexing
        os.utime(path, (time.time(), time.time()))
    return {"doc_id": doc_id, "collection": doc_id.split(":")[0], "title": doc_id, "url": "", "path": str(path),
            "last_modified": (NOW - timedelta(days=age_days)).isoformat(), "indexed_at": indexed.isoformat(),
            "mtime": record_mtime.isoformat(), "size": path.stat().st_size, "stage": "active", "expires_at": None,
            "chunker": chunker or chunker_signature(settings.chunking)}


def test_scoring_cases(store, tmp_path, sample_settings) -> None:  # noqa: F811
    docs = {
        "api:fresh.md": _doc(tmp_path, "api:fresh.md", settings=sample_settings),
        "api:stale.md": _doc(tmp_path, "api:stale.md", age_days=200, settings=sample_settings),
        "api:stale-bad.md": _doc(tmp_path, "api:stale-bad.md", age_days=200, settings=sample_settings),
        "api:rechunk.md": _doc(tmp_path, "api:rechunk.md", chunker="0ld5ignature", settings=sample_settings),
        "api:edited.md": _doc(tmp_path, "api:edited.md", touched=True, settings=sample_settings),
        "api:few-votes.md": _doc(tmp_path, "api:few-votes.md", settings=sample_settings),
    }
    for _ in range(5):
        add_answer(store, cited=("api:stale-bad.md",), votes=("down",), top_score=0.5)
    for _ in range(4):  # below min_answers (5): no quality trigger
        add_answer(store, cited=("api:few-votes.md",), votes=("down",), top_score=0.5)
    ctx = make_ctx(store, tmp_path, sample_settings, IndexOf(docs), reindex={"auto_execute": "off"})
    scored = {i.doc_id: i for i in reindex.score_documents(ctx)}
    # issue 11 item 4: only what a sync would change is queued for re-indexing; merely stale → freshness signal
    assert set(scored) == {"api:stale-bad.md", "api:rechunk.md", "api:edited.md"}
    assert (scored["api:stale-bad.md"].score, scored["api:stale-bad.md"].priority) == (5, "review")
    assert scored["api:stale-bad.md"].reasons == ["stale", "low_quality"]
    assert scored["api:stale-bad.md"].fused == pytest.approx(0.4 * 0.5)   # all 👎: only the confidence part
    assert (scored["api:rechunk.md"].score, scored["api:rechunk.md"].priority) == (1, "review")
    assert (scored["api:edited.md"].score, scored["api:edited.md"].priority) == (5, "high")
    assert scored["api:edited.md"].sync_changes_it and not scored["api:stale-bad.md"].sync_changes_it
    findings = reindex.run(ctx)
    (finding,) = by_alert(findings, "reindex_needed")
    assert (finding.labels, finding.severity, finding.value) == ({"collection": "api"}, "warning", 1.0)
    assert "1 will change on sync" in finding.summary
    assert sorted((i["problem"], i["subject"], i["action"]) for i in items(store)) == [
        ("reindex_review", "api:rechunk.md", "human_review"), ("reindex_review", "api:stale-bad.md", "human_review")]


def test_executing_the_queue_syncs_the_changed_collection(store, tmp_path, private_kb) -> None:  # noqa: F811
    kb, folder = private_kb
    ctx = make_ctx(store, tmp_path, kb.settings, kb)
    page = folder / "errors.md"
    page.write_text(page.read_text() + "\n\n## Retrying\n\nRetry 5xx errors with exponential backoff.\n")
    before = kb.index().documents["api:errors.md"]["indexed_at"]
    assert [i.doc_id for i in reindex.score_documents(ctx) if i.priority == "high"] == ["api:errors.md"]
    findings = reindex.run(ctx)  # auto_execute: high
    assert kb.index().documents["api:errors.md"]["indexed_at"] > before
    # Both pages are older than 90 days, but a sync cannot freshen unchanged content: nothing is queued.
    assert by_alert(findings, "reindex_needed") == []
    with store.snapshot() as conn:
        marks = [(r["job"], r["target"], r["trigger"], r["outcome"]) for r in job_runs.recent_runs(conn)]
    assert marks == [("reindex", "api", "mark", "ok")]


def test_no_index(store, tmp_path, sample_settings) -> None:  # noqa: F811
    ctx = make_ctx(store, tmp_path, sample_settings, None)
    assert reindex.check(ctx).status["status"] == "no_index"
    assert reindex.run(ctx) == []
