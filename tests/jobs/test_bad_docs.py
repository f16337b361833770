"""Bad documents, the only-source rule, and wrong-answer spikes, on the sample knowledge base's doc ids."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jobs.review import items
from jobs.signals import bad_docs
from tests.jobs.monitoring_helpers import add_answer, by_alert, ctx, label, make_ctx, store  # noqa: F401

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
    assert finding.annotations["thumbs_up_ci"][1] < 0.3          # the whole interval is below the threshold
    assert finding.link.startswith("https://wiki.nimbus.example/runbooks/")
    (item,) = items(ctx.store)
    assert (item["problem"], item["subject"], item["signal"]) == ("bad_document", BAD, "bad_docs")
    assert item["action"] in ("review_or_deprecate", "improve_only_source")
    status = bad_docs.summarize(ctx)
    assert status["worst"][0]["doc_id"] == BAD and status["evaluated"] == 2


def test_tiny_vote_counts_never_alert(ctx) -> None:  # noqa: F811
    for i in range(25):  # cited often enough, but only 3 people voted (all 👎)
        add_answer(ctx.store, cited=(BAD,), votes=("down",) if i < 3 else ())
    assert bad_docs.run(ctx) == []


def test_more_than_five_wrong_answer_reports_make_a_bad_document(ctx) -> None:  # noqa: F811
    for i in range(6):
        add_answer(ctx.store, cited=(GOOD,), flags=1, created_at=datetime.now(timezone.utc) - timedelta(days=3 + i))
    (finding,) = bad_docs.run(ctx)
    assert (finding.alert, finding.value, finding.threshold) == ("bad_document", 6.0, 5.0)
    assert "wrong-answer reports" in finding.summary


def test_a_bad_document_that_is_the_only_source_on_its_topic_is_never_auto_deprecated(store, tmp_path, sample_settings,  # noqa: F811
                                                                                      sample_kb) -> None:
    ctx = make_ctx(store, tmp_path, sample_settings, sample_kb, bad_docs={"auto_deprecate": True})
    only, replaceable, alternative = "runbooks:tls-certificate-expiry.md", "plans:team_plan_v1.md", "plans:team_plan_v3.md"
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
