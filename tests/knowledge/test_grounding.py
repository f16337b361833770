"""The grounding check on real sample-KB passages: hand-written generator replies, one verdict each."""

from __future__ import annotations

import pytest

from knowledge.grounding import check_grounding, split_sentences
from tests.conftest import SAMPLE_KB


def section(relative: str, heading: str) -> str:
    """The text of one ``## heading`` section of a sample-KB page (up to the next ``## ``)."""
    text = (SAMPLE_KB / relative).read_text(encoding="utf-8")
    start = text.index(f"## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


LIMITS = section("api/rate-limits.md", "Limits by plan")
EXCEEDED = section("api/rate-limits.md", "When the limit is exceeded")
DELIVERY = section("api/webhooks.md", "Delivery")
REFUND_KO = (SAMPLE_KB / "plans/refund-policy.ko.md").read_text(encoding="utf-8")


def verdicts(reply: str, passages: dict[int, str]) -> list[tuple[bool, str]]:
    return [(c.supported, c.reason) for c in check_grounding(reply, passages).checks]


def test_sentences_keep_their_markers_and_lines() -> None:
    reply = "Deliveries time out after 30 seconds. [1] Retries back off, e.g. 1 s then 2 s [2].\nタイムアウトは30秒です[1]。再試行は3回です[1]。"
    assert split_sentences(reply) == [
        ("Deliveries time out after 30 seconds. [1]", 0),
        ("Retries back off, e.g. 1 s then 2 s [2].", 0),
        ("タイムアウトは30秒です[1]。", 1),
        ("再試行は3回です[1]。", 1),
    ]


@pytest.mark.parametrize("sentence", [
    "The Pro plan allows 600 requests per minute, with a burst of 100 [1].",  # a table cell's number
    "Webhook delivery times out after 30 seconds [2].",
    "Webhook delivery times out after half a minute, i.e. 30 seconds [2].",
    "The SDKs retry a 429 up to 3 times with exponential backoff [3].",
    "A 429 response carries the `Retry-After` header and the error code `rate_limited` [3].",
    "Keys that keep ignoring Retry-After are blocked for 15 minutes [3].",
    "Pro 플랜은 분당 600개의 요청을 허용합니다 [1].",  # Korean answer, English page: names and numbers compared
    "Proプランは毎分600リクエストです[1]。",
])
def test_grounded_sentences_pass(sentence: str) -> None:
    assert verdicts(sentence, {1: LIMITS, 2: DELIVERY, 3: EXCEEDED}) == [(True, "")]


@pytest.mark.parametrize("sentence, reason", [
    ("The Pro plan allows 900 requests per minute [1].", "value 900 requests per minute not in [1]"),
    ("Webhook delivery times out after 30 minutes [2].", "value 30 minutes not in [2]"),  # 30 s in the page
    ("Webhook delivery times out after 45 seconds [2].", "value 45 seconds not in [2]"),
    ("The SDKs retry 5 times [3].", "number 5 not in [3]"),
    # The value is in the passage, but said of something else (an endpoint's limit, a log query's range).
    ("The SDKs retry up to 5 times [1].", "number 5 said of something else in [1]"),
    ("Blocked keys stay blocked for 24 hours [1].", "value 24 hours said of something else in [1]"),
    ("Enterprise can go to 7000 requests [1].", "value 7000 requests not in [1]"),
    ("Use the error code `quota_exceeded` [3].", "code quota_exceeded not in [3]"),
    ("Escalate it as a SEV2 ticket [3].", "code SEV2 not in [3]"),
    ("Webhook delivery times out after 30 seconds.", "no citation"),
    ("Webhook delivery times out after 30 seconds [4].", "cites unknown [4]"),
    ("Customers should contact their account manager for a discount on annual billing [1].",
     "overlap"),
    ("환불은 결제 후 90일 이내에 가능합니다 [4].", "value 90일 not in [4]"),
])
def test_unsupported_sentences_are_caught(sentence: str, reason: str) -> None:
    passages = {1: LIMITS, 2: DELIVERY, 3: EXCEEDED}
    if "[4]" in sentence and "환불" in sentence:
        passages[4] = REFUND_KO
    ((supported, why),) = verdicts(sentence, passages)
    assert not supported
    if reason.startswith("overlap"):  # the measured share varies with the tokenizer; the verdict must not
        assert why.startswith("overlap") and why.endswith("< 0.5 with [1]")
    else:
        assert why == reason


def test_only_supported_sentences_remain_in_reply_order() -> None:
    reply = ("The Pro plan allows 600 requests per minute [1]. Pro customers can raise it to 5,000 requests per "
             "minute [1]. It is generous.\nOver the limit, the API answers HTTP 429 [2].")
    result = check_grounding(reply, {1: LIMITS, 2: EXCEEDED})
    assert result.text == ("The Pro plan allows 600 requests per minute [1].\n"
                           "Over the limit, the API answers HTTP 429 [2].")
    assert [c.reason.split(" not")[0] for c in result.removed] == ["value 5,000 requests per minute", "no citation"]


def test_korean_passage_and_korean_answer_compare_words() -> None:
    result = check_grounding("연간 플랜은 결제 후 14일 이내에 해지하면 전액 환불됩니다 [1].", {1: REFUND_KO})
    assert [c.supported for c in result.checks] == [True], result.checks
