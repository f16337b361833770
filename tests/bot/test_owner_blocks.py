"""An owner's direct message quotes page titles and summaries as text: nothing in them can ping anyone."""

from __future__ import annotations

from bot.slack.owner_blocks import owner_message
from jobs.owners import OwnerReport, PageFinding


def test_titles_summaries_and_evidence_are_escaped_and_links_stay_whole():
    finding = PageFinding("ops:x.md", "Deploys <!channel> & rollbacks", "https://wiki.example/ops/x y.md",
                          "bad_document", "warning", "<@U123> said it is wrong", {"note": "<!here>"})
    message = owner_message(OwnerReport("U999", [finding]))
    texts = [b["text"]["text"] for b in message.blocks if b["type"] == "section"] + [message.text]
    assert all("<!channel>" not in t and "<!here>" not in t and "<@U123>" not in t for t in texts)
    assert any("<https://wiki.example/ops/x%20y.md|Deploys &lt;!channel&gt; &amp; rollbacks>" in t for t in texts)


def test_evidence_reads_as_words_not_json():
    finding = PageFinding("hr:leave.md", "Leave", "", "bad_document", "warning", "20 of 25 ratings are 👎",
                          {"answer_ids": ["a-17", "a-21"], "owner": "", "sample_questions": ["How do I take leave?"],
                           "doc_a": {"doc_id": "hr:leave.md", "date": "2026-01-02"}, "score": 0.123456})
    text = owner_message(OwnerReport("U999", [finding])).text

    assert "answer ids: a-17; a-21" in text and "sample questions: How do I take leave?" in text
    assert "doc a: doc id hr:leave.md, date 2026-01-02" in text and "score: 0.123" in text
    assert "owner" not in text.split("evidence:")[1] and "{" not in text and '"' not in text


def test_a_page_proposed_for_quarantine_gets_its_own_take_out_button():
    """Issue 26: the owner decides. A spike on two pages tells each page's owner about their page, with a button
    that takes only that page out (Slack asks to confirm); other findings get no button."""
    from bot.slack.digest_blocks import ALERT_QUARANTINE_ACTION, parse_page_value

    spike = PageFinding("ops:a.md", "A", "", "wrong_answer_spike", "critical", "5 reports in 24 h", {}, "0123abcd")
    stale = PageFinding("ops:b.md", "B", "", "stale_document", "warning", "not updated for 400 days", {}, "4567ef01")
    message = owner_message(OwnerReport("U999", [spike, stale]))

    (actions,) = [b for b in message.blocks if b["type"] == "actions"]
    (button,) = actions["elements"]
    assert button["action_id"] == ALERT_QUARANTINE_ACTION and "confirm" in button
    assert parse_page_value(button["value"]) == ("0123abcd", "ops:a.md")
    assert "take it out of search with the button below" in message.text


def test_an_old_copy_with_a_newer_version_is_to_be_retired_not_fixed():
    """Issue 26: "check and correct it" for an outdated copy sent the owner to fix a page that should go."""
    old = PageFinding("hb:2021/tock.md", "Tock", "", "bad_document", "warning", "12 👎 of 20 answers",
                      {"evidence": {"newer_version": "hb:2025/tock.md"}})
    current = PageFinding("hb:2025/leave.md", "Leave", "", "bad_document", "warning", "12 👎 of 20 answers", {})
    text = owner_message(OwnerReport("U999", [old, current])).text

    assert "a newer version replaces this page (hb:2025/tock.md): retire it" in text
    assert text.count("check and correct it") == 1  # the current page is still to be fixed


def test_a_contradiction_is_said_once_by_its_summary_not_again_as_evidence():
    """A newcomer's owner message repeated the summary as "doc a: date …, doc id …; statements: kind duration, …"."""
    summary = ("20 days vs 25 days (duration): hb:benefits.md (file date 2026-12-05) “Vacation: 20 days of paid "
               "vacation per year.”; hb:leave.md (2026-01-15) “Every employee gets 25 days of paid vacation per year.”")
    finding = PageFinding("hb:benefits.md", "Benefits", "", "contradiction", "warning", summary,
                          {"doc_a": {"doc_id": "hb:benefits.md", "date": "file date 2026-12-05"},
                           "statements": [{"kind": "duration", "value_a": "20 days", "value_b": "25 days"}]})
    text = owner_message(OwnerReport("U999", [finding])).text

    assert "file date 2026-12-05" in text and "evidence:" not in text and "statements" not in text
