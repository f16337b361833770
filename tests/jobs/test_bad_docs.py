"""Bad documents, the only-source rule, and wrong-answer spikes, on the sample knowledge base's doc ids."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from config import Settings, SourceConfig
from jobs.review import items
from knowledge import KnowledgeBase
from jobs.signals import bad_docs
from tests.conftest import CORPUS, copy_pages, needs_shared
from tests.jobs.monitoring_helpers import add_answer, by_alert, label, make_ctx, store, any_store  # noqa: F401


@pytest.fixture
def ctx(any_store, tmp_path, sample_settings, sample_kb):  # noqa: F811
    """This module's signal on each backend: a SQLite file, then PostgreSQL (`monitoring_helpers.any_store`)."""
    return make_ctx(any_store, tmp_path, sample_settings, sample_kb)


BAD, GOOD = "runbooks:disk-full.md", "runbooks:incident-response.md"


def test_a_page_most_answers_thumb_down_is_a_bad_document_and_enters_the_review_queue(ctx) -> None:  # noqa: F811
    for i in range(40):
        add_answer(ctx.store, question="node disk is full, what do I do?", cited=(BAD,), votes=("down" if i % 7 else "up",))
        add_answer(ctx.store, question="how do I declare a sev1?", cited=(GOOD,), votes=("up" if i % 5 else "down",))
    findings = bad_docs.run(ctx)
    (finding,) = by_alert(findings, "bad_document")
    assert finding.labels == {"doc_id": BAD}
    assert finding.severity == "warning"
    assert finding.value < 0.3 and finding.threshold == 0.3 and finding.n == 40
    assert finding.annotations["p_low"] >= 0.5                    # the posterior, not a count
    assert finding.link.startswith("https://wiki.nimbus.example/runbooks/")
    (item,) = items(ctx.store)
    assert (item["problem"], item["subject"], item["signal"]) == ("bad_document", BAD, "bad_docs")
    assert item["action"] in ("review_or_deprecate", "improve_only_source")
    status = bad_docs.summarize(ctx)
    assert status["worst"][0]["doc_id"] == BAD and status["evaluated"] == 2


def test_votes_on_answers_led_by_one_page_judge_that_page_not_the_one_cited_beside_it(ctx) -> None:  # noqa: F811
    """Issue 26 item 4: 40 👎 on answers whose direct answer came from BAD, with GOOD cited beside it, flag BAD
    alone; the finding says how many answers it led and that the others do not judge it."""
    for i in range(40):
        add_answer(ctx.store, question="node disk is full, what do I do?", cited=(BAD, GOOD), answered_from=[BAD],
                   votes=("down" if i % 7 else "up",))
    add_answer(ctx.store, question="disk full?", cited=(GOOD, BAD), answered_from=[GOOD], votes=("up",))
    findings = bad_docs.run(ctx)
    (finding,) = by_alert(findings, "bad_document")
    assert finding.labels == {"doc_id": BAD} and finding.n == 40
    assert (finding.annotations["citations"], finding.annotations["answered"]) == (41, 40)
    assert "votes counted on the 40 answers it led; the 1 where it was only cited beside" in finding.summary
    rows = {r["doc_id"]: r for r in bad_docs.summarize(ctx)["worst"]}
    assert rows.get(GOOD, {"up": 1, "down": 0})["down"] == 0


def test_tiny_vote_counts_never_alert_but_enter_the_queue_as_watch(ctx) -> None:  # noqa: F811
    for i in range(25):  # cited often enough, but only 3 people voted (all 👎)
        add_answer(ctx.store, cited=(BAD,), votes=("down",) if i < 3 else ())
    assert bad_docs.run(ctx) == []
    (item,) = items(ctx.store)
    assert (item["problem"], item["subject"], item["action"], item["priority"]) == ("bad_document_watch", BAD, "watch", 3)
    assert len(item["details"]["evidence"]["answers"]) == 3


def test_a_busy_well_liked_page_is_never_flagged_for_its_report_count(ctx) -> None:  # noqa: F811
    """Issue 11: every page cited 129+ times was flagged by "more than 5 reports", the current plan page included."""
    page = "plans:team_plan_v3.md"
    for i in range(130):
        add_answer(ctx.store, question="how much is the team plan?", cited=(page,),
                   created_at=datetime.now(timezone.utc) - timedelta(days=i % 60, hours=1),
                   votes=("up",) if i % 4 else ("down",), flags=1 if i % 20 == 0 else 0)
    assert bad_docs.run(ctx) == []
    assert items(ctx.store) == []


