"""One sentence splitter for units, values, identifiers, grounding and page cleaning
(`knowledge.sentences.sentences_of`, issue 23)."""

from __future__ import annotations

import pytest

from knowledge.grounding import split_sentences
from knowledge.identifiers import extract_identifiers
from knowledge.parsing import variable_sentences
from knowledge.sentences import CODE, ITEM, SENTENCE, sentences_of, split_units
from knowledge.values import extract_values, sentences
from tests.conftest import CORPUS, needs_shared


@pytest.mark.parametrize("text, expected", [
    ("Use a tool, e.g. Zoom. It works.", ["Use a tool, e.g. Zoom.", "It works."]),  # cut after "e.g." before
    ("Retries back off, e.g. 1 s then 2 s. Next.", ["Retries back off, e.g. 1 s then 2 s.", "Next."]),
    ("Pick one, i.e. Tock. Then file it.", ["Pick one, i.e. Tock.", "Then file it."]),
    ("Install v2.13.4 first. Then run it.", ["Install v2.13.4 first.", "Then run it."]),
    ("再試行は3回です。次です！", ["再試行は3回です。", "次です！"]),
])
def test_sentences_end_where_a_reader_says_they_do(text, expected):
    assert sentences_of(text) == expected


def test_grounding_and_page_cleaning_split_as_units_do():
    assert [s for s, _ in split_sentences("Use a tool, e.g. Zoom [1]. It works.")] == [
        "Use a tool, e.g. Zoom [1].", "It works."]
    assert variable_sentences("Mail us, e.g. Support. Or mail {{ site.email }} today.") == [
        "Or mail {{ site.email }} today."]


@pytest.mark.parametrize("text, expected", [
    ("Use a chat tool, e.g. Slack, for quick questions. Email takes 2 days.",
     ["Use a chat tool, e.g. Slack, for quick questions.", "Email takes 2 days."]),
    ("Pick the shorter one, i.e. Tock. It takes 5 minutes.", ["Pick the shorter one, i.e. Tock.", "It takes 5 minutes."]),
    ("Compare Zoom vs. Meet before you buy. Both cost $10 per user.",
     ["Compare Zoom vs. Meet before you buy.", "Both cost $10 per user."]),
    ("Approval takes 2.5 days on average. Then book travel.", ["Approval takes 2.5 days on average.", "Then book travel."]),
    ("Set the timeout in config.yaml to 30 seconds. Then restart the service.",
     ["Set the timeout in config.yaml to 30 seconds.", "Then restart the service."]),
    ("Upgrade to v2.11 before the freeze. Older versions stop working in 30 days.",
     ["Upgrade to v2.11 before the freeze.", "Older versions stop working in 30 days."]),
    ("신청은 30일 이내에 해야 합니다. 승인에는 5영업일이 걸립니다.", ["신청은 30일 이내에 해야 합니다.", "승인에는 5영업일이 걸립니다."]),
    ("申請は30日以内です。承認には5営業日かかります！", ["申請は30日以内です。", "承認には5営業日かかります！"]),
])
def test_values_read_the_sentences_units_read(text, expected):
    """`values.sentences` splits a paragraph with `sentences_of` (issue 23: one splitter): its own split cut after
    "e.g." before a capital and never split Korean or Japanese text."""
    assert [s for s, _ in sentences(text)] == expected
    assert [s for s, _ in sentences(text)] == sentences_of(text)


def test_values_keep_list_items_and_table_cells_as_their_own_sentences():
    text = ("Requests time out after 30 seconds.\n- Retry 3 times.\n- Wait 10 minutes, e.g. before a deploy.\n\n"
            "| Plan | Price |\n|---|---|\n| Pro | $49 |")

    assert sentences(text) == [("Requests time out after 30 seconds.", ""), ("Retry 3 times.", ""),
                               ("Wait 10 minutes, e.g. before a deploy.", ""), ("Pro, Price: $49", "pro")]


def test_a_value_keeps_its_whole_sentence_and_only_its_own_context():
    """The handbook's travel FAQ: the old split cut "(e.g." off the sentence of "$25"; a Japanese value's context
    took the words of the sentence after it."""
    [fee] = extract_values('Any expense under $25 needs a comment (e.g. "from airport to office"). Keep receipts.')
    first, second = extract_values("申請は30日以内です。承認には5営業日かかります。")

    assert fee.sentence == 'Any expense under $25 needs a comment (e.g. "from airport to office").'
    assert first.sentence == "申請は30日以内です。" and second.sentence == "承認には5営業日かかります。"
    assert "承認" not in first.context and "申請" not in second.context


def test_identifiers_read_sentences_as_values_do():
    """`knowledge.identifiers` splits with the same `sentences_of`: "e.g." does not cut a channel's sentence."""
    [channel] = extract_identifiers("For tools, e.g. Zoom, ask in #admins-zoom. Then wait a day.")

    assert channel.statement == "For tools, e.g. Zoom, ask in #ID."


@pytest.mark.parametrize(("text", "expected"), [
    # the handbook's leave page: "5 U.S.C. 6323" is a citation of the law, not two sentences
    ("Under 5 U.S.C. 6323 (a) you get 15 days. Ask HR.", ["Under 5 U.S.C. 6323 (a) you get 15 days.", "Ask HR."]),
    ("We moved to Washington, D.C. Then we left.", ["We moved to Washington, D.C.", "Then we left."]),
    # the parental-leave page's "(how long … 6 weeks? 8 weeks?)": no end inside a bracket that closes
    ("Duration (how long? 6 weeks? 8 weeks?) of care. Then more.",
     ["Duration (how long? 6 weeks? 8 weeks?) of care.", "Then more."]),
    ("A (never closed. Then. More.", ["A (never closed.", "Then.", "More."]),
])
def test_no_sentence_end_inside_a_bracket_or_after_an_initialism_before_a_number(text, expected):
    assert sentences_of(text) == expected


@needs_shared
def test_a_lead_in_to_a_short_command_block_is_embedded_with_its_commands():
    """"Check the number of pods on a given node by running:" says what only its kubectl line says; a newcomer's
    "Run these commands from a bastion host:" lost to an Escalation sentence (issue 22 item 5)."""
    from knowledge.sentences import embedding_inputs

    page = CORPUS / "prometheus-runbooks" / "runbooks" / "kubernetes" / "KubeletTooManyPods.md"
    text = page.read_text(encoding="utf-8")
    inputs = [t for u, t in embedding_inputs(text) if u.display.startswith("Check the number of pods")]

    assert len(inputs) == 2 and inputs[0].endswith("by running:")
    assert "kubectl get pods --all-namespaces --field-selector spec.nodeName=<node>" in inputs[1]
    assert "```" not in inputs[1]


def test_a_bare_yes_or_no_leads_the_sentence_after_it():
    """A newcomer's FAQ answered "Does my badge work at the Munich office?" with "No. Ask reception in Munich …":
    alone, "No." was too short to be a unit and the answer lost it."""
    units = split_units("**Does my badge work in Munich?**\nNo. Ask reception in Munich for a day pass.\n")

    assert [u.display for u in units if u.answerable] == ["No. Ask reception in Munich for a day pass."]
    assert sentences_of("いいえ。受付で一日パスをもらってください。") == ["いいえ。受付で一日パスをもらってください。"]
    assert sentences_of("There is no. 5 bus. Fine.") == ["There is no.", "5 bus.", "Fine."]
