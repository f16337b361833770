"""Answers lead with the answer (issue 9): units, direct answers, whole-sentence quotes, tables, template
variables, disagreeing sources, and the combined confidence."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import pytest
import regex

from config import AnswerConfig, CalibrationConfig, ChunkingConfig
from knowledge.answering import LIST_ROOM, compose_answer, evidence_quote, is_pointer, tidy
from knowledge.chunking import chunk_document
from knowledge.reader import current_model
from knowledge.parsing import parse_document, strip_template_tags
from knowledge.scoring import bm25_share, combine, evidence_score, rank_agreement
from knowledge.sentences import ROW, embedding_inputs, split_units
from knowledge.types import Passage
from tests.conftest import CORPUS, needs_shared, synced_kb, written_kb

WEBHOOK_DOCS = """Webhooks are sent as `POST` requests with a JSON body.

- Webhook delivery **times out after 30 seconds**. If the endpoint has not returned a 2xx status
  within 30 seconds, the attempt counts as failed.
- Failed attempts are retried with exponential backoff."""

WEBHOOK_RUNBOOK = """Workers take events from the queue and `POST` them to customer endpoints. The webhook timeout is
**60 seconds**: a delivery that gets no response within 60 seconds is counted as failed and retried."""


def _passage(text: str, doc_id: str, score: float, title: str = "Page", day: int = 1) -> Passage:
    return Passage(chunk_id=f"{doc_id}#0", doc_id=doc_id, collection="c", title=title, url=f"https://x/{doc_id}",
                   heading_path=(title,), text=text, score=score, dense_score=0.7, bm25_score=3.0,
                   last_modified=datetime(2026, 1, day, tzinfo=timezone.utc), evidence={"cosine": 0.7})


def test_units_cover_sentences_items_rows_and_code_and_mark_the_overlap_partial():
    text = ("…was coerced to an integer. Use `strict=True` to refuse it.\n\n| Plan | Price |\n|---|---|\n"
            "| Team | $18 per user |\n\n- First item\n\n```python\nx = 1\n```")
    units = split_units(text)
    assert units[0].partial and units[0].display.startswith("…was")
    assert units[1].display == "Use `strict=True` to refuse it." and not units[1].partial
    row = next(u for u in units if u.kind == ROW)
    assert row.display == "Plan: Team · Price: $18 per user"
    assert [u.kind for u in units][-2:] == ["item", "code"]
    for u in units:  # offsets point into the text
        assert text[u.start:u.end].strip()


def test_abbreviations_and_decimals_do_not_end_a_sentence():
    units = split_units("Use e.g. version 2.5 of the tool. It works.")
    assert [u.display for u in units] == ["Use e.g. version 2.5 of the tool.", "It works."]


def test_a_quote_never_starts_mid_sentence():
    text = "…the rest of a sentence cut by the chunker. The fact is here. More context follows after it."
    quoted = evidence_quote(text, split_units(text), 0, 450)
    assert quoted.startswith("The fact is here.")


def test_a_markdown_table_is_quoted_as_readable_text():
    text = "Limits by plan:\n\n| Plan | Requests per minute |\n|---|---|\n| Team | 300 |\n| Pro | 600 |"
    quoted = evidence_quote(text, split_units(text), 2, 450)
    assert "|" not in quoted and "• Plan: Pro · Requests per minute: 600" in quoted


def test_a_template_variable_takes_its_sentence_with_it_and_leaves_no_hole():
    text = strip_template_tags("Email {{ site.support_email }} with the subject line. Then wait a day.\n"
                               "- Ask {{ site.owner }}\n- Keep going")
    assert "  " not in text and "Email" not in text and "Ask" not in text
    assert text == "Then wait a day.\n- Keep going"


def test_direct_answer_is_the_sentence_that_holds_the_value_asked_for():
    passage = _passage(WEBHOOK_DOCS, "api:webhooks.md", 0.8, "Webhooks")
    answer = compose_answer("what's the webhook timeout?", [passage], AnswerConfig(calibration=CalibrationConfig()))
    assert "Webhook delivery times out after 30 seconds." in answer.direct_answer
    assert answer.direct_answer.endswith("[1]")
    assert answer.to_json()["direct_answer"] == answer.direct_answer


def test_two_quoted_sources_that_disagree_produce_a_warning_naming_both():
    a = _passage(WEBHOOK_DOCS, "api:webhooks.md", 0.8, "Webhooks", day=5)
    b = _passage(WEBHOOK_RUNBOOK, "runbooks:webhook-failures.md", 0.7, "Runbook: webhook failures", day=9)
    answer = compose_answer("what's the webhook timeout?", [a, b], AnswerConfig(calibration=CalibrationConfig()))
    assert len(answer.warnings) == 1
    warning = answer.warnings[0]
    assert "30 seconds" in warning and "60 seconds" in warning
    assert "Webhooks (2026-01-05)" in warning and "Runbook: webhook failures (2026-01-09)" in warning
    assert warning in answer.text
    # the reply cannot tell which is current: labelled low, saying why (a newcomer's 20 vs 25 vacation days
    # carried the warning at confidence 0.85 and no label)
    assert answer.low_confidence and answer.low_confidence_reason == "the pages disagree"


def test_a_disagreement_says_when_a_date_is_only_the_files():
    """A page without a date of its own is dated by its file, the day it was copied: named as such, it no longer
    looks like the current one."""
    a = replace(_passage(WEBHOOK_DOCS, "api:webhooks.md", 0.8, "Webhooks", day=5), date_source="mtime")
    b = replace(_passage(WEBHOOK_RUNBOOK, "runbooks:webhook-failures.md", 0.7, "Runbook", day=9),
                date_source="front matter")
    (warning,) = compose_answer("what's the webhook timeout?", [a, b], AnswerConfig(calibration=CalibrationConfig())).warnings
    assert "Webhooks (file date 2026-01-05)" in warning and "Runbook (2026-01-09)" in warning


def test_passages_whose_headings_name_other_things_do_not_disagree(sample_kb):
    """"Monthly billing is $52 per user per month." under the overview's "Pro" and the Team plan page's "Monthly
    billing is available at $21 per user per month." were shown as sources that disagree."""
    answer = sample_kb.ask("How much does the Pro plan cost per user?")

    assert not [w for w in answer.warnings if "$52" in w and "$21" in w], answer.warnings


def test_a_pages_opening_and_another_pages_section_that_disagree_are_still_warned_about(tmp_path, sample_settings,
                                                                                        embedder):
    """A newcomer's perks page opens with "25 days of paid vacation"; the leave page's "Annual leave" section says
    20: the perks page's opening has no section of its own to tell what it is about, so they disagree."""
    kb = written_kb(tmp_path, {
        "perks.md": "# Perks at a glance\n\n- Every full-time employee gets 25 days of paid vacation per year.\n"
                    "- Lunch vouchers worth 8 EUR per working day.\n",
        "leave.md": "# Vacation and sick leave\n\n## Annual leave\n\nEvery full-time employee gets 20 days of paid "
                    "vacation per year.\n\n## Sick leave\n\nYou get 10 paid sick days per year.\n"},
        sample_settings, embedder)

    answer = kb.ask("How many vacation days do I get per year?")

    assert [w for w in answer.warnings if "25 days" in w and "20 days" in w], answer.text


def test_agreeing_sources_give_no_warning():
    a = _passage(WEBHOOK_DOCS, "api:webhooks.md", 0.8)
    b = _passage(WEBHOOK_DOCS.replace("Webhooks are", "Our webhooks are"), "api:copy.md", 0.7)
    assert compose_answer("webhook timeout?", [a, b], AnswerConfig(calibration=CalibrationConfig())).warnings == []


def test_combined_confidence_uses_every_feature_and_stays_in_the_bands():
    cfg = CalibrationConfig(raw=[0.0, 1.0, 2.0, 3.0], score=[0.0, 0.3, 0.6, 1.0],
                            weights={"cosine": 1.0, "coverage": 2.0})
    assert combine({"cosine": 0.5, "coverage": 0.5}, cfg) == pytest.approx(1.5)
    assert evidence_score({"cosine": 0.5, "coverage": 0.5}, cfg) == pytest.approx(0.45)
    assert evidence_score({"cosine": 9.0, "coverage": 9.0}, cfg) == 1.0
    assert combine({"cosine": 0.42}, CalibrationConfig()) == 0.42  # no weights: cosine alone, as before
    assert bm25_share(2.2, [1.0], k1=1.2) == pytest.approx(1.0)
    assert rank_agreement(0, 0) == 1.0 and rank_agreement(None, 0) == 0.5 and rank_agreement(None, None) == 0.0


def test_keyword_strong_page_ranked_first_is_answered(sample_kb):
    """The refused-but-ranked-first kind: BM25 finds the page, the combined score answers it."""
    answer = sample_kb.ask("What is the webhook timeout?")
    assert not answer.refused
    assert "60 seconds" in answer.direct_answer or "30 seconds" in answer.direct_answer


