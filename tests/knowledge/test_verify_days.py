"""Front matter ``verify_days`` is read at sync into the page's record and overrides its source's interval
(issue 25 item 3); a value that is no whole number of days is ignored, not fatal."""

from __future__ import annotations

from config import Settings, SourceConfig
from jobs.verification import interval_of, source_intervals
from knowledge import KnowledgeBase
from tests.conftest import SAMPLE_KB


def test_front_matter_verify_days_overrides_the_source(tmp_path, embedder):
    folder = tmp_path / "api"
    folder.mkdir()
    text = (SAMPLE_KB / "api" / "rate-limits.md").read_text(encoding="utf-8")
    (folder / "rate-limits.md").write_text(text.replace("---\n", "---\nverify_days: 30\n", 1), encoding="utf-8")
    (folder / "errors.md").write_text((SAMPLE_KB / "api" / "errors.md").read_text(encoding="utf-8"), encoding="utf-8")
    bad = (SAMPLE_KB / "api" / "pagination.md").read_text(encoding="utf-8")
    (folder / "pagination.md").write_text(bad.replace("---\n", "---\nverify_days: soon\n", 1), encoding="utf-8")
    settings = Settings(sources=[SourceConfig(name="api", path=str(folder), verify_days=90)])
    kb = KnowledgeBase(settings, tmp_path / "home", embedder=embedder)
    kb.sync()
    docs = kb.index().documents
    assert docs["api:rate-limits.md"]["verify_days"] == 30
    assert docs["api:errors.md"]["verify_days"] is None and docs["api:pagination.md"]["verify_days"] is None
    intervals = source_intervals(settings)
    assert [interval_of(docs[d], intervals) for d in ("api:rate-limits.md", "api:errors.md", "api:pagination.md")] \
        == [30, 90, 90]
    assert interval_of(docs["api:errors.md"], {"api": None}) is None  # no interval anywhere: never due
