"""Which replies in a thread are elliptical follow-ups, and what they are asked with (en, ko, ja)."""

from __future__ import annotations

import json

import pytest

from knowledge.followup import MIN_STANDALONE_WORDS, follow_up_query, is_elliptical, thread_context
from tests.conftest import EVAL, SAMPLE_KB

PLAN = "how much does the team plan cost per seat right now?"


@pytest.mark.parametrize("reply", ["v2는요?", "Enterprise는요?", "그럼 v2에서는 어떻게 되나요?", "월간 결제는요?",
                                   "v2は？", "Enterpriseプランは？", "月払いの場合は？",
                                   "what about v2?", "And for Enterprise customers?", "What about the monthly price?"])
def test_short_replies_are_completed_with_the_threads_question(reply: str) -> None:
    assert is_elliptical(reply)
    assert follow_up_query(reply, [PLAN]) == f"{PLAN} {reply}"


def test_standalone_questions_are_never_rewritten() -> None:
    """The bundled questions and kb-dev's (when present) all say enough on their own (MIN_STANDALONE_WORDS)."""
    lines = (SAMPLE_KB.parent / "sample_kb_questions.jsonl").read_text(encoding="utf-8").splitlines()
    kb_dev = EVAL / "kb-dev" / "questions.jsonl"
    if kb_dev.is_file():
        lines += kb_dev.read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    assert {"ko", "ja"} <= {json.loads(line)["lang"] for line in lines if line.strip()}
    rewritten = [q for q in questions if follow_up_query(q, [PLAN]) is not None]
    assert rewritten == [], f"{len(rewritten)} standalone questions have < {MIN_STANDALONE_WORDS} content words"


def test_the_context_is_the_latest_standalone_question_else_the_first() -> None:
    assert thread_context([]) is None
    assert thread_context(["v2는요?", "v3は？"]) == "v2는요?"
    assert thread_context([PLAN, "v2는요?"]) == PLAN
    webhooks = "how long do we wait for a customer's webhook endpoint to respond?"
    assert thread_context([PLAN, "v2는요?", webhooks, "and on Pro?"]) == webhooks
    assert follow_up_query("v2는요?", []) is None  # not in an answered thread


def test_a_short_reply_on_another_subject_is_answered_alone(sample_kb) -> None:
    """Under a rate-limit question, "and SEV1 incidents?" is short but changes the subject: the completed query
    finds the rate-limit page, which holds neither word, so the reply is asked alone and finds the runbook."""
    from knowledge.followup import ask_in_thread

    earlier = ["what is the API rate limit on the Pro plan?"]
    answer = ask_in_thread(sample_kb, "and SEV1 incidents?", earlier)
    assert answer.citations and answer.citations[0].doc_id == "runbooks:incident-response.md"
    follow_up = ask_in_thread(sample_kb, "and on Enterprise?", earlier)  # still the thread's subject
    assert "api:rate-limits.md" in [c.doc_id for c in follow_up.citations]


def test_a_short_reply_on_a_subject_no_page_covers_is_refused_not_answered_from_the_threads_page(
        tmp_path, sample_settings, embedder) -> None:
    """A newcomer's thread: after two leave questions, "What are the core hours?" was answered from the leave
    policy at low confidence, while asked alone it is refused. The reply adds "core" and "hours" to the thread's
    question and the leave page says neither: it is a new subject."""
    from knowledge.followup import ask_in_thread
    from tests.conftest import written_kb
    from tests.knowledge.test_service import LEAVE_PAGE

    kb = written_kb(tmp_path, {"annual-leave.md": LEAVE_PAGE}, sample_settings, embedder)
    earlier = ["How many days of annual leave can I carry over?"]

    assert ask_in_thread(kb, "What are the core hours?", earlier).refused
    assert not ask_in_thread(kb, "and for part-time staff?", earlier).refused  # the thread's subject still


VPN_PAGE = """---
title: VPN Setup
---
# VPN Setup

## Install

1. Install the WireGuard client.
2. Request a VPN profile in the IT portal.
3. Import the profile and click Activate.

The VPN profile expires after 180 days; request a new one from the IT portal.

## Troubleshooting

If the tunnel does not come up, check that your clock is correct and restart the client.
"""


def test_a_reply_that_points_back_at_the_thread_keeps_its_subject_when_alone_nothing_answers(
        tmp_path, sample_settings, embedder) -> None:
    """A newcomer's thread: under "How do I connect to the VPN?", "how long is it valid" and "and if it doesn't
    work?" were refused. The page says "expires", not "valid": the thread's answer holds no word the reply
    adds, and alone the reply names nothing; its "it" points back at the VPN."""
    from knowledge.followup import ask_in_thread, leans_on_thread
    from tests.conftest import written_kb

    kb = written_kb(tmp_path, {"vpn.md": VPN_PAGE}, sample_settings, embedder)
    earlier = ["How do I connect to the VPN?"]

    valid = ask_in_thread(kb, "how long is it valid", earlier)
    assert not valid.refused and "180 days" in valid.direct_answer
    assert not ask_in_thread(kb, "and if it doesn't work?", earlier).refused
    assert ask_in_thread(kb, "What are the core hours?", earlier).refused  # a new subject, named outright
    assert leans_on_thread("v2는요?") and leans_on_thread("月払いの場合は？") and not leans_on_thread("What are the core hours?")


def test_a_follow_up_that_finds_nothing_new_says_so_instead_of_posting_the_answer_again(tmp_path, sample_settings,
                                                                                          embedder):
    """A newcomer's "and if it doesn't work?" under a VPN answer got the same steps posted twice: it now says the
    answer above is all there is, with the page to read."""
    from knowledge.followup import ask_in_thread
    from tests.conftest import written_kb

    kb = written_kb(tmp_path, {"vpn.md": (
        "# VPN\n\n## Setting up the VPN\n\nTo connect to the VPN:\n\n1. Install the Acme VPN client from the "
        "self-service portal.\n2. Sign in with your company account and approve the push on your phone.\n3. Choose "
        "the \"Office\" profile and click Connect.\n\nThe VPN profile expires after 180 days; reinstall it from the "
        "portal when it does.\n")}, sample_settings, embedder)

    again = ask_in_thread(kb, "and if it doesn't work?", ["How do I set up the VPN?"])

    assert again.refused and again.text.startswith("The answer above is all I found on this.")
    assert [c["title"] for c in again.closest] == ["VPN"] and not again.quotes