@pytest.mark.parametrize("question, fact", [
    ("How much does the Team plan cost per user?", "$18 per user per month"),
    ("What is the API rate limit on the Pro plan?", "600"),
    # the page's other section ("Pro customers can request a temporary raise …") no longer outweighs the table
    ("what's the API rate limit for Pro customers?", "600"),
    ("How long is the build timeout on the Pro plan?", "45 minutes"),
    ("customer keeps getting 429s, how long should their client wait?", "Retry-After"),
    # the rule whose bounds admit the asker's 20 days, not "결제일로부터 30일이 지나면 환불되지 않으며"
    ("연간 플랜 결제하고 20일 지났는데 환불 되나요?", "15일째부터 30일 이내에 해지하면"),
    ("what credit do customers get if Pro uptime was 98.7% last month?", "Credit: 25%"),
])
def test_direct_answers_of_sample_questions_hold_the_fact(sample_kb, question, fact):
    answer = sample_kb.ask(question)
    assert fact in answer.direct_answer, answer.direct_answer
    assert len(answer.direct_answer) <= current_model().direct_chars + LIST_ROOM  # a few lines, not the page


@pytest.mark.parametrize("question", ["Who won the 2025 hackathon?", "How do I set up the VPN?"])
def test_a_question_no_page_answers_is_refused(sample_kb, question):
    # Near-topic ones ("the marketing budget of the Q4 promo") are still answered: see README, issue 9 notes.
    assert sample_kb.ask(question).refused


def test_no_reply_starts_mid_sentence(sample_kb):
    for question in ("How do I roll back a deployment?", "What should I do when a disk is full?",
                     "How are webhook retries scheduled?"):
        answer = sample_kb.ask(question)
        for quoted in answer.quotes:
            # empty when the direct answer already shows all of the passage's section
            assert not quoted or (not quoted[0].islower() and not quoted.startswith("…")), quoted


def test_old_index_without_unit_vectors_still_answers(sample_kb):
    index = sample_kb.index()
    saved = index.units
    try:
        index.units = None
        answer = sample_kb.ask("How much does the Team plan cost per user?")
        assert "$18" in answer.direct_answer
    finally:
        index.units = saved


def test_a_template_variable_in_a_wrapped_sentence_takes_only_that_sentence():
    text = strip_template_tags("If you need it sooner,\nwrite to {{ site.email }} today.\nThe desk is open Monday to Friday.")
    assert text == "The desk is open Monday to Friday."


def test_a_sentence_left_out_for_a_template_variable_is_named_in_the_sync_report(tmp_path, embedder):
    from config import Settings, SourceConfig
    from knowledge import KnowledgeBase

    folder = tmp_path / "it"
    folder.mkdir()
    (folder / "laptops.md").write_text("# Laptops\n\nContact the IT desk at {{ site.email }} and include\n"
                                       "your asset tag. Call the hotline +1 555 0142 at any time of day.\n")
    kb = KnowledgeBase(Settings(sources=[SourceConfig(name="it", path=str(folder))]), tmp_path / "home", embedder)

    report = kb.sync()

    (warning,) = [w for w in report.warnings if "template variable" in w]
    assert warning.startswith("it:laptops.md:") and "include your asset tag" in warning


def test_a_quote_from_the_middle_of_numbered_steps_starts_at_step_one():
    text = ("To connect:\n\n1. Download the client from the portal.\n2. Run the installer.\n"
            "3. Enter the gateway address vpn.example.\n4. Sign in with your account.")
    quoted = evidence_quote(text, split_units(text), 3, 450)  # the evidence is step 3
    assert quoted.splitlines()[:2] == ["To connect:", "1. Download the client from the portal."]


def test_steps_all_numbered_one_are_quoted_with_their_step_numbers():
    # Markdown renumbers "1. … 1. … 1."; Slack shows it as written, so the quote numbers the steps itself
    text = ("To report an incident:\n\n1. Email the service desk.\n   - Include details.\n1. Check the plan.\n"
            "1. Answer the IR team's questions:\n   1. What systems?\n   2. How long?\n1. Rotate the secrets.")
    quoted = evidence_quote(text, split_units(text), 8, 450)
    steps = [line.split()[0] for line in quoted.splitlines() if line.strip()[0].isdigit()]
    assert steps == ["1.", "2.", "3.", "1.", "2.", "4."]
    # the questions of step 3 are its own list: indented under it, as the page nests them
    assert "\n    1. What systems?\n    2. How long?\n4. Rotate" in quoted
    assert "\n    ◦ Include details.\n2. Check" in quoted


def test_a_direct_answer_indents_a_nested_lists_items_under_their_own():
    """A conference page's timelines ("Five days to ten days in advance for:") and the events under each were
    one flat run of bullets."""
    text = ("Submit requests:\n\n- Five days in advance for:\n  - Events under $2,500\n"
            "- Three weeks in advance for:\n  - Events over $2,500\n  - Speaking events")
    units = split_units(text)
    passage = Passage(chunk_id="d#0", doc_id="d", collection="c", title="Approvals", url="d", heading_path=(),
                      text=text, score=0.9, dense_score=0.6, bm25_score=5.0,
                      last_modified=datetime(2025, 2, 27, tzinfo=timezone.utc), evidence={"cosine": 0.6},
                      unit_scores=tuple((u.start, u.end, 0.6) for u in units if u.answerable))
    answer = compose_answer("how far in advance do I submit a request for events over $2,500?", [passage],
                            AnswerConfig(calibration=CalibrationConfig()))
    assert "• Three weeks in advance for:\n    ◦ Events over $2,500" in answer.direct_answer, answer.direct_answer


def test_a_quote_from_the_middle_of_steps_skips_none_of_those_before_the_evidence():
    # the phishing steps of the security-incidents page: step 2 is long (two long links), so step 1 was
    # quoted, then step 4: "1. Do not click … 1. You may mark it as spam"
    link = "[Phishing Emails and Scams InSite page](https://insite.gsa.gov/" + "x" * 200 + ")"
    text = ("If you receive a suspicious email:\n\n1. Do not click any links.\n1. Follow the video on the " + link +
            ".\n1. This shows how to use the Cofense tool.\n1. You may mark it as spam after reporting it.")
    quoted = evidence_quote(text, split_units(text), 4, 200)  # the evidence is step 4
    assert quoted.splitlines()[:2] == ["3. This shows how to use the Cofense tool.",
                                       "4. You may mark it as spam after reporting it."]


def test_a_template_tag_quoted_in_inline_code_is_text_not_a_hole():
    text = strip_template_tags("The old site used `{{site.baseurl}}` in links. Email {{ site.email }} today.")
    assert text == "The old site used `` in links."


# Direct answers on real corpus sections. Unit cosines are the ones all-MiniLM-L6-v2 gave on the real corpora
# home (`minerva --config config/real-corpora.yaml ask ... --json`), checked by hand once; other units 0.2.
HANDBOOK = CORPUS / "tts-handbook" / "2025-02"


def test_a_list_item_under_a_lead_in_is_embedded_alone_and_after_it():
    text = ("We follow these practices:\n\n- Rotate keys. Do not delete the commit.\n- Report.\n\n"
            "Some words here.\n\n- A list without one.")

    inputs = [(u.display, t) for u, t in embedding_inputs(text)]

    assert ("Rotate keys. Do not delete the commit.", "We follow these practices: Rotate keys. Do not delete the commit.") in inputs
    assert ("Rotate keys. Do not delete the commit.", "Rotate keys. Do not delete the commit.") in inputs
    assert ("Report.", "We follow these practices: Report.") not in inputs  # one word: not an answer unit
    assert [t for d, t in inputs if d == "A list without one."] == ["A list without one."]


@needs_shared
@pytest.mark.xfail(strict=True, reason="known miss of the fitted reader (issue 22): a heading that introduces a list is not read as part of an item")
def test_a_list_item_answers_through_the_heading_that_introduces_its_list(tmp_path, sample_settings, embedder):
    # alone, "You are conducting research with 9 or fewer participants" is far from the question (MiniLM
    # cosine 0.27) and "If you are still unsure whether you need PRA clearance, please consult …" led the answer
    kb = synced_kb(tmp_path, {"pra.md": HANDBOOK / "training-and-development" / "pra-for-user-research.md"},
                   sample_settings, embedder)

    answer = kb.ask("doing 6 user interviews w/ members of the public, do we need PRA clearance?")

    assert answer.direct_answer.startswith("You do not need PRA clearance if: [1]\n"), answer.direct_answer
    assert "9 or fewer participants" in answer.direct_answer
    assert "still unsure" not in answer.direct_answer


def _section(path, first: str, stop: str) -> str:
    """The text of a real page from the line starting ``first`` up to (not including) the line starting
    ``stop``, Liquid tags stripped as at ingest."""
    text = strip_template_tags(path.read_text(encoding="utf-8"))
    start = text.index(first)
    return text[start:text.index(stop, start)].strip()


def _real_passage(text: str, doc_id: str, title: str, heading_path: tuple, cosines: dict[str, float]) -> Passage:
    units = tuple((u.start, u.end, next((c for prefix, c in cosines.items() if u.display.startswith(prefix)), 0.2))
                  for u in split_units(text) if u.answerable)
    return Passage(chunk_id=f"{doc_id}#0", doc_id=doc_id, collection="handbook", title=title, url=doc_id,
                   heading_path=heading_path, text=text, score=0.9, dense_score=0.6, bm25_score=5.0,
                   last_modified=datetime(2025, 2, 27, tzinfo=timezone.utc), evidence={"cosine": 0.6},
                   unit_scores=units)


