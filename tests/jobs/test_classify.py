"""Question classification: intent accuracy on a labelled set, and topics that stay put between runs."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from config.monitoring import load_monitoring_config
from feedback.db import rows
from jobs.classify import IntentClassifier, label_pending
from tests.jobs.monitoring_helpers import add_answer, any_store  # noqa: F401

#: Hand-labelled questions (English, Korean, Japanese), in the style of the sample KB's users.
LABELLED = [
    ("how do I reset my password?", "how-to"), ("how can I set up SSO for my team?", "how-to"),
    ("steps to rotate an api key", "how-to"), ("how to request a new laptop", "how-to"),
    ("how do I verify the webhook signature header?", "how-to"), ("how do I ping everyone for a sev1?", "how-to"),
    ("how should we configure pagination for list endpoints?", "how-to"),
    ("walk me through creating a deploy preview", "how-to"), ("how do I add a teammate to the Team plan?", "how-to"),
    ("what are the steps to get a YubiKey?", "how-to"), ("API 키는 어떻게 재발급하나요?", "how-to"),
    ("APIキーをローテーションする手順を教えて", "how-to"),
    ("what's the price of the Pro plan?", "lookup"), ("what's the max number of seats on Team?", "lookup"),
    ("who owns the billing service?", "lookup"), ("when does the Q4 promo end?", "lookup"),
    ("how much does the team plan cost per seat right now?", "lookup"),
    ("what uptime do we promise Enterprise?", "lookup"), ("what's the database on-call hotline number?", "lookup"),
    ("max page size on list endpoints?", "lookup"), ("how long is the build timeout on Team?", "lookup"),
    ("what's the API rate limit for Pro customers?", "lookup"), ("Teamプランのサポートって土日もやってる？", "lookup"),
    ("OAuthのアクセストークンって何分で切れますか？", "lookup"),
    ("the API keeps returning 500 errors", "troubleshooting"), ("why are my webhooks failing?", "troubleshooting"),
    ("deploy is stuck, what do I do", "troubleshooting"), ("database failover didn't work", "troubleshooting"),
    ("customer keeps getting 429s, how long should their client wait?", "troubleshooting"),
    ("node disk is at 96%, what do I do first?", "troubleshooting"),
    ("cert-manager hit the let's encrypt rate limit, what now?", "troubleshooting"),
    ("webhook failure alert fired and the dispatch queue is huge", "troubleshooting"),
    ("login page won't load for anyone", "troubleshooting"), ("I can't connect to the staging database", "troubleshooting"),
    ("DB 프라이머리 죽었을 때 수동 페일오버 명령어 뭐였죠?", "troubleshooting"), ("デプロイが失敗します", "troubleshooting"),
    ("can I expense a home office chair?", "policy"), ("what is the refund policy?", "policy"),
    ("am I allowed to work from another country?", "policy"), ("is it ok to share customer data with a vendor?", "policy"),
    ("what's the parental leave policy?", "policy"), ("how do I expense a new laptop?", "policy"),
    ("are contractors eligible for the learning budget?", "policy"), ("do I need approval to buy software?", "policy"),
    ("연간 플랜 결제하고 20일 지났는데 환불 되나요?", "policy"), ("社員の有給休暇の規定は？", "policy"),
    ("hello", "other"), ("thanks!", "other"), ("good morning minerva", "other"), ("lol", "other"),
]


@pytest.fixture(scope="module")
def classification():
    return load_monitoring_config().classification


def test_intent_accuracy_on_the_labelled_set(embedder, classification) -> None:
    classifier = IntentClassifier(classification, embedder)
    texts = [t for t, _ in LABELLED]
    predicted = classifier.classify(texts, embedder.embed(texts, kind="query"))
    correct = sum(p == gold for p, (_, gold) in zip(predicted, LABELLED))
    # Measured 45/50 (0.90) with all-MiniLM-L6-v2 and the rules (43/50 before the general rules of
    # test_classify_rules.py); the misses are mostly troubleshooting questions phrased as lookups.
    assert correct / len(LABELLED) >= 0.85, [(t, g, p) for (t, g), p in zip(LABELLED, predicted) if g != p]


def _labels(store):
    with store.snapshot() as conn:
        return {r["answer_id"]: (r["intent"], r["topic_id"]) for r in rows(conn, "SELECT * FROM answer_labels")}


def _topics(store):
    with store.snapshot() as conn:
        return {r["topic_id"]: (r["label"], r["n"]) for r in rows(conn, "SELECT topic_id, label, n FROM topics")}


def test_topics_are_stable_across_runs(any_store, embedder, classification) -> None:  # noqa: F811
    store = any_store  # on SQLite, then on PostgreSQL
    now = datetime.now(timezone.utc)
    first = [
        "what's the parental leave policy?", "how many weeks of parental leave do new fathers get?",
        "is parental leave paid?", "what is the API rate limit for Pro?", "how many requests per minute can Pro make?",
        "how much is the team plan per seat?", "team plan price per seat",
    ]
    ids = [add_answer(store, question=q, created_at=now - timedelta(hours=10 - i)) for i, q in enumerate(first)]
    report = label_pending(store, embedder, classification, now=now)
    assert report.labelled == len(first)
    labels_before, topics_before = _labels(store), _topics(store)
    leave = {labels_before[i][1] for i in ids[:3]}
    assert len(leave) == 1  # the three leave questions share a topic ...
    assert leave.isdisjoint({labels_before[i][1] for i in ids[3:]})  # ... which no other question joined
    assert label_pending(store, embedder, classification, now=now).labelled == 0  # nothing pending: no change
    assert _topics(store) == topics_before

    second = ["can I take parental leave part-time?", "maternity leave length?", "how do I get a YubiKey?"]
    new_ids = [add_answer(store, question=q, created_at=now - timedelta(minutes=5)) for q in second]
    report = label_pending(store, embedder, classification, now=now + timedelta(hours=1))
    labels_after, topics_after = _labels(store), _topics(store)
    assert {k: labels_after[k] for k in labels_before} == labels_before  # old answers keep their labels
    for topic_id, (label, _) in topics_before.items():
        assert topics_after[topic_id][0] == label                          # no topic renamed or renumbered
    assert labels_after[new_ids[0]][1] in leave and labels_after[new_ids[1]][1] in leave  # joined the old topic
    assert labels_after[new_ids[2]][1] not in topics_before                # a new subject gets a new topic
    assert report.new_topics == 1
    (leave_id,) = leave
    assert topics_after[leave_id][1] == 5                                  # its centroid counts 5 members now
