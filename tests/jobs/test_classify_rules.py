"""Intent rules and cues that generalise how employees phrase each kind of question (issue 11 item 2).

Each group below is a handful of generic questions for one rule of config/monitoring.yaml's ``classification``;
none is a kb-dev question (those are the measurement, benchmarks/intent_agreement.py). Removing the rule makes
its group fail.
"""

from __future__ import annotations

import pytest

from config.monitoring import load_monitoring_config
from jobs.classify import IntentClassifier

#: rule → (question, intent the rules decide)
RULE_CASES = {
    # a requirement: "do I/we (actually) need <something>" (not "need to", which the older rule covers)
    "requirement": [
        ("do I really need a manager's signature for a training course?", "policy"),
        ("do we need legal review before publishing the survey?", "policy"),
        ("do I actually need an itemized invoice for a taxi ride?", "policy"),
        ("would we need security sign-off to use a new SaaS tool?", "policy"),
    ],
    # a cap or a rule: "is there a limit / cap / maximum / restriction on ..."
    "cap": [
        ("is there a limit on how many monitors I can order?", "policy"),
        ("is there a cap on sick leave carry-over?", "policy"),
        ("is there any restriction on which browsers we install?", "policy"),
        ("is there still a maximum on hotel nights per trip?", "policy"),
        ("노트북 교체 비용에 한도가 있나요?", "policy"),
        ("経費の上限はありますか？", "policy"),
    ],
    # "how much/many/long ... can I" asks for an amount and "how can I" for a method, not for permission
    "amount_or_method_not_permission": [
        ("how many vacation days can I take in a row?", "lookup"),
        ("how much can I spend on a team lunch?", "lookup"),
        ("how long can I stay logged in before the session ends?", "lookup"),
        ("how can I share my calendar with an assistant?", "how-to"),
        ("how can I export a report as a spreadsheet?", "how-to"),
    ],
    # "what <thing> is/does ...": a fact asked for by naming it
    "what_noun": [
        ("what floor is the print room on?", "lookup"),
        ("what time does the front desk close on Fridays?", "lookup"),
        ("what version are we running in production?", "lookup"),
    ],
    # a symptom: "is failing", "won't start", "doesn't work"
    "symptom": [
        ("the nightly backup job is failing since Tuesday", "troubleshooting"),
        ("my laptop won't boot after the update", "troubleshooting"),
        ("the VPN client doesn't connect from the hotel wifi", "troubleshooting"),
        ("screen sharing does not work in the browser", "troubleshooting"),
        ("빌드가 계속 실패해요", "troubleshooting"),
        ("同期が失敗します", "troubleshooting"),
    ],
    # an error code: HTTP status, ERR_* constant, exit code, hex code
    "error_code": [
        ("the upload page returns 413 when the file is big", "troubleshooting"),
        ("the mobile app keeps getting 503s this morning", "troubleshooting"),
        ("Chrome shows ERR_CONNECTION_RESET on the intranet", "troubleshooting"),
        ("the container stops with exit code 137", "troubleshooting"),
        ("Windows update stuck at 0x80070005", "troubleshooting"),
    ],
}

#: Questions the rules must leave alone (the new rules must not swallow them).
UNCHANGED = [
    ("can I bring my own laptop to work?", "policy"),          # permission: "can I" without an amount
    ("do I need to tell my manager before I travel?", "policy"),
    ("what's the request limit on the public API?", "lookup"),  # a limit asked for, not "is there a limit"
    ("how do we need to format the invoice?", "how-to"),
    ("how do I request a second monitor?", "how-to"),
]


@pytest.fixture(scope="module")
def classifier(embedder):
    return IntentClassifier(load_monitoring_config().classification, embedder)


@pytest.mark.parametrize("rule", sorted(RULE_CASES))
def test_general_rule_decides(classifier, rule) -> None:
    got = [(q, want, classifier.rule(q)) for q, want in RULE_CASES[rule]]
    assert [g for g in got if g[1] != g[2]] == []


def test_new_rules_leave_other_phrasings_alone(classifier) -> None:
    got = [(q, want, classifier.rule(q)) for q, want in UNCHANGED]
    assert [g for g in got if g[1] != g[2]] == []


def test_should_i_leans_to_how_to(classifier, embedder) -> None:
    """"Should I <do X>?" asks for the right course of action: the how-to cue, not "other"."""
    texts = ["should I rebase or merge the feature branch?", "should we rotate the shared password now?",
             "should I restart the router first?"]
    assert [classifier.rule(t) for t in texts] == [None] * len(texts)  # the scores decide, not a rule
    assert classifier.classify(texts, embedder.embed(texts, kind="query")) == ["how-to"] * len(texts)