@needs_shared
@pytest.mark.xfail(strict=True, reason="known miss of the fitted reader (issue 22): the memorandum's title joins the answer")
def test_a_link_that_only_points_elsewhere_does_not_answer_when_a_sentence_states_the_fact():
    text = _section(HANDBOOK / "travel-and-leave" / "leave.md", "### Parental bereavement leave", "### Taking advanced")
    passage = _real_passage(text, "handbook:travel-and-leave/leave.md", "Leave types",
                            ("Types of leave", "Parental bereavement leave"),
                            {"Parental Bereavement Leave Memorandum": 0.638, "You can receive two weeks": 0.507})

    answer = compose_answer("what's the parental leave policy?", [passage],
                            AnswerConfig(calibration=CalibrationConfig()))

    assert answer.direct_answer.startswith("You can receive two weeks (80 hours) of parental bereavement leave")
    assert "Memorandum" not in answer.direct_answer  # the list item is only a link's title


@needs_shared
@pytest.mark.xfail(strict=True, reason="known miss of the fitted reader (issue 22): the next FAQ entry outscores the pointer")
def test_a_faq_answer_stays_under_its_own_heading_and_shows_no_html_entity():
    text = _section(HANDBOOK / "general-information-and-resources" / "distributed.md",
                    "### Connect to the GSA network remotely?", "### What supplies")
    passage = _real_passage(text, "handbook:general-information-and-resources/distributed.md", "Distributed",
                            ("How do I...", "Connect to the GSA network remotely?"),
                            {"See Logging in": 0.373, "Apple's instructions": 0.268})

    answer = compose_answer("how do I connect to the VPN?", [passage], AnswerConfig(calibration=CalibrationConfig()))

    # the next FAQ entry ("Tether to my GSA phone?") is another question; &amp; is shown as &
    assert answer.direct_answer == "See Logging in & Networks for details. [1]"


@needs_shared
@pytest.mark.xfail(strict=True, reason="known miss of the fitted reader (issue 22): the page's own summary still leads")
def test_a_sentence_about_the_page_itself_does_not_answer():
    text = _section(HANDBOOK / "hiring-staying-or-changing-jobs" / "leaving-tts.md", "This guide covers",
                    "### 1. Fill out")
    passage = _real_passage(text, "handbook:hiring-staying-or-changing-jobs/leaving-tts.md",
                            "Leaving TTS & Offboarding", (),
                            {"This guide covers": 0.554, "Begin this process": 0.44, "These steps apply": 0.284})

    answer = compose_answer("planning to leave tts, when do i start offboarding?", [passage],
                            AnswerConfig(calibration=CalibrationConfig()))

    assert answer.direct_answer.startswith("Begin this process at least two weeks before your last day of work.")


@needs_shared
def test_admonition_markers_and_inline_html_are_not_shown_but_inline_code_is_kept():
    models = (CORPUS / "pydantic-docs" / "v2.13.4" / "concepts" / "models.md").read_text(encoding="utf-8")
    start = models.index("!!! note\n    This behavior was achieved in Pydantic V1")
    note = split_units(models[start:models.index("\n\n", start)])[0].display  # the tree reads no "!!! note"
    chicago = (HANDBOOK / "general-information-and-resources" / "chicago.md").read_text(encoding="utf-8")
    html_line = next(line.strip() for line in chicago.splitlines() if "<em>JCK</em>" in line)

    assert note.startswith("This behavior was achieved")
    assert tidy(note).startswith("This behavior was achieved in Pydantic V1 via the config setting `allow_mutation")
    assert "<" not in tidy(html_line) and "or JCK." in tidy(html_line)
    assert tidy("Compute HMAC over `<t>.<raw request body>` &amp; compare") == \
        "Compute HMAC over `<t>.<raw request body>` & compare"


def test_pointers_are_told_from_sentences_with_a_link():
    assert is_pointer("See [Logging in &amp; Networks]() for details.")
    assert is_pointer("* [Parental Bereavement Leave Memorandum](https://chcoc.gov/content/parental-bereavement-leave)")
    assert is_pointer("Refer to the Paid Parental Leave page for more information, including requesting PPL.")
    assert not is_pointer("Read the [retry guide](https://x/retries) to learn why retries back off exponentially.")
    assert not is_pointer("See your supervisor before taking advanced leave.")
    assert not is_pointer("Email [the service desk](mailto:itservicedesk@gsa.gov).")  # who to contact is a fact


def test_passages_not_scored_from_the_calibrated_evidence_are_ordered_by_their_score():
    """A Korean question's cross-lingual passages carry English-model evidence the calibration did not score
    (`knowledge.crosslingual`): their own score orders them, not that evidence."""
    cfg = AnswerConfig(calibration=CalibrationConfig())
    right = replace(_passage(WEBHOOK_RUNBOOK, "runbooks:webhooks.md", 0.68), evidence={"cosine": 0.1, "xl_cosine": 0.5})
    other = replace(_passage(WEBHOOK_DOCS, "api:webhooks.md", 0.63), evidence={"cosine": 0.9, "xl_cosine": 0.4})

    answer = compose_answer("웹훅 타임아웃은 몇 초인가요?", [other, right], cfg, language="ko")

    assert [c.doc_id for c in answer.citations][:1] == ["runbooks:webhooks.md"]


MERGED_SECTIONS = """## Carry-over

You can carry over up to 5 unused days into the next year.

## Parental leave

Birthing parents get 16 weeks of fully paid leave; other parents get 12 weeks.

### Sick leave

Sick leave accrues at 4 hours per pay period."""


def test_a_chunk_of_several_short_sections_is_cited_and_quoted_by_the_section_of_its_evidence():
    from knowledge.sentences import section_path, split_units

    passage = replace(_passage(MERGED_SECTIONS, "docs:pto.md", 0.9, "Paid Time Off"),
                      heading_path=("Paid Time Off", "Carry-over"))  # the chunker keeps the first section's path

    answer = compose_answer("how long is parental leave for dads", [passage], AnswerConfig(calibration=None))

    assert answer.direct_answer.startswith("Birthing parents get 16 weeks")
    assert answer.citations[0].heading == "Parental leave" and answer.passages[0].heading == "Parental leave"
    assert all("carry over" not in q and "Sick leave accrues" not in q for q in answer.quotes)
    units = split_units(MERGED_SECTIONS)
    assert section_path(("Paid Time Off", "Carry-over"), MERGED_SECTIONS, units, len(units) - 1) == (
        "Paid Time Off", "Parental leave", "Sick leave")
    intro = "# VPN Setup\n\nAcme uses WireGuard.\n\n## Install the client\n\n- macOS: install WireGuard from the App Store.\n"
    units = split_units(intro)  # an intro merged into its subsection keeps the subsection's path
    assert section_path(("VPN Setup", "Install the client"), intro, units, 1) == ("VPN Setup",)
    assert section_path(("VPN Setup", "Install the client"), intro, units, 3) == ("VPN Setup", "Install the client")
    opens_with_text = MERGED_SECTIONS.split("\n\n", 1)[1]  # no heading line first: levels 1, 2, …
    units = split_units(opens_with_text)
    assert section_path(("Paid Time Off", "Carry-over"), opens_with_text, units, 2) == ("Paid Time Off", "Parental leave")


def test_a_quote_that_is_only_the_direct_answer_is_not_printed_twice() -> None:
    """(18F travel FAQ: "who approves expenses over 500 dollars?" printed its one sentence twice, one line apart.)"""
    from knowledge.answering import plain_text
    from knowledge.types import Answer

    sentence = "In the case of individual travel, you may estimate your expenses from your authorization in Concur."
    answer = Answer(answer_id="a" * 32, question="q", refused=False, text="", direct_answer=f"{sentence} [1]",
                    quotes=[sentence, "Receipts are required for lodging."], citation_numbers=[1, 2])
    assert plain_text(answer) == f"{sentence} [1]\n\n> Receipts are required for lodging. [2]"
    # the quote is the passage as written: its Markdown and link targets do not make it say more
    marked = replace(answer, quotes=["**In the case of [individual travel](https://x/t)**, you may estimate your "
                                     "expenses from your authorization in _Concur_.", "Receipts are required."])
    assert plain_text(marked) == f"{sentence} [1]\n\n> Receipts are required. [2]"
    # a quote that adds one short sentence to what the direct answer says is not shown either; one that says
    # mostly something else is
    longer = replace(answer, quotes=[f"{sentence} Keep the receipts.", f"Hotels are booked in Concur. {sentence[:40]}"])
    assert plain_text(longer) == f"{sentence} [1]\n\n> Hotels are booked in Concur. {sentence[:40]} [2]"


def test_links_that_lead_nowhere_show_their_label_and_code_is_left_alone():
    text = 'Please [contact the Help Desk]() or see [`dataclasses`][dataclasses] and [iterator][]; `d["a"]["b"]`.'
    assert tidy(text) == 'Please contact the Help Desk or see `dataclasses` and iterator; `d["a"]["b"]`.'
    assert tidy("[API](https://example.com/api)") == "[API](https://example.com/api)"  # a real link stays


def test_markdown_backslash_escapes_are_resolved_outside_code():
    assert tidy(r"336 hours \- 240 hour cap \= 96 Use or Lose hours") == "336 hours - 240 hour cap = 96 Use or Lose hours"
    assert tidy(r"run `grep \-v x` first") == r"run `grep \-v x` first"


@needs_shared
def test_the_direct_answer_answers_both_parts_of_a_two_part_question(tmp_path, sample_settings, embedder):
    kb = synced_kb(tmp_path, {"leave.md": HANDBOOK / "travel-and-leave" / "leave.md"}, sample_settings, embedder)

    answer = kb.ask("is there a cap on award leave? and does it expire")

    assert "expires one year" in answer.direct_answer
    assert "80 hour" in answer.direct_answer  # the cap, which the expiry sentences alone left out


