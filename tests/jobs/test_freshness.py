"""Freshness: stale collections, stale and heavily cited pages, unreachable and changed sources."""

from __future__ import annotations

import os
import time

from jobs.review import items
from jobs.signals import freshness
from tests.jobs.monitoring_helpers import (  # noqa: F401
    add_answer,
    by_alert,
    ctx,
    make_ctx,
    private_kb,
    store,
)

OLD_PAGE = "runbooks:tls-certificate-expiry.md"  # last modified 2025-12-02; runbooks go stale after 180 days


def test_an_old_often_cited_page_is_stale_and_heavily_cited(ctx) -> None:  # noqa: F811
    for _ in range(55):
        add_answer(ctx.store, question="our cert expires tomorrow, what now?", cited=(OLD_PAGE,))
    for _ in range(10):
        add_answer(ctx.store, cited=("runbooks:disk-full.md",))
    findings = freshness.run(ctx)
    (hot,) = by_alert(findings, "stale_high_citation")
    assert hot.labels == {"doc_id": OLD_PAGE}
    assert (hot.value, hot.threshold, hot.severity) == (55.0, 50.0, "warning")
    assert hot.annotations["staleness_days"] == 180 and hot.annotations["age_days"] > 180
    stale = {f.labels["collection"]: f for f in by_alert(findings, "stale_document")}
    assert "runbooks" in stale and any(t["doc_id"] == OLD_PAGE for t in stale["runbooks"].annotations["top"])
    assert not by_alert(findings, "source_unreachable") and not by_alert(findings, "source_modified")
    (item,) = items(ctx.store)
    assert (item["problem"], item["subject"], item["action"]) == ("stale_high_citation", OLD_PAGE, "update_content")
    status = freshness.summarize(ctx)
    assert status["collections"]["runbooks"]["staleness_days"] == 180
    assert status["collections"]["plans"]["staleness_days"] == 30
    assert len(status["timeline"]) == 8 and sum(status["age_buckets"].values()) == sum(
        c["active"] for c in status["collections"].values())


def test_unreachable_and_modified_sources(store, tmp_path, private_kb) -> None:  # noqa: F811
    kb, folder = private_kb
    ctx = make_ctx(store, tmp_path, kb.settings, kb)
    (folder / "pagination.md").unlink()
    later = time.time() + 60
    with open(folder / "errors.md", "a", encoding="utf-8") as fh:
        fh.write("\nA new paragraph the index has not seen yet.\n")
    os.utime(folder / "errors.md", (later, later))
    findings = freshness.run(ctx)
    (gone,) = by_alert(findings, "source_unreachable")
    assert (gone.severity, gone.labels) == ("critical", {"doc_id": "api:pagination.md"})
    (changed,) = by_alert(findings, "source_modified")
    assert changed.labels == {"doc_id": "api:errors.md"}
    assert [(i["problem"], i["action"], i["priority"]) for i in items(store)] == [
        ("source_unreachable", "check_source", 1)]


def test_a_missing_collection_folder_is_one_finding(store, tmp_path, private_kb) -> None:  # noqa: F811
    kb, folder = private_kb
    folder.rename(folder.with_name("moved"))
    (finding,) = by_alert(freshness.run(make_ctx(store, tmp_path, kb.settings, kb)), "source_unreachable")
    assert finding.labels == {"collection": "api"} and finding.n == 2


def test_no_index_means_no_findings(store, tmp_path, sample_settings) -> None:  # noqa: F811
    result = freshness.check(make_ctx(store, tmp_path, sample_settings, None))
    assert result.status["status"] == "no_index" and result.findings == []


def test_a_touched_file_with_the_same_text_is_not_modified(store, tmp_path, private_kb) -> None:  # noqa: F811
    kb, folder = private_kb
    later = time.time() + 60
    os.utime(folder / "errors.md", (later, later))  # a checkout or `touch`: a new mtime, the same text
    assert not by_alert(freshness.run(make_ctx(store, tmp_path, kb.settings, kb)), "source_modified")
