"""Alerts worth reading (issue 11 item 4): one aggregated stale line per collection naming the most cited
stale pages; alerts on a document resolve when it is archived or deleted, and say so."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from config.alerts import load_alerts_config
from jobs import alerts
from jobs.alerts import evaluate, fingerprint, resolve_gone_documents
from jobs.findings import Finding
from jobs.signals import freshness
from tests.jobs.monitoring_helpers import add_answer, by_alert, make_ctx, store  # noqa: F401

T0 = datetime(2026, 11, 30, 8, tzinfo=timezone.utc)


def test_one_stale_line_per_collection_names_its_most_cited_stale_pages(store, tmp_path, sample_settings,  # noqa: F811
                                                                        sample_kb) -> None:
    later = datetime.now(timezone.utc) + timedelta(days=3650)  # every page is stale by then
    for _ in range(4):
        add_answer(store, cited=("runbooks:disk-full.md",), created_at=later - timedelta(days=1))
    add_answer(store, cited=("runbooks:incident-response.md",), created_at=later - timedelta(days=1))
    ctx = make_ctx(store, tmp_path, sample_settings, sample_kb, now=later)

    stale = by_alert(freshness.check(ctx).findings, "stale_document")

    assert sorted(f.labels["collection"] for f in stale) == ["api", "plans", "runbooks"]  # one line each
    (runbooks,) = [f for f in stale if f.labels["collection"] == "runbooks"]
    titles = {d["doc_id"]: d["title"] for d in sample_kb.index().documents.values()}
    assert runbooks.summary.endswith(f"; most cited: {titles['runbooks:disk-full.md']} (4), "
                                     f"{titles['runbooks:incident-response.md']} (1)")
    (api,) = [f for f in stale if f.labels["collection"] == "api"]
    assert "most cited" not in api.summary


def _bad(doc_id: str) -> Finding:
    return Finding("bad_document", "warning", {"doc_id": doc_id}, value=0.2, threshold=0.3, n=20,
                   summary=f"{doc_id} answers badly")


def test_alerts_on_an_archived_or_deleted_document_resolve_at_once_and_say_why(store) -> None:  # noqa: F811
    config = load_alerts_config()
    old, gone, live = "plans:team_plan_v2.md", "plans:removed.md", "plans:sla.md"
    evaluate(store, config, "bad_docs", [_bad(old), _bad(gone), _bad(live)], now=T0)
    documents = {
        old: {"doc_id": old, "collection": "plans", "stage": "archived", "version_family": "team_plan"},
        "plans:team_plan_v3.md": {"doc_id": "plans:team_plan_v3.md", "collection": "plans", "stage": "active",
                                  "version_family": "team_plan"},
        live: {"doc_id": live, "collection": "plans", "stage": "active"},
    }

    done = resolve_gone_documents(store, config, documents, now=T0 + timedelta(hours=1))

    assert sorted(t.fingerprint for t in done) == sorted(fingerprint("bad_document", {"doc_id": d}) for d in (old, gone))
    archived = alerts.get_alert(store, fingerprint("bad_document", {"doc_id": old}))
    assert archived.state == "resolved" and archived.resolved_at == T0 + timedelta(hours=1)
    assert archived.summary.endswith("resolved: document archived (newer version: plans:team_plan_v3.md)")
    assert archived.annotations["resolved_because"] == "document archived (newer version: plans:team_plan_v3.md)"
    deleted = alerts.get_alert(store, fingerprint("bad_document", {"doc_id": gone}))
    assert deleted.state == "resolved" and deleted.summary.endswith("resolved: document deleted")
    assert alerts.get_alert(store, fingerprint("bad_document", {"doc_id": live})).state == "firing"
    assert resolve_gone_documents(store, config, None, now=T0) == []  # no index: nothing is judged