@needs_shared
def test_a_part_asked_in_other_words_is_answered_by_the_unit_holding_the_words_the_page_uses(
        tmp_path, sample_settings, embedder):
    from config import SourceConfig
    from knowledge import KnowledgeBase
    from tests.conftest import copy_pages

    runbook = CORPUS / "prometheus-runbooks" / "runbooks" / "etcd" / "etcdBackendQuotaLowSpace.md"
    folder = copy_pages(tmp_path / "docs", {"etcdBackendQuotaLowSpace.md": runbook})
    kb = KnowledgeBase(replace(sample_settings, sources=[SourceConfig(name="docs", path=str(folder))]),
                       tmp_path / "home", embedder=embedder)
    kb.sync()

    answer = kb.ask("etcdBackendQuotaLowSpace alert — what does it mean and how do i buy some time")

    assert "exceeds 95% of the maximum DB quota" in answer.direct_answer  # what it means
    assert "defrag to gain some time" in answer.direct_answer  # no page says "buy": "time" picks the unit


def test_the_rule_whose_bound_the_questions_own_amount_meets_answers():
    from knowledge.answering import _amounts, _rule_verdicts
    from knowledge.values import extract_values

    (uptime,) = _amounts("what credit do customers get if Pro uptime was 98.7% last month?")

    def verdicts(text):
        return _rule_verdicts(extract_values(text), (uptime,))

    assert verdicts("Monthly uptime: Below 99.0% but at least 95.0% · Credit: 25%") == [True]  # applies
    assert verdicts("Monthly uptime: Below 95.0% · Credit: 50%") == [False]  # another asker's case
    assert verdicts("Monthly uptime: Below target but at least 99.0% · Credit: 10%") == [False]
    assert verdicts("Credit: 25%") == []  # states no bound: no rule for the amount
    assert _amounts("is there a cap of up to 80 hours?") == []  # a bound asked about is not the asker's case


@needs_shared
def test_a_nested_list_item_comes_with_the_outer_item_that_leads_in_and_the_rule_for_the_asked_amount(
        tmp_path, sample_settings, embedder):
    page = HANDBOOK / "training-and-development" / "conferences-events-training.md"
    kb = synced_kb(tmp_path, {"conferences-events-training.md": page}, sample_settings, embedder)

    answer = kb.ask("how far ahead do i need to submit a conference request if its like $3k incl travel")

    assert "Three to five weeks in advance for:" in answer.direct_answer  # the outer item leading the rule in
    assert "Conference events that costs more than $2,500" in answer.direct_answer
    assert "less than $2500" not in answer.direct_answer  # the rule for cheaper conferences


@needs_shared
def test_a_direct_answer_never_opens_indented_under_an_item_it_does_not_show(tmp_path, sample_settings, embedder):
    """The SF-182 steps nest "This OLU Job Aid has instructions …" under a step the answer does not show: it had
    opened the direct answer as "    ◦ This OLU Job Aid …" (issue 22, hb-063)."""
    page = HANDBOOK / "training-and-development" / "conferences-events-training.md"
    kb = synced_kb(tmp_path, {"conferences-events-training.md": page}, sample_settings, embedder)

    answer = kb.ask("making my SF-182 in OLU for a course and my supervisor's name isn't showing up as the "
                    "approver. what now?")

    first = answer.direct_answer.splitlines()[0]
    assert first == first.lstrip() and not first.startswith("◦")


@needs_shared
def test_a_list_of_steps_joining_the_answer_does_not_push_out_the_best_unit(tmp_path, sample_settings, embedder):
    """A PSLF question names the form's section 3: the FEIN item answers it, and the how-to's steps, brought in by
    a weaker unit, had left it out of the direct answer (issue 22, hb-022)."""
    page = HANDBOOK / "getting-started" / "classes" / "benefits.md"
    kb = synced_kb(tmp_path, {"benefits.md": page}, sample_settings, embedder)

    answer = kb.ask("filling out my PSLF form, what's GSA's employer ID number (FEIN) for section 3?")

    assert "44-0553234" in answer.direct_answer


@needs_shared
def test_a_long_item_is_cut_by_what_a_reader_sees_and_a_cut_lead_in_never_leads(tmp_path, sample_settings,
                                                                                 embedder):
    """The item naming what a micropurchase of IT services needs ends "You will also need to have a vendor
    quote": its link's 100-character address had counted against the direct answer's size and cut that
    sentence off; and the chunk's overlap "…has procured:" had led the answer as the lead-in of a list
    (issue 22, xh-120)."""
    page = HANDBOOK / "general-information-and-resources" / "purchase-requests.md"
    kb = synced_kb(tmp_path, {"purchase-requests.md": page}, sample_settings, embedder)

    answer = kb.ask("want to buy about $4k of IT consulting services from a vendor through micropurchase. "
                    "what do i need to attach?")

    assert "Section 889" in answer.direct_answer and "vendor quote" in answer.direct_answer
    assert not answer.direct_answer.startswith("…")


BOOK_FLIGHT = """1. Review and Reserve Flight: Review your flight itinerary, passenger information and fare.
2. Click Reserve Flight and Continue.

Before doing so, please ensure that your travel card is saved in your Concur profile."""
BOOK_BY_PHONE = """Any reservations made in Concur will be held until approvals are secured.

**Note:** _If you don't have your GSA travel card yet OR your estimated departure is less than 72 hours away,
call AdTrav at (877) 472-6716 to make your reservations, then head into Concur an hour later._"""


@pytest.mark.xfail(strict=True, reason="known miss of the fitted reader (issue 22): the booking steps outscore the "
                   "AdTrav rule that applies to the asker's 2 days")
def test_a_low_confidence_answer_quotes_the_tied_passage_whose_sentence_answers():
    steps = _passage(BOOK_FLIGHT, "handbook:travel-guide-faq.md", 0.447, "Travel guide FAQ")
    phone = _passage(BOOK_BY_PHONE, "handbook:travel-guide-2-book-travel.md", 0.423, "Book travel")
    question = "flight is in 2 days and i still dont have my travel card, how do i book"

    answer = compose_answer(question, [steps, phone], AnswerConfig(calibration=None))

    assert answer.low_confidence and [c.doc_id for c in answer.citations] == [phone.doc_id]
    assert "less than 72 hours away, call AdTrav at (877) 472-6716" in answer.direct_answer
    far_apart = compose_answer(question, [steps, replace(phone, score=0.40)], AnswerConfig(calibration=None))
    assert [c.doc_id for c in far_apart.citations] == [steps.doc_id]  # not tied: the best score decides


RESIZE_STEPS = """If volume resizing is available, it's easiest to increase the capacity of the volume.

To resize the volume run:

```shell
kubectl -n <my-namespace> edit pvc <my-pvc>
```

And edit `.spec.resources.requests.storage` to the new desired storage size.

Example of a model:

```python
class Model(BaseModel):
    x: int
```
"""


def test_a_direct_answer_that_leads_to_a_command_shows_the_command_but_not_an_example_program():
    passage = _passage(RESIZE_STEPS, "runbooks:pvc.md", 0.9, "Direct volume resizing")
    answer = compose_answer("how do I resize the volume?", [passage], AnswerConfig(calibration=CalibrationConfig()))
    assert "To resize the volume run:\n```\nkubectl -n <my-namespace> edit pvc <my-pvc>\n```" in answer.direct_answer
    assert "class Model" not in answer.direct_answer  # and its citation is not on the closing fence


def test_a_question_asking_what_to_do_gets_the_next_instruction_too():
    """Checked by hand once on the handbook's Zoom page: checking your profile is step one, the request that
    lifts the 40-minute cut is step two."""
    text = ("You can check your Zoom profile to see your user type and meeting capacity. Submit a Service Now "
            "request to be upgraded to a Licensed user. To help ensure people can fully participate, see our "
            "page on hosting accessible meetings.")
    passage = _passage(text, "handbook:zoom.md", 0.9, "For meetings longer than 40 minutes")
    answer = compose_answer("my zoom calls keep getting cut at 40 min, how do i fix that", [passage],
                            AnswerConfig(calibration=CalibrationConfig()))
    assert "Submit a Service Now request to be upgraded to a Licensed user." in answer.direct_answer


def test_inline_code_keeps_its_underscores_and_stars_while_emphasis_goes():
    """The migration guide's row `__fields__` → `model_fields` was shown as `fields`: the dunder is a name."""
    table = "| Pydantic V1 | Pydantic V2 |\n| --- | --- |\n| `__fields__` | `model_fields` |\n\nUse **bold** `*args`."
    displays = [u.display for u in split_units(table)]
    assert displays == ["Pydantic V1: `__fields__` · Pydantic V2: `model_fields`", "Use bold `*args`."]