def test_a_high_share_of_reported_answers_makes_a_bad_document(ctx) -> None:  # noqa: F811
    for i in range(12):
        add_answer(ctx.store, cited=(GOOD,), flags=1 if i % 2 == 0 else 0,
                   created_at=datetime.now(timezone.utc) - timedelta(days=3 + i))
    (finding,) = bad_docs.run(ctx)
    assert finding.alert == "bad_document" and finding.annotations["reasons"] == ["report_rate"]
    assert (finding.value, finding.threshold, finding.n) == (0.5, 0.2, 12)
    assert "6 of 12 answers reported wrong" in finding.summary


def test_a_page_quoted_60_times_with_75_percent_down_is_flagged(ctx) -> None:  # noqa: F811
    """The issue's case the Wilson gate missed: 60 rated answers at 75 % 👎."""
    for i in range(60):
        add_answer(ctx.store, cited=(BAD,), votes=("up",) if i % 4 == 0 else ("down",))
    (finding,) = bad_docs.run(ctx)
    assert finding.annotations["reasons"] == ["thumbs_up_rate"] and finding.annotations["p_low"] > 0.75


def test_a_bad_document_that_is_the_only_source_on_its_topic_is_never_auto_deprecated(store, tmp_path, sample_settings,  # noqa: F811
                                                                                      sample_kb) -> None:
    ctx = make_ctx(store, tmp_path, sample_settings, sample_kb, bad_docs={"auto_deprecate": True})
    only, replaceable, alternative = "runbooks:tls-certificate-expiry.md", "plans:sla.md", "plans:team_plan_v3.md"
    for i in range(30):
        label(store, add_answer(store, cited=(only,), votes=("down",)), "troubleshooting", 1)
        label(store, add_answer(store, cited=(replaceable,), votes=("down",)), "lookup", 2)
        if i % 3 == 0:  # the current plan page answers the same topic, and answers it well
            label(store, add_answer(store, cited=(alternative,), votes=("up",)), "lookup", 2)
    findings = bad_docs.run(ctx)
    assert {f.labels["doc_id"] for f in by_alert(findings, "bad_document")} == {only, replaceable}
    queue = {i["subject"]: i for i in items(store)}
    assert queue[only]["action"] == "improve_only_source"
    assert queue[only]["auto_deprecate"] is False
    assert queue[only]["details"]["only_source_topics"] == [1]
    assert queue[replaceable]["action"] == "review_or_deprecate"
    assert queue[replaceable]["auto_deprecate"] is True


def test_wrong_answer_spike_is_critical_per_collection(ctx) -> None:  # noqa: F811
    now = datetime.now(timezone.utc)
    add_answer(ctx.store, cited=("api:webhooks.md",), flags=1, created_at=now - timedelta(days=10))
    for _ in range(6):
        add_answer(ctx.store, cited=("api:webhooks.md",), flags=1, created_at=now - timedelta(hours=2))
    (spike,) = by_alert(bad_docs.run(ctx), "wrong_answer_spike")
    assert spike.severity == "critical"
    assert spike.labels == {"collection": "api"}
    assert spike.value == 6.0


def test_spike_names_the_reported_answers_and_their_documents(ctx) -> None:  # noqa: F811
    now = datetime.now(timezone.utc)
    reported = add_answer(ctx.store, question="webhook retries?", cited=("api:webhooks.md", "api:errors.md"), flags=6,
                          created_at=now - timedelta(hours=2))
    (spike,) = by_alert(bad_docs.run(ctx), "wrong_answer_spike")
    assert spike.annotations["answer_ids"] == [reported]
    assert spike.annotations["documents"] == ["api:errors.md", "api:webhooks.md"]
    assert "1 answer(s)" in spike.summary


# --- on real corpus pages -------------------------------------------------------------------------------

HANDBOOK = CORPUS / "tts-handbook"
DOCKER, CHICAGO = "handbook:2025-02/tools/docker-hub.md", "handbook:2025-02/general-information-and-resources/chicago.md"


@pytest.fixture
def handbook_ctx(store, tmp_path, embedder):  # noqa: F811
    """Both snapshots of two real handbook pages (versions: folders), indexed; a JobContext over them."""
    pages = {f"{snap}/{page}": HANDBOOK / snap / page for snap in ("2021-12", "2025-02")
             for page in ("tools/docker-hub.md", "general-information-and-resources/chicago.md")}
    folder = copy_pages(tmp_path / "handbook", pages)
    settings = Settings(sources=[SourceConfig(name="handbook", path=str(folder), versions="folders",
                                              url_base="https://handbook.tts.gsa.gov/")])
    kb = KnowledgeBase(settings, tmp_path / "home", embedder=embedder)
    kb.sync()
    return make_ctx(store, tmp_path / "home", settings, kb)