@needs_shared
def test_a_list_the_question_asks_for_comes_whole_with_its_lead_in():
    # the two best items alone ("over $75", "a miscellaneous voucher") read as if they were all of it; "- [Hotels](…)"
    # is one word, never a candidate, yet an item of the list
    text = _section(HANDBOOK / "travel-and-leave" / "travel-and-leave-policies" / "travel-guide-faq.md",
                    "##### Expenses requiring receipts", "##### Expenses requiring further justification")
    passage = _real_passage(text, "handbook:travel-guide-faq.md", "Travel guide FAQ", ("Expenses requiring receipts",),
                            {"Any expenses claimed on a miscellaneous": 0.7, "Any other expense exceeding": 0.63})

    answer = compose_answer("for travel vouchers when do i actually need a receipt?", [passage],
                            AnswerConfig(calibration=CalibrationConfig()),  # BM25 idf on the real corpora
                            term_weights={"travel": 3.2, "voucher": 4.9, "need": 1.8, "receipt": 5.2})

    lines = [line.split(" [")[0] for line in answer.direct_answer.splitlines()]
    assert lines[:3] == ["The following expenses require receipts:", "• Hotels",
                         "• Flights or Amtrak booked outside of Concur (Requires additional justification and is only "
                         "approved on a case-by-case basis)"], answer.direct_answer
    assert "• Any other expense exceeding $75, including local transportation (This threshold is $25 for local vouchers)" \
        in lines
    assert lines[-1] == "• Professional liability insurance"


@needs_shared
@pytest.mark.xfail(strict=True, reason="known miss of the fitted reader (issue 22): other removed properties join the `regex` item")
def test_an_item_the_question_names_comes_with_its_lead_in_but_not_the_whole_list():
    text = _section(CORPUS / "pydantic-docs" / "v2.13.4" / "migration.md",
                    "The following properties have been removed from or changed in", "Field constraints are no longer")
    passage = _real_passage(text, "pydantic:migration.md", "Migration Guide", ("Changes to `pydantic.Field`",),
                            {"`regex`": 0.6, "`min_items`": 0.45, "`max_items`": 0.45})

    answer = compose_answer("pydantic v2 Field(regex=...) raises an error, what do I use instead?", [passage],
                            AnswerConfig(calibration=CalibrationConfig()),
                            term_weights={"pydant": 1.3, "v2": 2.0, "field": 1.8, "regex": 5.2, "rais": 2.8,
                                          "error": 2.1, "use": 1.0, "instead": 3.4})

    assert answer.direct_answer.startswith("The following properties have been removed from or changed in `Field`: "
                                           "[1]\n• `regex` (use `pattern` instead) [1]"), answer.direct_answer
    assert "`const`" not in answer.direct_answer


def test_a_lead_in_and_its_items_keep_the_lists_order(sample_kb):
    answer = sample_kb.ask("when should I escalate a disk full page to storage?")

    lines = [line.split(" [")[0] for line in answer.direct_answer.splitlines()]
    assert lines[0].endswith("if:"), answer.direct_answer
    assert lines[1:4] == ["• usage is still critical 30 minutes after the page, or", "• a customer volume itself is full, or",
                         "• more than 3 nodes in the same region are alerting at once."], answer.direct_answer


@needs_shared
@pytest.mark.xfail(strict=True, reason="known miss of the fitted reader (issue 22): a heading that introduces a list is not read as part of an item")
def test_list_items_under_a_heading_that_introduces_them_come_with_that_heading():
    # the heading is the answer's first half: without it, "9 or fewer participants" reads as a requirement
    text = _section(HANDBOOK / "training-and-development" / "pra-for-user-research.md",
                    "#### You _do not_ need PRA clearance if:", "#### Usability testing")
    passage = _real_passage(text, "handbook:training-and-development/pra-for-user-research.md", "PRA",
                            ("Determining whether you need PRA clearance", "You _do not_ need PRA clearance if:"),
                            {"You are conducting research with 9": 0.5, "You are gathering": 0.45})

    answer = compose_answer("doing 6 user interviews w/ members of the public, do we need PRA clearance?", [passage],
                            AnswerConfig(calibration=CalibrationConfig()))

    assert answer.direct_answer.startswith("You do not need PRA clearance if: [1]\n• You are conducting research "
                                           "with 9 or fewer participants"), answer.direct_answer
    assert answer.direct_answer.count("need PRA clearance if") == 1


@needs_shared
@pytest.mark.xfail(strict=True, reason="known miss of the fitted reader (issue 22): the status sentence joins the steps")
def test_a_how_do_i_question_leads_with_the_first_step_and_its_next_steps_not_a_status_sentence():
    # "Eventually the PVC status will say …" matches "resize" best (cosine 0.65) but tells nobody what to do
    text = _section(CORPUS / "prometheus-runbooks" / "runbooks" / "kubernetes" / "KubePersistentVolumeFillingUp.md",
                    "### Direct Volume resizing", "### Migrate data")
    passage = _real_passage(text, "runbooks:kubernetes/KubePersistentVolumeFillingUp.md", "KubePersistentVolumeFillingUp",
                            ("KubePersistentVolumeFillingUp", "Mitigation", "Direct Volume resizing"),
                            {"Eventually the PVC status": 0.653, "To check if volume expansion": 0.54,
                             "To resize the volume run": 0.588, "If volume resizing is available": 0.588,
                             "Once the PVC status says": 0.468, "And edit": 0.328, "In this case": 0.177})

    answer = compose_answer("pvc for our postgres is almost full (KubePersistentVolumeFillingUp). how do i resize it?",
                            [passage], AnswerConfig(calibration=CalibrationConfig()))

    assert answer.direct_answer.startswith("To check if volume expansion is available"), answer.direct_answer
    assert "Eventually" not in answer.direct_answer
    # its next steps come before other units that score almost as well: the command and what to edit in it
    assert "To resize the volume run:\n```\n$ kubectl -n <my-namespace> edit pvc <my-pvc>\n```" in answer.direct_answer
    assert "And edit `.spec.resources.requests.storage`" in answer.direct_answer


def test_a_citation_names_its_section_without_the_headings_markdown():
    passage = Passage(chunk_id="d#4", doc_id="d", collection="handbook", title="Security incidents", url="d",
                      heading_path=("Security incidents", "Reporting [Phishing](https://insite.gsa.gov/x?term=cofense)",
                                    "You _do not_ need it if:", "`__fields__` renamed"),
                      text="Text.", score=0.9, dense_score=0.6, bm25_score=1.0,
                      last_modified=datetime(2025, 2, 27, tzinfo=timezone.utc))

    assert passage.heading == "Reporting Phishing › You do not need it if: › `__fields__` renamed"


@needs_shared
def test_a_sentence_that_opens_with_therefore_comes_with_the_sentence_it_concludes():
    text = _section(HANDBOOK / "travel-and-leave" / "leave.md", "#### Advanced annual leave", "#### Advanced sick leave")
    passage = _real_passage(text, "handbook:travel-and-leave/leave.md", "Leave",
                            ("Types of leave", "Taking advanced leave", "Advanced annual leave"),
                            {"Therefore, you can request": 0.6, "You will earn 56": 0.45})

    answer = compose_answer("is there still an 80 hour cap on advanced annual leave?", [passage],
                            AnswerConfig(calibration=CalibrationConfig()))

    premise = answer.direct_answer.index("You will earn 56 more annual leave hours (14 pay periods x 4 hours")
    assert premise < answer.direct_answer.index("Therefore, you can request up to 56"), answer.direct_answer


def test_a_quoted_code_block_keeps_its_language_but_not_the_docs_build_attributes():
    text = ('Import it from the v1 namespace:\n\n```python {test="skip" lint="skip"}\n'
            'from pydantic.v1.utils import lenient_isinstance\n```')
    quoted = evidence_quote(text, split_units(text), 0, 450)
    assert "```python\nfrom pydantic.v1.utils import lenient_isinstance\n```" in quoted
    assert "test=" not in quoted


@needs_shared
def test_a_list_item_as_long_as_a_paragraph_is_cut_to_the_sentences_that_answer():
    text = _section(HANDBOOK / "general-information-and-resources" / "sensitive-information.md",
                    "## Protecting TTS Systems", "## Tools")
    passage = _real_passage(text, "handbook:general-information-and-resources/sensitive-information.md",
                            "Sensitive information", ("Protecting TTS Systems",), {"Do not store sensitive": 0.6})

    answer = compose_answer("oops just pushed an aws secret key to a public github repo. should i force push to get "
                            "rid of the commit?", [passage], AnswerConfig(calibration=CalibrationConfig()))

    item = answer.direct_answer.splitlines()[-1]
    assert "consider it compromised and revoke or change the credentials immediately. Do not delete the commit" in item
    assert item.startswith("• … In the event that") and len(item) < 330, item


def test_the_direct_answer_follows_the_order_of_its_cited_passages(sample_kb):
    # the promotion's "$13.50 … instead of $18" scores a hair above the price page's line, but the price page is
    # the stronger source ([1]): the README's first question starts with the list price
    answer = sample_kb.ask("How much does the Team plan cost per user?")

    assert answer.direct_answer.startswith("• $18 per user per month, billed annually"), answer.direct_answer
    numbers = [int(n) for n in regex.findall(r"\[(\d+)\]", answer.direct_answer)]
    assert numbers == sorted(numbers)


def test_quoted_text_is_read_as_the_page_renders_it():
    # A handbook page quotes its policy in a blockquote (tts-handbook's Zoom page): each quoted list item is a
    # unit of its own, without the ">" markers, and a mail link keeps the address it leads to.
    text = ("> Zoom meetings hosted by partners are allowed.\n>\n"
            "> - GSA employees may join **UNLESS** they must accept the Terms of Service (TOS).\n"
            "> - Such meetings are limited to **non-sensitive** discussions.\n\n"
            "Please email the [TTS Talent team](mailto:tts-jointts@gsa.gov) and copy your contact.\n\n"
            "<details> <summary>Full context</summary>\n\n- firewall rules\n- upgrades")

    units = [(u.kind, u.display) for u in split_units(text) if u.answerable]

    assert units == [
        ("sentence", "Zoom meetings hosted by partners are allowed."),
        ("item", "GSA employees may join UNLESS they must accept the Terms of Service (TOS)."),
        ("item", "Such meetings are limited to non-sensitive discussions."),
        ("sentence", "Please email the TTS Talent team (tts-jointts@gsa.gov) and copy your contact."),
        ("item", "firewall rules"),  # one of what its list enumerates; "upgrades" alone says too little
    ]


@needs_shared
def test_the_advice_after_a_long_example_is_read_as_prose():
    # Pydantic's AWS Lambda page: a piece of the chunker once opened inside the long example, and its closing fence
    # read as an opening one swallowed the advice after it. No chunk opens inside code now (`knowledge.chunking`).
    page = CORPUS / "pydantic-docs" / "v2.13.4" / "integrations" / "aws_lambda.md"
    doc = parse_document(page.read_text(encoding="utf-8"), "integrations/aws_lambda.md")
    chunk = next(c for c in chunk_document(doc.title, doc.body, ChunkingConfig()) if "Most likely errors" in c.text)

    shown = [u.display for u in split_units(chunk.text) if u.answerable]

    assert "Most likely errors:" in shown
    assert any(d.startswith("Your OS or CPU architecture is mismatched") for d in shown)


@needs_shared
def test_the_quote_goes_on_from_where_the_direct_answer_stops():
    # The runbook's diagnosis (KubeNodeReadinessFlapping): once the direct answer shows the command, the quote
    # shows what follows it (the causes), not the command a second time.
    page = (CORPUS / "prometheus-runbooks" / "runbooks" / "kubernetes" / "KubeNodeReadinessFlapping.md").read_text()
    diagnosis = page[page.index("## Diagnosis"):page.index("## Mitigation")]
    units = split_units(diagnosis)
    command = next(i for i, u in enumerate(units) if u.display.startswith("Check the status of that node"))

    quoted = evidence_quote(diagnosis, units, command + 2, 450, said=frozenset({command, command + 1}))

    assert "kubectl get node" not in quoted and "Check the status" not in quoted
    assert quoted.startswith("The output should describe") and "firewall rules" in quoted


@needs_shared
def test_a_quote_leaves_out_a_sites_collapsible_markup():
    # The runbooks open a collapsible block with <details><summary>Full context</summary> (KubeVersionMismatch):
    # a quote read "Different semantic versions … running. Full context".
    page = (CORPUS / "prometheus-runbooks" / "runbooks" / "kubernetes" / "KubeVersionMismatch.md").read_text()
    meaning = page[page.index("## Meaning"):page.index("## Impact")]

    quoted = evidence_quote(meaning, split_units(meaning), 1, 450)

    assert "Different semantic versions" in quoted and "Full context" not in quoted


def test_a_refusal_names_what_it_searched(sample_kb):
    live = [d for d in sample_kb.index().documents.values() if d.get("stage", "active") == "active"]
    collections = sorted({d["collection"] for d in live})

    answer = sample_kb.ask("Who won the 2025 hackathon?")

    assert answer.refused
    assert f"I searched {', '.join(collections)}: {len(live):,} pages." in answer.text
    korean = sample_kb.ask("2025년 해커톤 우승 팀은 누구인가요?")
    assert korean.refused and f"검색한 범위: {', '.join(collections)} ({len(live):,}개 문서)." in korean.text


def test_an_answer_names_the_pages_its_direct_answer_came_from(sample_kb, tmp_path):
    """Issue 26 item 4: the store learns which cited pages the direct answer came from (their citations are
    ``answering``), so a vote on the reply judges them and not every page cited beside them."""
    import dataclasses

    from bot.records import record_answer
    from feedback import FeedbackStore

    answer = sample_kb.ask("How much does the Team plan cost per user?")
    cited = [c.doc_id for c in answer.citations]
    assert answer.answered_from and set(answer.answered_from) <= set(cited)
    assert answer.answered_from[0] == cited[0]  # the reply leads with it
    beside = dataclasses.replace(answer.citations[0], number=len(cited) + 1, doc_id="plans:sla.md")
    answer = dataclasses.replace(answer, citations=[*answer.citations, beside])  # a page cited beside it
    cited.append("plans:sla.md")
    with FeedbackStore.open(tmp_path / "minerva.sqlite") as store:
        record_answer(store, answer, source="cli")
        with store.snapshot() as conn:
            flags = dict(conn.exec_driver_sql("SELECT doc_id, answering FROM citations").fetchall())
    assert {d for d, on in flags.items() if on} == set(answer.answered_from)
    assert set(flags) == set(cited) and flags["plans:sla.md"] == 0
    assert sample_kb.ask("how do I bake a lasagna?").answered_from == []


def test_a_link_cut_by_the_chunks_end_leaves_no_open_bracket():
    """The handbook's SF-182 step 4 ends its chunk inside "[OLU Job Aid](…)": the direct answer ended "[OLU Job"."""
    from knowledge.answering import tidy

    assert tidy("save a PDF copy by following the instructions on page 5 of the [OLU Job") == (
        "save a PDF copy by following the instructions on page 5 of the…")
    assert tidy("see [the guide](https://x.example) and [TOC]") == "see [the guide](https://x.example) and [TOC]"


def test_a_direct_answer_never_ends_on_a_colon_whose_example_it_does_not_show():
    """Pydantic's error pages: "This error is raised when a cyclic reference is detected:" then a program;
    the reply ended on the colon and "[1]" (issue 23). The example stays in the quote."""
    text = ("This error is raised when a cyclic reference is detected:\n\n```python\nfrom pydantic import BaseModel\n\n"
            "class Node(BaseModel):\n    child: 'Node'\n```\n")
    passage = _passage(text, "pydantic:errors.md", 0.9, "Cyclic references")
    answer = compose_answer("what does the cyclic reference error mean?", [passage],
                            AnswerConfig(calibration=CalibrationConfig()))
    assert answer.direct_answer.startswith("This error is raised when a cyclic reference is detected. [1]")


def test_a_second_pages_quote_does_not_repeat_what_the_reply_already_shows():
    """Two runbooks share their checks word for word: the second page's quote repeated the first's (issue 23)."""
    shared = "- Check the status of the pods which belong to the replica sets under the statefulset."
    first = _passage(f"Diagnosis steps:\n\n{shared}\n- Check if disks attach in the pod's zone.",
                     "runbooks:mismatch.md", 0.95, "Diagnosis")
    second = _passage(f"Diagnosis steps:\n\n- Check statefulset via describe.\n{shared}\n- Check pod priority.",
                      "runbooks:rollout.md", 0.6, "Diagnosis")
    answer = compose_answer("how do I check a statefulset replicas mismatch?", [first, second],
                            AnswerConfig(calibration=CalibrationConfig()))
    shown = [answer.direct_answer, *answer.quotes]
    assert sum(text.count("belong to the replica sets") for text in shown) == 1


def test_a_rule_the_askers_own_amount_does_not_meet_neither_leads_nor_joins(sample_kb):
    """98.7 % uptime: the 25 % row applies; "Below 95.0% · Credit: 50%" and "at least 99.0% · 10%" answer other
    askers (the looser join of the refitted reader brought them in)."""
    answer = sample_kb.ask("what credit do customers get if Pro uptime was 98.7% last month?")

    assert "Credit: 25%" in answer.direct_answer
    assert "Credit: 50%" not in answer.direct_answer and "Credit: 10%" not in answer.direct_answer


def test_a_step_that_answers_brings_every_step_in_order_and_a_tables_best_row_leads(tmp_path, sample_settings,
                                                                                      embedder):
    """A newcomer's wiki: "How do I set up the VPN?" showed steps 2, 4 and 5 with 1 and 3 in a quote; "how long
    is parental leave" opened with the annual leave row of the leave table."""
    kb = written_kb(tmp_path, {
        "vpn.md": "# VPN setup\n\nAll remote work needs the Acme VPN. It uses WireGuard and your SSO account.\n\n"
        "## Steps\n\n1. Install the WireGuard client from the Self Service app.\n2. Open https://vpn.acme.example and sign in "
        "with your SSO account.\n3. Click Download profile and save the acme.conf file.\n4. In WireGuard, choose "
        "Import tunnel from file and pick acme.conf.\n5. Turn the tunnel on and approve the push on your phone.\n",
        "leave.md": "# Leave policy\n\n## Leave types\n\n| Type | Days per year | Paid |\n|---|---|---|\n"
        "| Annual leave | 25 | Yes |\n| Sick leave | 10 | Yes |\n| Parental leave | 16 weeks | Yes |\n"
        "| Unpaid leave | up to 30 | No |\n"}, sample_settings, embedder)

    steps = kb.ask("How do I set up the VPN?").direct_answer
    leave = kb.ask("How long is parental leave and is it paid?").direct_answer

    numbered = [line[:2] for line in steps.splitlines() if line[:1].isdigit()]
    assert numbered == ["1.", "2.", "3.", "4.", "5."], steps
    assert leave.splitlines()[0].removeprefix("• ").startswith("Type: Parental leave"), leave
    assert "Annual" not in leave  # the other rows are other cases (`_another_row`)