@needs_shared
def test_a_real_page_is_flagged_at_tens_of_votes_with_its_evidence(handbook_ctx) -> None:
    store = handbook_ctx.store
    ids = []
    for i in range(20):  # 4 👍 of 20: the "true rate 0.2" page
        answer = add_answer(store, question=f"how do I get added to the docker hub org? ({i})", cited=(DOCKER,),
                            votes=("up",) if i % 5 == 0 else ("down",))
        label(store, answer, "how-to", 7)
        if i % 5:
            store.record_vote_reason(answer, "V0", "outdated")
        ids.append(answer)
    for _ in range(4):  # the other current page answers the same topic
        label(store, add_answer(store, question="docker hub access?", cited=(CHICAGO,), votes=("up",)), "how-to", 7)

    (finding,) = bad_docs.run(handbook_ctx)

    assert finding.labels == {"doc_id": DOCKER} and finding.n == 20
    evidence = finding.annotations["evidence"]
    assert {a["answer_id"] for a in evidence["answers"]} <= set(ids) and len(evidence["answers"]) == 5
    assert evidence["answers"][0]["question"].startswith("how do I get added to the docker hub org?")
    assert evidence["down_reasons"] == {"outdated": 16}
    assert [r["doc_id"] for r in evidence["related"]] == [CHICAGO]
    assert "docker hub org" in finding.summary and "outdated 16" in finding.summary and CHICAGO in finding.summary
    (item,) = items(store)
    assert item["details"]["evidence"]["related"][0]["doc_id"] == CHICAGO


@needs_shared
def test_an_archived_version_is_not_judged_and_names_its_newer_version(handbook_ctx) -> None:
    old = "handbook:2021-12/tools/docker-hub.md"
    for i in range(20):
        add_answer(handbook_ctx.store, cited=(old,), votes=("down",))
    assert bad_docs.run(handbook_ctx) == []
    assert bad_docs.newer_version(old, handbook_ctx.kb.index().documents) == DOCKER
    assert bad_docs.newer_version(DOCKER, handbook_ctx.kb.index().documents) == ""


@needs_shared
def test_a_page_liked_by_most_is_never_flagged_over_a_quarter(handbook_ctx) -> None:
    """60 % 👍 at 20 votes a month, judged every day for 90 days: never flagged, never watched."""
    start = datetime.now(timezone.utc) - timedelta(days=180)
    rng = np.random.default_rng(7)
    for day in range(180):
        for _ in range(rng.poisson(20 / 30)):
            add_answer(handbook_ctx.store, cited=(DOCKER,), created_at=start + timedelta(days=day, hours=1),
                       votes=("up",) if rng.random() < 0.6 else ("down",))
    flagged = []
    for day in range(90, 180, 3):
        c = make_ctx(handbook_ctx.store, handbook_ctx.home, handbook_ctx.settings, handbook_ctx.kb,
                     now=start + timedelta(days=day + 1))
        flagged += bad_docs.check(c).findings
    assert flagged == []


def test_a_rename_through_a_shared_alias_keeps_its_votes() -> None:
    """Issue 26 item 5: the old and the new page both list the old URL in ``redirect_from`` and neither names
    the other's path; the votes given on the old one count for the current one."""
    from jobs._common import alias_targets, fold_aliases

    docs = {"hb:tools/timesheets.md": {"collection": "hb", "rel_path": "tools/timesheets.md", "stage": "archived",
                                       "aliases": ["tools/tock"]},
            "hb:tools/time-tracking.md": {"collection": "hb", "rel_path": "tools/time-tracking.md", "stage": "active",
                                          "aliases": ["tools/tock"]}}
    assert alias_targets(docs)["hb:tools/timesheets.md"] == "hb:tools/time-tracking.md"
    folded = fold_aliases({"hb:tools/timesheets.md": {"citations": 20, "up": 3, "down": 17, "fused": 0.2},
                           "hb:tools/time-tracking.md": {"citations": 5, "up": 4, "down": 1, "fused": 0.8}}, docs)
    assert folded == {"hb:tools/time-tracking.md": {"citations": 25, "up": 7, "down": 18, "fused": 0.32}}