def test_numbered_steps_keep_their_numbers_in_the_direct_answer(tmp_path, sample_settings, embedder):
    """A newcomer's VPN page: its numbered steps came out as "•" bullets, the order lost."""
    kb = written_kb(tmp_path, {"vpn.md": (
        "# VPN\n\n## Set up the VPN\n\nTo set up the VPN on a new laptop:\n\n"
        "1. Install GlobalProtect from the Self Service app.\n2. Open GlobalProtect and enter vpn.acme.example as "
        "the portal.\n3. Sign in with your SSO account and approve the push on your phone.\n\n"
        "## Who to ask\n\nPost in #it-help when the portal does not answer.\n")}, sample_settings, embedder)

    answer = kb.ask("what are the steps to set up the vpn?")

    lines = [line.split(" [")[0] for line in answer.direct_answer.splitlines()]
    assert [line[:3] for line in lines if line[:1].isdigit()] == ["1. ", "2. ", "3. "], answer.direct_answer
    assert not any(line.startswith("• Install") for line in lines)


def test_the_plain_text_marks_quotes_apart_from_the_answer(sample_kb):
    answer = sample_kb.ask("How much does the Team plan cost per user?")

    quoted = answer.text.split("\n\n")[1:]
    assert answer.text.startswith(answer.direct_answer.splitlines()[0])
    assert quoted and all(line.startswith(">") for part in quoted for line in part.splitlines())


def test_a_quote_ending_in_a_code_block_keeps_its_fence_alone_on_its_line():
    """("``` [1]" in a newcomer's TLS reply: a fence followed by text no longer closes the block.)"""
    from knowledge.answering import plain_text
    from knowledge.types import Answer

    quote = "Renew it by hand:\n```\ncmctl renew my-cert\n```"
    answer = Answer(answer_id="b" * 32, question="q", refused=False, text="", direct_answer="Certificates renew. [1]",
                    quotes=[quote], citation_numbers=[1])

    assert plain_text(answer).endswith("> ```\n> [1]")


def test_a_korean_question_answered_from_a_korean_page_is_not_said_to_be_read_across_languages():
    """A newcomer's Korean question on the sample's Korean refund page was told "Korean questions may be less
    accurate" (the across-languages reason) though nothing was read across languages."""
    from knowledge.answering import _low_reason
    from knowledge.messages import message
    from knowledge.types import Answer

    def answer_from(text: str) -> Answer:
        page = _passage(text, "plans:refund.md", 0.5)
        return Answer(answer_id="c" * 32, question="환불 되나요?", refused=False, text="", language="ko",
                      passages=[page], reader={"margin": 5.0})

    korean = _low_reason(answer_from("결제일로부터 15일째부터 30일 이내에 해지하면 일할 계산하여 환불합니다."))
    english = _low_reason(answer_from("Annual plans are refunded pro rata within 30 days of payment."))

    assert korean != message("answer.reason_across_languages", "ko")
    assert english == message("answer.reason_across_languages", "ko")


@needs_shared
def test_two_items_of_a_list_bring_the_whole_list():
    """A Japanese asker's "what must the doctor's note say?" showed two of the four things a medical note must
    include, under its lead-in: they read as if they were all of it."""
    text = _section(HANDBOOK / "travel-and-leave" / "paid-parental-leave.md",
                    "#### Birth-supporting documentation", "#### Placement-supporting documentation")
    passage = _real_passage(text, "handbook:travel-and-leave/paid-parental-leave.md", "Paid parental leave",
                            ("Birth-supporting documentation",), {"Date of birth": 0.62, "Duration": 0.6})

    answer = compose_answer("what does the medical note for parental leave need to include?", [passage],
                            AnswerConfig(calibration=CalibrationConfig()),
                            term_weights={"medic": 3.9, "note": 3.1, "parent": 2.9, "leav": 1.6, "need": 1.8,
                                          "includ": 2.2})

    lines = [line.split(" [")[0] for line in answer.direct_answer.splitlines()]
    at = next(k for k, line in enumerate(lines) if line.endswith("The medical note should include:"))
    assert [line.split(" -")[0] for line in lines[at + 1:at + 5]] == [
        "• Date of birth", "• Diagnosis", "• Prognosis", "• Duration"], answer.direct_answer


def test_units_of_two_sections_do_not_run_on_as_one_paragraph(tmp_path, sample_settings, embedder):
    """A newcomer's runbook: the Escalation sentence ran on into the Restarting section's lead-in, as if one
    paragraph said both."""
    kb = written_kb(tmp_path, {"checkout.md": (
        "# Checkout service runbook\n\nThe checkout service takes payments for the web shop.\n\n"
        "## Restarting the service\n\nRun these commands from a bastion host:\n\n```bash\n"
        "kubectl -n checkout rollout restart deployment/checkout\n```\n\n"
        "A restart drops in-flight payments; announce it in #payments first.\n\n"
        "## Escalation\n\nIf the service is still failing after a restart, page the payments on-call through "
        "PagerDuty and post in #incident.\n")}, sample_settings, embedder)

    direct = kb.ask("How do I restart the checkout service?").direct_answer

    assert "kubectl -n checkout rollout restart deployment/checkout" in direct
    for line in direct.splitlines():
        assert not ("#incident" in line and "bastion" in line), direct


@pytest.mark.parametrize("question, asks", [
    ("환불은 며칠 안에 신청해야 하나요?", True),        # "how many days": one word, not 몇 + 일
    ("休暇は何年まで繰り越せますか？", True),
    ("研修はどのくらいかかりますか？", True),
    ("환불은 어떻게 신청하나요?", False),
    ("How do I request a refund?", False),
])
def test_a_question_asks_for_an_amount_in_each_language(question, asks):
    from knowledge.answering import _Reading

    assert _Reading.of(question).asks_amount is asks


def test_a_quoted_example_the_chunk_cut_keeps_its_closing_fence():
    """A Pydantic example cut at the chunk's end was quoted without its closing fence: Slack showed the fence and
    the code as text ("for error in e.errors():" read as prose)."""
    from knowledge.answering import _render
    from knowledge.sentences import CODE, split_units

    text = "Translate them:\n\n```python\nfor error in e.errors():\n    error['msg'] = 'x'\n"
    code = next(u for u in split_units(text) if u.kind == CODE)

    assert _render(text, code).splitlines()[-1] == "```"


def test_a_quote_goes_on_past_a_tab_its_lead_in_introduces():
    """Pydantic's install page: "To install optional dependencies along with Pydantic:" was quoted alone, its
    command under the tab "pip" cut off as another section."""
    from knowledge.answering import evidence_quote
    from knowledge.sentences import split_units

    text = ('To install optional dependencies along with Pydantic:\n\n=== "pip"\n\n    ```bash\n'
            "    pip install 'pydantic[email]'\n    ```\n\n=== \"uv\"\n\n    ```bash\n    uv add 'pydantic[email]'\n"
            "    ```\n")
    quote = evidence_quote(text, list(split_units(text)), 0, 400)

    assert "pip install 'pydantic[email]'" in quote and "uv add" not in quote
    assert "\n```bash\n" in quote  # dedented: Slack reads a fence only at a line's start


def test_a_direct_answer_keeps_the_web_link_that_is_the_answer():
    """A newcomer's page: "Ask your manager for more via the [printing quota form](https://…)." was answered without
    the form's address, in Slack and in the terminal; a relative link stays a label."""
    from bot.cli.render_text import plain
    from bot.slack.blocks import to_mrkdwn

    page = _passage("Each person can print 200 pages a month. Ask your manager for more via the [printing quota "
                    "form](https://forms.example.com/print-quota). See the [printer page](./printers.md) for locations.",
                    "it:print.md", 0.9, "Printing")
    direct = compose_answer("how do I get more print quota?", [page], AnswerConfig(calibration=CalibrationConfig())
                            ).direct_answer

    assert "[printing quota form](https://forms.example.com/print-quota)" in direct
    assert "<https://forms.example.com/print-quota|printing quota form>" in to_mrkdwn(direct)
    assert "printing quota form (https://forms.example.com/print-quota)" in plain(direct)
    assert "./printers.md" not in to_mrkdwn(direct) + plain(direct)


def test_japanese_sentences_of_a_direct_answer_run_on_without_a_space(sample_kb):
    """A newcomer's Japanese expense page: "認められません。 普通車指定席を…" — Japanese puts no space after 。."""
    answer = sample_kb.ask("Teamプランのサポートって土日もやってる？")
    shown = "\n".join([answer.direct_answer, *answer.quotes])

    assert "。 " not in shown.replace("。 [", "").replace("。 ```", "")


RUNBOOK_WITH_A_COMMANDS_ONLY_SECTION = """---
title: On-call Runbook
---
# On-call Runbook

The primary on-call engineer must acknowledge a page within **15 minutes**.

## Restarting the API

```bash
kubectl -n prod rollout restart deployment/api
kubectl -n prod rollout status deployment/api
```

## Handover

On-call shifts change every Monday at 10:00 KST. Write a handover note in #oncall before you hand over.
"""


def test_a_section_made_only_of_commands_answers_with_its_heading_as_lead_in(tmp_path, sample_settings, embedder):
    """A newcomer's runbook: "How do I restart the API?" was answered with the Handover section at low confidence;
    the "Restarting the API" section holds only its commands, so no sentence of it could be found or shown."""
    kb = written_kb(tmp_path, {"oncall-runbook.md": RUNBOOK_WITH_A_COMMANDS_ONLY_SECTION}, sample_settings, embedder)

    answer = kb.ask("How do I restart the API?")

    assert answer.direct_answer.startswith("Restarting the API:\n```\nkubectl -n prod rollout restart deployment/api")
    assert answer.citations[0].heading.endswith("Restarting the API")


def test_a_quoted_sentence_leading_to_a_long_example_shows_the_examples_first_lines():
    """Pydantic's forward-annotations page: "…, you can catch and handle the raised `ValidationError` …:" was quoted
    with its long example left out whole, the quote ending on the colon."""
    text = ("You can catch and handle the raised error:\n\n```python\n" + "\n".join(f"line_{n} = {n}" for n in range(80))
            + "\n```\n")
    units = split_units(text)

    quote = evidence_quote(text, units, 0, 300)

    assert quote.startswith("You can catch and handle the raised error:\n```python\nline_0 = 0\n")
    assert quote.endswith("\n…\n```") and len(quote) <= 300


FAQ_PAGE = """---
title: HR FAQ
---
# HR FAQ

**Can I carry over unused vacation days?**
Yes, up to 5 days. They must be used before March 31 of the next year.

**When is payday?**
Salaries are paid on the 25th of each month. If the 25th is a weekend, you are paid on the Friday before.

**Who do I tell if I am sick?**
Tell your manager on Slack before 10:00 and log the sick day in the HR portal.

**Can I bring my dog to the office?**
Dogs are welcome in the Berlin office on Fridays only. They are not allowed in the Seoul office.

**How do I change my bank account?**
Update it in the HR portal under *Profile → Payment*. Changes after the 15th apply from the next month.
"""


def test_a_faq_entry_written_as_a_bold_question_is_a_section_of_its_own(tmp_path, sample_settings, embedder):
    """A newcomer's FAQ ("**When is payday?**" over its answer): the questions were read as sentences of one
    paragraph, and the reply ran "When is payday? Salaries are paid … They must be used before March 31 … Who do I
    tell if I am sick? …"."""
    units = split_units(FAQ_PAGE.split("---", 2)[2])
    assert [(u.kind, u.display) for u in units[1:4]] == [
        ("heading", "Can I carry over unused vacation days?"), ("sentence", "Yes, up to 5 days."),
        ("sentence", "They must be used before March 31 of the next year.")]

    answer = written_kb(tmp_path, {"faq.md": FAQ_PAGE}, sample_settings, embedder).ask("When is payday?")

    assert "25th of each month" in answer.direct_answer.split("\n")[0]
    assert "When is payday?" not in answer.direct_answer and "Who do I tell" not in answer.direct_answer
    assert "March 31" not in answer.direct_answer and "Tell your manager" not in answer.direct_answer  # other entries'
    assert answer.citations[0].heading == "When is payday?"
    # the page has no date of its own: its citation says the date is its file's, from the index to the reply
    assert answer.citations[0].updated_text() == "file changed today"


RUNBOOK_STEPS = """---
title: On-call Runbook
---
# On-call Runbook

## API latency high

1. Check the dashboard "API overview" in Grafana.
2. Look at the pods:

   ```bash
   kubectl -n prod get pods -l app=api
   ```

3. If a pod uses more than 90% CPU, scale the deployment:

   ```bash
   kubectl -n prod scale deployment/api --replicas=6
   ```

4. Post a status update in #incidents every 30 minutes.
"""


def test_steps_keep_their_numbers_past_a_steps_own_code_block(tmp_path, sample_settings, embedder):
    """A newcomer's runbook: steps 3 and 4, after a command indented under step 2, became "•" bullets."""
    answer = written_kb(tmp_path, {"oncall.md": RUNBOOK_STEPS}, sample_settings, embedder).ask(
        "How do I scale the API deployment when latency is high?")

    assert "\n3. If a pod uses more than 90% CPU" in answer.direct_answer, answer.direct_answer
    assert "\n4. Post a status update" in answer.direct_answer
    assert "• " not in answer.direct_answer


VPN_STEPS = """---
title: VPN Setup
---
# VPN Setup

All access to internal tools goes through the WireGuard VPN.

## Install

1. Install the WireGuard client from the vendor's site.
2. Open the IT portal and click **Request VPN profile**.
3. Download the `acme-wg.conf` file you receive by email.
4. Import the file in WireGuard with **Import tunnel(s) from file**.
5. Click **Activate**. Your status should say "Active" within 10 seconds.

## Troubleshooting

If the tunnel does not come up, check that your clock is correct and restart the client.

The VPN profile expires after 180 days; request a new one from the IT portal.
"""


def test_two_steps_of_one_list_bring_every_step_whatever_leads(tmp_path, sample_settings, embedder):
    """A newcomer's Korean VPN question: led by the expiry sentence, the reply showed steps 1, 2, 4 and 5."""
    answer = written_kb(tmp_path, {"vpn.md": VPN_STEPS}, sample_settings, embedder).ask("VPN은 어떻게 연결하나요?")

    steps = [line.split(".")[0] for line in answer.direct_answer.splitlines() if line[:1].isdigit()]
    assert steps == ["1", "2", "3", "4", "5"], answer.direct_answer
    # a how-to is answered by its steps: they lead, not the expiry sentence that outscored them
    assert answer.direct_answer.startswith("1. Install the WireGuard client")


DISK_STEPS = """---
title: Disk Almost Full
---
# Disk Almost Full

This alert fires when a node's root filesystem is more than 90% used for 10 minutes.

## What to do

1. Find the node from the alert labels and open a shell on it:

   ```bash
   ssh ops@$NODE
   ```

2. See which directories are biggest:

   ```bash
   sudo du -xh / --max-depth=2 | sort -h | tail -20
   ```

3. Clean the container images that are no longer used:

   ```bash
   sudo crictl rmi --prune
   ```

4. If usage is still above 85%, cordon the node and open a ticket for the platform team.

## Who to call

If the disk fills up completely, page the platform on-call through PagerDuty.
"""


def test_every_step_comes_when_steps_have_their_own_commands(tmp_path, sample_settings, embedder):
    """A newcomer's runbook: the list of steps was cut at each step's code block, and the reply showed steps 2–5."""
    answer = written_kb(tmp_path, {"disk.md": DISK_STEPS}, sample_settings, embedder).ask(
        "DiskAlmostFull keeps firing, what do I do?")

    steps = [line.split(".")[0] for line in answer.direct_answer.splitlines() if line[:1].isdigit()]
    assert steps == ["1", "2", "3", "4"], answer.direct_answer
    assert "ssh ops@$NODE" in answer.direct_answer
    assert answer.direct_answer.startswith("1. Find the node")  # "what do I do": the steps lead


def test_another_row_of_the_answering_table_joins_only_for_a_case_the_question_names(tmp_path, sample_settings,
                                                                                      embedder):
    """A newcomer's "Which laptop do engineers get?" showed every role's row under the Engineering one."""
    kb = written_kb(tmp_path, {"equipment.md": (
        "# Laptops\n\nEveryone gets a laptop on the first day. Which one depends on the role:\n\n"
        "| Role | Laptop | Replacement cycle |\n|---|---|---|\n| Engineering | MacBook Pro 14, 32 GB | 3 years |\n"
        "| Design | MacBook Pro 16, 48 GB | 3 years |\n| Sales | MacBook Air 13, 16 GB | 4 years |\n"
        "| Support | ThinkPad T14, 16 GB | 4 years |\n")}, sample_settings, embedder)

    one = kb.ask("Which laptop do engineers get?").direct_answer
    two = kb.ask("Which laptops do engineers and designers get?").direct_answer

    assert "MacBook Pro 14" in one.splitlines()[0]
    assert "Sales" not in one and "Support" not in one and "Design" not in one
    assert "MacBook Pro 14" in two and "MacBook Pro 16" in two


def test_a_faqs_first_answer_is_no_page_opening(tmp_path, sample_settings, embedder):
    """A newcomer's English FAQ opens with "**How do I connect to the VPN?**" and its answer: the reader took that
    answer for the page's opening (a weak feature) and answered "VPN은 어떻게 연결하나요?" with the password entry."""
    kb = written_kb(tmp_path, {"faq.md": (
        "# IT FAQ\n\n**How do I connect to the VPN?**\nInstall WireGuard from the IT shop, import the profile you "
        "received by email and switch on the tunnel.\n\n**I forgot my password. What now?**\nReset it yourself on "
        "the identity portal. If your account is locked, ask in #it-help.\n\n**Which printer should I use?**\n"
        "The printer on the third floor; add it from the Self Service app.\n")}, sample_settings, embedder)

    answer = kb.ask("VPN은 어떻게 연결하나요?")

    assert answer.direct_answer.startswith("Install WireGuard"), answer.direct_answer


def test_a_sentence_that_leans_on_an_unshown_one_does_not_join_the_answer(tmp_path, sample_settings, embedder):
    """A newcomer's staging answer ended "Then post the reason in #deploys.", the rollback section's last step
    without the rollback before it: it read as a sentence cut off."""
    kb = written_kb(tmp_path, {"deploy.md": (
        "# Deploying\n\nDeploys happen from the main branch only.\n\n## Deploy to staging\n\nRun the deploy "
        "script with the staging target:\n\n```bash\n./scripts/deploy.sh --env staging\n```\n\n## Roll back\n\n"
        "To roll back production to the previous release, run:\n\n```bash\nkubectl rollout undo "
        "deployment/web\n```\n\nThen post the reason in #deploys.\n")}, sample_settings, embedder)

    answer = kb.ask("How do I deploy to staging?")

    assert "deploy.sh --env staging" in answer.direct_answer
    assert "Then post the reason" not in answer.direct_answer, answer.direct_answer
